from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_state import DeliveryState

if TYPE_CHECKING:
    from ..models.attempt import Attempt


T = TypeVar("T", bound="DeliveryDetail")


@_attrs_define
class DeliveryDetail:
    """
    Attributes:
        delivery_id (str):
        event_id (str):
        endpoint_id (str):
        partner_id (str):
        event_type (str):
        state (DeliveryState):
        attempt_count (int):
        next_attempt_at (datetime.datetime | None): when the next attempt is due: null once finished and while the
            endpoint is disabled or deleted; at least the next probe while its circuit is open; for a pending delivery, its
            creation (due now) unless later Example: 2026-01-02T15:04:05.123456Z.
        last_status (int | None):
        last_latency_ms (int | None): the last attempt's latency in whole milliseconds (rounded down: 0 for one under a
            millisecond); null with no attempt Example: 0.
        last_latency_us (int | None): the last attempt's latency in microseconds; null with no attempt, and for a
            delivery last attempted before the history kept microseconds (last_latency_ms holds its latency then) Example:
            850.
        last_error_category (None | str):
        created_at (datetime.datetime):  Example: 2026-01-02T15:04:05.123456Z.
        updated_at (datetime.datetime):  Example: 2026-01-02T15:04:05.123456Z.
        attempts (list[Attempt]):
    """

    delivery_id: str
    event_id: str
    endpoint_id: str
    partner_id: str
    event_type: str
    state: DeliveryState
    attempt_count: int
    next_attempt_at: datetime.datetime | None
    last_status: int | None
    last_latency_ms: int | None
    last_latency_us: int | None
    last_error_category: None | str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    attempts: list[Attempt]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        delivery_id = self.delivery_id

        event_id = self.event_id

        endpoint_id = self.endpoint_id

        partner_id = self.partner_id

        event_type = self.event_type

        state = self.state.value

        attempt_count = self.attempt_count

        next_attempt_at: None | str
        if isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at

        last_status: int | None
        last_status = self.last_status

        last_latency_ms: int | None
        last_latency_ms = self.last_latency_ms

        last_latency_us: int | None
        last_latency_us = self.last_latency_us

        last_error_category: None | str
        last_error_category = self.last_error_category

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        attempts = []
        for attempts_item_data in self.attempts:
            attempts_item = attempts_item_data.to_dict()
            attempts.append(attempts_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "delivery_id": delivery_id,
                "event_id": event_id,
                "endpoint_id": endpoint_id,
                "partner_id": partner_id,
                "event_type": event_type,
                "state": state,
                "attempt_count": attempt_count,
                "next_attempt_at": next_attempt_at,
                "last_status": last_status,
                "last_latency_ms": last_latency_ms,
                "last_latency_us": last_latency_us,
                "last_error_category": last_error_category,
                "created_at": created_at,
                "updated_at": updated_at,
                "attempts": attempts,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt import Attempt  # noqa: PLC0415

        d = dict(src_dict)
        delivery_id = d.pop("delivery_id")

        event_id = d.pop("event_id")

        endpoint_id = d.pop("endpoint_id")

        partner_id = d.pop("partner_id")

        event_type = d.pop("event_type")

        state = DeliveryState(d.pop("state"))

        attempt_count = d.pop("attempt_count")

        def _parse_next_attempt_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = datetime.datetime.fromisoformat(data)

                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at"))

        def _parse_last_status(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_status = _parse_last_status(d.pop("last_status"))

        def _parse_last_latency_ms(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_latency_ms = _parse_last_latency_ms(d.pop("last_latency_ms"))

        def _parse_last_latency_us(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_latency_us = _parse_last_latency_us(d.pop("last_latency_us"))

        def _parse_last_error_category(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_error_category = _parse_last_error_category(d.pop("last_error_category"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        attempts = []
        _attempts = d.pop("attempts")
        for attempts_item_data in _attempts:
            attempts_item = Attempt.from_dict(attempts_item_data)

            attempts.append(attempts_item)

        delivery_detail = cls(
            delivery_id=delivery_id,
            event_id=event_id,
            endpoint_id=endpoint_id,
            partner_id=partner_id,
            event_type=event_type,
            state=state,
            attempt_count=attempt_count,
            next_attempt_at=next_attempt_at,
            last_status=last_status,
            last_latency_ms=last_latency_ms,
            last_latency_us=last_latency_us,
            last_error_category=last_error_category,
            created_at=created_at,
            updated_at=updated_at,
            attempts=attempts,
        )

        delivery_detail.additional_properties = d
        return delivery_detail

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
