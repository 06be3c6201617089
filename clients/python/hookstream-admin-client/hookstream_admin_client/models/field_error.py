from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.field_error_code import FieldErrorCode
from ..types import UNSET, Unset

T = TypeVar("T", bound="FieldError")


@_attrs_define
class FieldError:
    """One failing field of a 422 problem. Every field of the request is checked, the egress policy of its URLs included,
    so one answer lists every failure.

        Attributes:
            field (str): the body field (dotted, with [index] for array elements: event_types[0], auth.token_url)
            code (FieldErrorCode): url_refused: the egress policy refused the URL (rule names why); validation_failed: any
                other unacceptable value
            detail (str): what is wrong with the field
            rule (str | Unset): for url_refused: the egress rule that refused the URL (url, scheme, port, userinfo, host,
                metadata, blocked_address, resolve)
    """

    field: str
    code: FieldErrorCode
    detail: str
    rule: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        field = self.field

        code = self.code.value

        detail = self.detail

        rule = self.rule

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "field": field,
                "code": code,
                "detail": detail,
            }
        )
        if rule is not UNSET:
            field_dict["rule"] = rule

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        field = d.pop("field")

        code = FieldErrorCode(d.pop("code"))

        detail = d.pop("detail")

        rule = d.pop("rule", UNSET)

        field_error = cls(
            field=field,
            code=code,
            detail=detail,
            rule=rule,
        )

        field_error.additional_properties = d
        return field_error

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
