from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.endpoint_health_circuit import EndpointHealthCircuit

if TYPE_CHECKING:
    from ..models.endpoint_health_order_type_0 import EndpointHealthOrderType0


T = TypeVar("T", bound="EndpointHealth")


@_attrs_define
class EndpointHealth:
    """The endpoint's delivery health. The circuit breaker lives in the sender; each attempt record states it, and the
    recorder keeps the newest, so this is the circuit as the newest recorded attempt left it.

        Attributes:
            circuit (EndpointHealthCircuit): closed: deliveries flow; open: new work is deferred until next_probe_at without
                counting attempts; half_open: the next delivery is the probe whose outcome closes or reopens it; unknown: no
                attempt recorded yet
            next_probe_at (datetime.datetime | None): while open: when the circuit lets its next probe through Example:
                2026-01-02T15:04:05.123456Z.
            last_success_at (datetime.datetime | None): start of the newest attempt that succeeded Example:
                2026-01-02T15:04:05.123456Z.
            last_attempt_at (datetime.datetime | None): start of the newest attempt sent (refusals not counted) Example:
                2026-01-02T15:04:05.123456Z.
            failing_since (datetime.datetime | None): the first failure after the last success; the failure window counts
                from it (as failing_since of the endpoint) Example: 2026-01-02T15:04:05.123456Z.
            order (EndpointHealthOrderType0 | None): An ordered endpoint's hold as its newest recorded attempt stated it
                (the sender holds it; the recorder keeps the newest statement); null when no attempt stated one (not ordered, or
                none recorded).
    """

    circuit: EndpointHealthCircuit
    next_probe_at: datetime.datetime | None
    last_success_at: datetime.datetime | None
    last_attempt_at: datetime.datetime | None
    failing_since: datetime.datetime | None
    order: EndpointHealthOrderType0 | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_health_order_type_0 import EndpointHealthOrderType0  # noqa: PLC0415

        circuit = self.circuit.value

        next_probe_at: None | str
        if isinstance(self.next_probe_at, datetime.datetime):
            next_probe_at = self.next_probe_at.isoformat()
        else:
            next_probe_at = self.next_probe_at

        last_success_at: None | str
        if isinstance(self.last_success_at, datetime.datetime):
            last_success_at = self.last_success_at.isoformat()
        else:
            last_success_at = self.last_success_at

        last_attempt_at: None | str
        if isinstance(self.last_attempt_at, datetime.datetime):
            last_attempt_at = self.last_attempt_at.isoformat()
        else:
            last_attempt_at = self.last_attempt_at

        failing_since: None | str
        if isinstance(self.failing_since, datetime.datetime):
            failing_since = self.failing_since.isoformat()
        else:
            failing_since = self.failing_since

        order: dict[str, Any] | None
        if isinstance(self.order, EndpointHealthOrderType0):
            order = self.order.to_dict()
        else:
            order = self.order

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "circuit": circuit,
                "next_probe_at": next_probe_at,
                "last_success_at": last_success_at,
                "last_attempt_at": last_attempt_at,
                "failing_since": failing_since,
                "order": order,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_health_order_type_0 import EndpointHealthOrderType0  # noqa: PLC0415

        d = dict(src_dict)
        circuit = EndpointHealthCircuit(d.pop("circuit"))

        def _parse_next_probe_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_probe_at_type_0 = datetime.datetime.fromisoformat(data)

                return next_probe_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        next_probe_at = _parse_next_probe_at(d.pop("next_probe_at"))

        def _parse_last_success_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_success_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_success_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_success_at = _parse_last_success_at(d.pop("last_success_at"))

        def _parse_last_attempt_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_attempt_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_attempt_at = _parse_last_attempt_at(d.pop("last_attempt_at"))

        def _parse_failing_since(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                failing_since_type_0 = datetime.datetime.fromisoformat(data)

                return failing_since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        failing_since = _parse_failing_since(d.pop("failing_since"))

        def _parse_order(data: object) -> EndpointHealthOrderType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                order_type_0 = EndpointHealthOrderType0.from_dict(data)

                return order_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointHealthOrderType0 | None, data)

        order = _parse_order(d.pop("order"))

        endpoint_health = cls(
            circuit=circuit,
            next_probe_at=next_probe_at,
            last_success_at=last_success_at,
            last_attempt_at=last_attempt_at,
            failing_since=failing_since,
            order=order,
        )

        endpoint_health.additional_properties = d
        return endpoint_health

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
