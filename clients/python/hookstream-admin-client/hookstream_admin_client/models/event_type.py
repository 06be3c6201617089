from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type_category import EventTypeCategory

if TYPE_CHECKING:
    from ..models.event_type_example import EventTypeExample
    from ..models.event_type_schema import EventTypeSchema
    from ..models.event_type_versions_item import EventTypeVersionsItem


T = TypeVar("T", bound="EventType")


@_attrs_define
class EventType:
    """
    Attributes:
        type_ (str):
        category (EventTypeCategory):
        description (str):
        schema_version (int):
        schema (EventTypeSchema): JSON Schema of data
        example (EventTypeExample):
        versions (list[EventTypeVersionsItem]): every published schema version of the type, oldest first; the top-level
            schema_version, schema and example are the newest's, which a platform writes from now on. An endpoint pinned to
            a version receives the type's newest version at or below it.
    """

    type_: str
    category: EventTypeCategory
    description: str
    schema_version: int
    schema: EventTypeSchema
    example: EventTypeExample
    versions: list[EventTypeVersionsItem]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        category = self.category.value

        description = self.description

        schema_version = self.schema_version

        schema = self.schema.to_dict()

        example = self.example.to_dict()

        versions = []
        for versions_item_data in self.versions:
            versions_item = versions_item_data.to_dict()
            versions.append(versions_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "category": category,
                "description": description,
                "schema_version": schema_version,
                "schema": schema,
                "example": example,
                "versions": versions,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_example import EventTypeExample  # noqa: PLC0415
        from ..models.event_type_schema import EventTypeSchema  # noqa: PLC0415
        from ..models.event_type_versions_item import EventTypeVersionsItem  # noqa: PLC0415

        d = dict(src_dict)
        type_ = d.pop("type")

        category = EventTypeCategory(d.pop("category"))

        description = d.pop("description")

        schema_version = d.pop("schema_version")

        schema = EventTypeSchema.from_dict(d.pop("schema"))

        example = EventTypeExample.from_dict(d.pop("example"))

        versions = []
        _versions = d.pop("versions")
        for versions_item_data in _versions:
            versions_item = EventTypeVersionsItem.from_dict(versions_item_data)

            versions.append(versions_item)

        event_type = cls(
            type_=type_,
            category=category,
            description=description,
            schema_version=schema_version,
            schema=schema,
            example=example,
            versions=versions,
        )

        event_type.additional_properties = d
        return event_type

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
