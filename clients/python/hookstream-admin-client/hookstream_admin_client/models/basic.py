from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="Basic")


@_attrs_define
class Basic:
    """
    Attributes:
        type_ (Literal['basic']):
        username (str): no colon (RFC 7617)
        password (str):
    """

    type_: Literal["basic"]
    username: str
    password: str

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        username = self.username

        password = self.password

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
                "username": username,
                "password": password,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = cast(Literal["basic"], d.pop("type"))
        if type_ != "basic":
            raise ValueError(f"type must match const 'basic', got '{type_}'")

        username = d.pop("username")

        password = d.pop("password")

        basic = cls(
            type_=type_,
            username=username,
            password=password,
        )

        return basic
