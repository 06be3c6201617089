from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_type import EventType
    from ..models.event_type_list_envelope_schema import EventTypeListEnvelopeSchema


T = TypeVar("T", bound="EventTypeList")


@_attrs_define
class EventTypeList:
    """
    Attributes:
        data (list[EventType]):
        next_cursor (str): opaque; pass as cursor for the next page; empty when there is none
        has_more (bool):
        envelope_schema (EventTypeListEnvelopeSchema | Unset):
    """

    data: list[EventType]
    next_cursor: str
    has_more: bool
    envelope_schema: EventTypeListEnvelopeSchema | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = []
        for data_item_data in self.data:
            data_item = data_item_data.to_dict()
            data.append(data_item)

        next_cursor = self.next_cursor

        has_more = self.has_more

        envelope_schema: dict[str, Any] | Unset = UNSET
        if not isinstance(self.envelope_schema, Unset):
            envelope_schema = self.envelope_schema.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "next_cursor": next_cursor,
                "has_more": has_more,
            }
        )
        if envelope_schema is not UNSET:
            field_dict["envelope_schema"] = envelope_schema

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type import EventType  # noqa: PLC0415
        from ..models.event_type_list_envelope_schema import EventTypeListEnvelopeSchema  # noqa: PLC0415

        d = dict(src_dict)
        data = []
        _data = d.pop("data")
        for data_item_data in _data:
            data_item = EventType.from_dict(data_item_data)

            data.append(data_item)

        next_cursor = d.pop("next_cursor")

        has_more = d.pop("has_more")

        _envelope_schema = d.pop("envelope_schema", UNSET)
        envelope_schema: EventTypeListEnvelopeSchema | Unset
        if isinstance(_envelope_schema, Unset):
            envelope_schema = UNSET
        else:
            envelope_schema = EventTypeListEnvelopeSchema.from_dict(_envelope_schema)

        event_type_list = cls(
            data=data,
            next_cursor=next_cursor,
            has_more=has_more,
            envelope_schema=envelope_schema,
        )

        event_type_list.additional_properties = d
        return event_type_list

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
