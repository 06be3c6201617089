from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_type_versions_item_example import EventTypeVersionsItemExample
    from ..models.event_type_versions_item_schema import EventTypeVersionsItemSchema


T = TypeVar("T", bound="EventTypeVersionsItem")


@_attrs_define
class EventTypeVersionsItem:
    """
    Attributes:
        schema_version (int):
        schema (EventTypeVersionsItemSchema): JSON Schema of data in this version
        example (EventTypeVersionsItemExample):
        changes (str | Unset): what changed from the version before, and why; absent on a type's first version
    """

    schema_version: int
    schema: EventTypeVersionsItemSchema
    example: EventTypeVersionsItemExample
    changes: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        schema_version = self.schema_version

        schema = self.schema.to_dict()

        example = self.example.to_dict()

        changes = self.changes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "schema_version": schema_version,
                "schema": schema,
                "example": example,
            }
        )
        if changes is not UNSET:
            field_dict["changes"] = changes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_versions_item_example import EventTypeVersionsItemExample  # noqa: PLC0415
        from ..models.event_type_versions_item_schema import EventTypeVersionsItemSchema  # noqa: PLC0415

        d = dict(src_dict)
        schema_version = d.pop("schema_version")

        schema = EventTypeVersionsItemSchema.from_dict(d.pop("schema"))

        example = EventTypeVersionsItemExample.from_dict(d.pop("example"))

        changes = d.pop("changes", UNSET)

        event_type_versions_item = cls(
            schema_version=schema_version,
            schema=schema,
            example=example,
            changes=changes,
        )

        event_type_versions_item.additional_properties = d
        return event_type_versions_item

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
