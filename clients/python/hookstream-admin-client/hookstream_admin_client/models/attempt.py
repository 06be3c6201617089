from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.attempt_trigger import AttemptTrigger
from ..types import UNSET, Unset

T = TypeVar("T", bound="Attempt")


@_attrs_define
class Attempt:
    """
    Attributes:
        attempt_no (int):
        trigger (AttemptTrigger):
        started_at (datetime.datetime):  Example: 2026-01-02T15:04:05.123456Z.
        status (int | None | Unset):
        latency_ms (int | None | Unset): the latency in whole milliseconds (rounded down: 0 for an attempt under a
            millisecond) Example: 0.
        latency_us (int | None | Unset): the latency in microseconds, from started_at until the response was read or the
            request failed (0 for an attempt not sent); null for an attempt recorded before the history kept microseconds
            (latency_ms holds its latency then) Example: 850.
        error_category (None | str | Unset):
        response_excerpt (str | Unset):
        next_attempt_at (datetime.datetime | None | Unset):  Example: 2026-01-02T15:04:05.123456Z.
        order_broken (bool | Unset): true on the final failure of a strict ordered endpoint's head: the endpoint's later
            events went on without it (endpoint.order_broken)
    """

    attempt_no: int
    trigger: AttemptTrigger
    started_at: datetime.datetime
    status: int | None | Unset = UNSET
    latency_ms: int | None | Unset = UNSET
    latency_us: int | None | Unset = UNSET
    error_category: None | str | Unset = UNSET
    response_excerpt: str | Unset = UNSET
    next_attempt_at: datetime.datetime | None | Unset = UNSET
    order_broken: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt_no = self.attempt_no

        trigger = self.trigger.value

        started_at = self.started_at.isoformat()

        status: int | None | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        else:
            status = self.status

        latency_ms: int | None | Unset
        if isinstance(self.latency_ms, Unset):
            latency_ms = UNSET
        else:
            latency_ms = self.latency_ms

        latency_us: int | None | Unset
        if isinstance(self.latency_us, Unset):
            latency_us = UNSET
        else:
            latency_us = self.latency_us

        error_category: None | str | Unset
        if isinstance(self.error_category, Unset):
            error_category = UNSET
        else:
            error_category = self.error_category

        response_excerpt = self.response_excerpt

        next_attempt_at: None | str | Unset
        if isinstance(self.next_attempt_at, Unset):
            next_attempt_at = UNSET
        elif isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at

        order_broken = self.order_broken

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt_no": attempt_no,
                "trigger": trigger,
                "started_at": started_at,
            }
        )
        if status is not UNSET:
            field_dict["status"] = status
        if latency_ms is not UNSET:
            field_dict["latency_ms"] = latency_ms
        if latency_us is not UNSET:
            field_dict["latency_us"] = latency_us
        if error_category is not UNSET:
            field_dict["error_category"] = error_category
        if response_excerpt is not UNSET:
            field_dict["response_excerpt"] = response_excerpt
        if next_attempt_at is not UNSET:
            field_dict["next_attempt_at"] = next_attempt_at
        if order_broken is not UNSET:
            field_dict["order_broken"] = order_broken

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempt_no = d.pop("attempt_no")

        trigger = AttemptTrigger(d.pop("trigger"))

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))

        def _parse_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        status = _parse_status(d.pop("status", UNSET))

        def _parse_latency_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        latency_ms = _parse_latency_ms(d.pop("latency_ms", UNSET))

        def _parse_latency_us(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        latency_us = _parse_latency_us(d.pop("latency_us", UNSET))

        def _parse_error_category(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error_category = _parse_error_category(d.pop("error_category", UNSET))

        response_excerpt = d.pop("response_excerpt", UNSET)

        def _parse_next_attempt_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = datetime.datetime.fromisoformat(data)

                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at", UNSET))

        order_broken = d.pop("order_broken", UNSET)

        attempt = cls(
            attempt_no=attempt_no,
            trigger=trigger,
            started_at=started_at,
            status=status,
            latency_ms=latency_ms,
            latency_us=latency_us,
            error_category=error_category,
            response_excerpt=response_excerpt,
            next_attempt_at=next_attempt_at,
            order_broken=order_broken,
        )

        attempt.additional_properties = d
        return attempt

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
