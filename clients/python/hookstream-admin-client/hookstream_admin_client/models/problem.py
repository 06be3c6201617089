from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.problem_code import ProblemCode
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.field_error import FieldError
    from ..models.quota_reached import QuotaReached


T = TypeVar("T", bound="Problem")


@_attrs_define
class Problem:
    """An RFC 9457 problem (application/problem+json) with hookstream's extensions.

    Attributes:
        type_ (str): urn:hookstream:problem:<code>
        title (str): a short summary, the same for every problem of the type
        status (int): the HTTP status
        detail (str): what went wrong with this request
        code (ProblemCode):
        request_id (str): the X-Request-Id of the answer
        field (str | Unset): the request field, query parameter or header that failed (the first of errors when there
            are several)
        errors (list[FieldError] | Unset): for validation_failed and url_refused: every field that failed, each with its
            own code
        rule (str | Unset): for url_refused (when the egress policy's refusals are the only failures; a mix with other
            failures is validation_failed, each refusal's rule in errors): the egress rule that refused the first URL (url,
            scheme, port, userinfo, host, metadata, blocked_address, resolve)
        quota (QuotaReached | Unset):
    """

    type_: str
    title: str
    status: int
    detail: str
    code: ProblemCode
    request_id: str
    field: str | Unset = UNSET
    errors: list[FieldError] | Unset = UNSET
    rule: str | Unset = UNSET
    quota: QuotaReached | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        title = self.title

        status = self.status

        detail = self.detail

        code = self.code.value

        request_id = self.request_id

        field = self.field

        errors: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.errors, Unset):
            errors = []
            for errors_item_data in self.errors:
                errors_item = errors_item_data.to_dict()
                errors.append(errors_item)

        rule = self.rule

        quota: dict[str, Any] | Unset = UNSET
        if not isinstance(self.quota, Unset):
            quota = self.quota.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "title": title,
                "status": status,
                "detail": detail,
                "code": code,
                "request_id": request_id,
            }
        )
        if field is not UNSET:
            field_dict["field"] = field
        if errors is not UNSET:
            field_dict["errors"] = errors
        if rule is not UNSET:
            field_dict["rule"] = rule
        if quota is not UNSET:
            field_dict["quota"] = quota

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.field_error import FieldError  # noqa: PLC0415
        from ..models.quota_reached import QuotaReached  # noqa: PLC0415

        d = dict(src_dict)
        type_ = d.pop("type")

        title = d.pop("title")

        status = d.pop("status")

        detail = d.pop("detail")

        code = ProblemCode(d.pop("code"))

        request_id = d.pop("request_id")

        field = d.pop("field", UNSET)

        _errors = d.pop("errors", UNSET)
        errors: list[FieldError] | Unset = UNSET
        if _errors is not UNSET:
            errors = []
            for errors_item_data in _errors:
                errors_item = FieldError.from_dict(errors_item_data)

                errors.append(errors_item)

        rule = d.pop("rule", UNSET)

        _quota = d.pop("quota", UNSET)
        quota: QuotaReached | Unset
        if isinstance(_quota, Unset):
            quota = UNSET
        else:
            quota = QuotaReached.from_dict(_quota)

        problem = cls(
            type_=type_,
            title=title,
            status=status,
            detail=detail,
            code=code,
            request_id=request_id,
            field=field,
            errors=errors,
            rule=rule,
            quota=quota,
        )

        problem.additional_properties = d
        return problem

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
