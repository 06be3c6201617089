from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.outbox_dead_letter import OutboxDeadLetter


T = TypeVar("T", bound="OutboxDeadLetterList")


@_attrs_define
class OutboxDeadLetterList:
    """
    Attributes:
        data (list[OutboxDeadLetter]):
        next_cursor (str): opaque; pass as cursor for the next page; empty when there is none
        has_more (bool):
    """

    data: list[OutboxDeadLetter]
    next_cursor: str
    has_more: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = []
        for data_item_data in self.data:
            data_item = data_item_data.to_dict()
            data.append(data_item)

        next_cursor = self.next_cursor

        has_more = self.has_more

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "next_cursor": next_cursor,
                "has_more": has_more,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.outbox_dead_letter import OutboxDeadLetter  # noqa: PLC0415

        d = dict(src_dict)
        data = []
        _data = d.pop("data")
        for data_item_data in _data:
            data_item = OutboxDeadLetter.from_dict(data_item_data)

            data.append(data_item)

        next_cursor = d.pop("next_cursor")

        has_more = d.pop("has_more")

        outbox_dead_letter_list = cls(
            data=data,
            next_cursor=next_cursor,
            has_more=has_more,
        )

        outbox_dead_letter_list.additional_properties = d
        return outbox_dead_letter_list

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
