from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.retry_limits_client_errors import RetryLimitsClientErrors

if TYPE_CHECKING:
    from ..models.retry_limits_bounds import RetryLimitsBounds


T = TypeVar("T", bound="RetryLimits")


@_attrs_define
class RetryLimits:
    """the deployment's retry policy, which endpoints without a retry_policy follow, and the bounds of endpoint policies

    Attributes:
        schedule_seconds (list[float]): HOOKSTREAM_RETRY_SCHEDULE: the wait after each failed attempt
        attempts (int): attempts in all under the deployment's schedule
        jitter (float): every delay is spread by ± this share of itself
        client_errors (RetryLimitsClientErrors): HOOKSTREAM_RETRY_CLIENT_ERRORS: what a 4xx other than 408, 410, 425 and
            429 does
        tiers (list[str]): the retry tier topics (<prefix>.retry.<tier>) every policy's retries wait in
        bounds (RetryLimitsBounds): what an endpoint's retry_policy may ask for (HOOKSTREAM_RETRY_MIN_DELAY, _MAX_DELAY,
            _MAX_ATTEMPTS)
    """

    schedule_seconds: list[float]
    attempts: int
    jitter: float
    client_errors: RetryLimitsClientErrors
    tiers: list[str]
    bounds: RetryLimitsBounds
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        schedule_seconds = self.schedule_seconds

        attempts = self.attempts

        jitter = self.jitter

        client_errors = self.client_errors.value

        tiers = self.tiers

        bounds = self.bounds.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "schedule_seconds": schedule_seconds,
                "attempts": attempts,
                "jitter": jitter,
                "client_errors": client_errors,
                "tiers": tiers,
                "bounds": bounds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.retry_limits_bounds import RetryLimitsBounds  # noqa: PLC0415

        d = dict(src_dict)
        schedule_seconds = cast(list[float], d.pop("schedule_seconds"))

        attempts = d.pop("attempts")

        jitter = d.pop("jitter")

        client_errors = RetryLimitsClientErrors(d.pop("client_errors"))

        tiers = cast(list[str], d.pop("tiers"))

        bounds = RetryLimitsBounds.from_dict(d.pop("bounds"))

        retry_limits = cls(
            schedule_seconds=schedule_seconds,
            attempts=attempts,
            jitter=jitter,
            client_errors=client_errors,
            tiers=tiers,
            bounds=bounds,
        )

        retry_limits.additional_properties = d
        return retry_limits

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
