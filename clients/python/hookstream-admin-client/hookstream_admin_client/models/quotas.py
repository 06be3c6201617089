from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.quota_limit import QuotaLimit


T = TypeVar("T", bound="Quotas")


@_attrs_define
class Quotas:
    """per-partner quotas; over one a request answers 429 quota_exceeded (replay_deliveries: 422 replay_too_large;
    deliveries_in_flight and deliveries_per_sec hold back the partner's deliveries in the sender;
    replay_deliveries_per_sec paces the partner's replay jobs)

        Attributes:
            endpoints (QuotaLimit):
            replay_jobs (QuotaLimit):
            test_events_per_minute (QuotaLimit):
            replays_per_minute (QuotaLimit):
            replay_deliveries (QuotaLimit):
            deliveries_in_flight (QuotaLimit):
            deliveries_per_sec (QuotaLimit):
            replay_deliveries_per_sec (QuotaLimit):
    """

    endpoints: QuotaLimit
    replay_jobs: QuotaLimit
    test_events_per_minute: QuotaLimit
    replays_per_minute: QuotaLimit
    replay_deliveries: QuotaLimit
    deliveries_in_flight: QuotaLimit
    deliveries_per_sec: QuotaLimit
    replay_deliveries_per_sec: QuotaLimit
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        endpoints = self.endpoints.to_dict()

        replay_jobs = self.replay_jobs.to_dict()

        test_events_per_minute = self.test_events_per_minute.to_dict()

        replays_per_minute = self.replays_per_minute.to_dict()

        replay_deliveries = self.replay_deliveries.to_dict()

        deliveries_in_flight = self.deliveries_in_flight.to_dict()

        deliveries_per_sec = self.deliveries_per_sec.to_dict()

        replay_deliveries_per_sec = self.replay_deliveries_per_sec.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "endpoints": endpoints,
                "replay_jobs": replay_jobs,
                "test_events_per_minute": test_events_per_minute,
                "replays_per_minute": replays_per_minute,
                "replay_deliveries": replay_deliveries,
                "deliveries_in_flight": deliveries_in_flight,
                "deliveries_per_sec": deliveries_per_sec,
                "replay_deliveries_per_sec": replay_deliveries_per_sec,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quota_limit import QuotaLimit  # noqa: PLC0415

        d = dict(src_dict)
        endpoints = QuotaLimit.from_dict(d.pop("endpoints"))

        replay_jobs = QuotaLimit.from_dict(d.pop("replay_jobs"))

        test_events_per_minute = QuotaLimit.from_dict(d.pop("test_events_per_minute"))

        replays_per_minute = QuotaLimit.from_dict(d.pop("replays_per_minute"))

        replay_deliveries = QuotaLimit.from_dict(d.pop("replay_deliveries"))

        deliveries_in_flight = QuotaLimit.from_dict(d.pop("deliveries_in_flight"))

        deliveries_per_sec = QuotaLimit.from_dict(d.pop("deliveries_per_sec"))

        replay_deliveries_per_sec = QuotaLimit.from_dict(d.pop("replay_deliveries_per_sec"))

        quotas = cls(
            endpoints=endpoints,
            replay_jobs=replay_jobs,
            test_events_per_minute=test_events_per_minute,
            replays_per_minute=replays_per_minute,
            replay_deliveries=replay_deliveries,
            deliveries_in_flight=deliveries_in_flight,
            deliveries_per_sec=deliveries_per_sec,
            replay_deliveries_per_sec=replay_deliveries_per_sec,
        )

        quotas.additional_properties = d
        return quotas

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
