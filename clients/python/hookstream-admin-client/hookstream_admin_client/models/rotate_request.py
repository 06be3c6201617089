from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RotateRequest")


@_attrs_define
class RotateRequest:
    """
    Attributes:
        overlap_seconds (int | Unset): how long the current secrets keep signing; default: the configured overlap (24 h)
    """

    overlap_seconds: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        overlap_seconds = self.overlap_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if overlap_seconds is not UNSET:
            field_dict["overlap_seconds"] = overlap_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        overlap_seconds = d.pop("overlap_seconds", UNSET)

        rotate_request = cls(
            overlap_seconds=overlap_seconds,
        )

        return rotate_request
