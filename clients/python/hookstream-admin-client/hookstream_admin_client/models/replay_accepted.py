from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ReplayAccepted")


@_attrs_define
class ReplayAccepted:
    """
    Attributes:
        delivery_id (str):
        event_id (str): unchanged: the original event's id
        endpoint_id (str):
        attempt_no (int): the new attempt's number
        trigger (Literal['replay']):
    """

    delivery_id: str
    event_id: str
    endpoint_id: str
    attempt_no: int
    trigger: Literal["replay"]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        delivery_id = self.delivery_id

        event_id = self.event_id

        endpoint_id = self.endpoint_id

        attempt_no = self.attempt_no

        trigger = self.trigger

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "delivery_id": delivery_id,
                "event_id": event_id,
                "endpoint_id": endpoint_id,
                "attempt_no": attempt_no,
                "trigger": trigger,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        delivery_id = d.pop("delivery_id")

        event_id = d.pop("event_id")

        endpoint_id = d.pop("endpoint_id")

        attempt_no = d.pop("attempt_no")

        trigger = cast(Literal["replay"], d.pop("trigger"))
        if trigger != "replay":
            raise ValueError(f"trigger must match const 'replay', got '{trigger}'")

        replay_accepted = cls(
            delivery_id=delivery_id,
            event_id=event_id,
            endpoint_id=endpoint_id,
            attempt_no=attempt_no,
            trigger=trigger,
        )

        replay_accepted.additional_properties = d
        return replay_accepted

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
