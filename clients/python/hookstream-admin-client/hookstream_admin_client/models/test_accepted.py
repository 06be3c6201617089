from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="TestAccepted")


@_attrs_define
class TestAccepted:
    """
    Attributes:
        event_id (str):
        delivery_id (str):
        endpoint_id (str):
        attempt_no (int):
        trigger (Literal['test']):
    """

    event_id: str
    delivery_id: str
    endpoint_id: str
    attempt_no: int
    trigger: Literal["test"]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_id = self.event_id

        delivery_id = self.delivery_id

        endpoint_id = self.endpoint_id

        attempt_no = self.attempt_no

        trigger = self.trigger

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event_id": event_id,
                "delivery_id": delivery_id,
                "endpoint_id": endpoint_id,
                "attempt_no": attempt_no,
                "trigger": trigger,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        event_id = d.pop("event_id")

        delivery_id = d.pop("delivery_id")

        endpoint_id = d.pop("endpoint_id")

        attempt_no = d.pop("attempt_no")

        trigger = cast(Literal["test"], d.pop("trigger"))
        if trigger != "test":
            raise ValueError(f"trigger must match const 'test', got '{trigger}'")

        test_accepted = cls(
            event_id=event_id,
            delivery_id=delivery_id,
            endpoint_id=endpoint_id,
            attempt_no=attempt_no,
            trigger=trigger,
        )

        test_accepted.additional_properties = d
        return test_accepted

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
