from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="Header")


@_attrs_define
class Header:
    """
    Attributes:
        type_ (Literal['header']):
        header_name (str): the header carrying the secret, e.g. X-Api-Key, or Authorization with a value like "Bearer
            ..."; not a reserved header (see headers) other than Authorization, and not among headers
        value (str):
    """

    type_: Literal["header"]
    header_name: str
    value: str

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        header_name = self.header_name

        value = self.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
                "header_name": header_name,
                "value": value,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = cast(Literal["header"], d.pop("type"))
        if type_ != "header":
            raise ValueError(f"type must match const 'header', got '{type_}'")

        header_name = d.pop("header_name")

        value = d.pop("value")

        header = cls(
            type_=type_,
            header_name=header_name,
            value=value,
        )

        return header
