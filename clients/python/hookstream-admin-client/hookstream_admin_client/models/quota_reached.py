from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.quota_reached_name import QuotaReachedName

T = TypeVar("T", bound="QuotaReached")


@_attrs_define
class QuotaReached:
    """
    Attributes:
        name (QuotaReachedName):
        limit (int):
        usage (int): the partner's usage when refused; for replay_deliveries the number of deliveries the refused replay
            selects
    """

    name: QuotaReachedName
    limit: int
    usage: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name.value

        limit = self.limit

        usage = self.usage

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "limit": limit,
                "usage": usage,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = QuotaReachedName(d.pop("name"))

        limit = d.pop("limit")

        usage = d.pop("usage")

        quota_reached = cls(
            name=name,
            limit=limit,
            usage=usage,
        )

        quota_reached.additional_properties = d
        return quota_reached

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
