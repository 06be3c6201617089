from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RetryLimitsBounds")


@_attrs_define
class RetryLimitsBounds:
    """what an endpoint's retry_policy may ask for (HOOKSTREAM_RETRY_MIN_DELAY, _MAX_DELAY, _MAX_ATTEMPTS)

    Attributes:
        min_delay_seconds (float):
        max_delay_seconds (float):
        max_attempts (int):
    """

    min_delay_seconds: float
    max_delay_seconds: float
    max_attempts: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        min_delay_seconds = self.min_delay_seconds

        max_delay_seconds = self.max_delay_seconds

        max_attempts = self.max_attempts

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "min_delay_seconds": min_delay_seconds,
                "max_delay_seconds": max_delay_seconds,
                "max_attempts": max_attempts,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        min_delay_seconds = d.pop("min_delay_seconds")

        max_delay_seconds = d.pop("max_delay_seconds")

        max_attempts = d.pop("max_attempts")

        retry_limits_bounds = cls(
            min_delay_seconds=min_delay_seconds,
            max_delay_seconds=max_delay_seconds,
            max_attempts=max_attempts,
        )

        retry_limits_bounds.additional_properties = d
        return retry_limits_bounds

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
