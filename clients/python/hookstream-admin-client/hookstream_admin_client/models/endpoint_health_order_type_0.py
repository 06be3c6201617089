from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EndpointHealthOrderType0")


@_attrs_define
class EndpointHealthOrderType0:
    """An ordered endpoint's hold as its newest recorded attempt stated it (the sender holds it; the recorder keeps the
    newest statement); null when no attempt stated one (not ordered, or none recorded).

        Attributes:
            held (int): records of the endpoint waiting behind its head in the sender
            head_since (datetime.datetime | None): while a head is held: its first failed attempt; null when none is held
                Example: 2026-01-02T15:04:05.123456Z.
            head_age_seconds (float | None): how long the head has been held, as of this read
            stated_at (datetime.datetime): when the sender stated it Example: 2026-01-02T15:04:05.123456Z.
    """

    held: int
    head_since: datetime.datetime | None
    head_age_seconds: float | None
    stated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        held = self.held

        head_since: None | str
        if isinstance(self.head_since, datetime.datetime):
            head_since = self.head_since.isoformat()
        else:
            head_since = self.head_since

        head_age_seconds: float | None
        head_age_seconds = self.head_age_seconds

        stated_at = self.stated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "held": held,
                "head_since": head_since,
                "head_age_seconds": head_age_seconds,
                "stated_at": stated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        held = d.pop("held")

        def _parse_head_since(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                head_since_type_0 = datetime.datetime.fromisoformat(data)

                return head_since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        head_since = _parse_head_since(d.pop("head_since"))

        def _parse_head_age_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        head_age_seconds = _parse_head_age_seconds(d.pop("head_age_seconds"))

        stated_at = datetime.datetime.fromisoformat(d.pop("stated_at"))

        endpoint_health_order_type_0 = cls(
            held=held,
            head_since=head_since,
            head_age_seconds=head_age_seconds,
            stated_at=stated_at,
        )

        endpoint_health_order_type_0.additional_properties = d
        return endpoint_health_order_type_0

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
