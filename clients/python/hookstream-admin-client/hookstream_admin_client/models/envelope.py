from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.envelope_data import EnvelopeData
    from ..models.subject import Subject


T = TypeVar("T", bound="Envelope")


@_attrs_define
class Envelope:
    """
    Attributes:
        event_id (str):
        type_ (str):
        occurred_at (datetime.datetime):
        partner_id (str):
        subject (Subject): what the event is about
        schema_version (int):
        data (EnvelopeData):
        correlation_id (str | Unset):
    """

    event_id: str
    type_: str
    occurred_at: datetime.datetime
    partner_id: str
    subject: Subject
    schema_version: int
    data: EnvelopeData
    correlation_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_id = self.event_id

        type_ = self.type_

        occurred_at = self.occurred_at.isoformat()

        partner_id = self.partner_id

        subject = self.subject.to_dict()

        schema_version = self.schema_version

        data = self.data.to_dict()

        correlation_id = self.correlation_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event_id": event_id,
                "type": type_,
                "occurred_at": occurred_at,
                "partner_id": partner_id,
                "subject": subject,
                "schema_version": schema_version,
                "data": data,
            }
        )
        if correlation_id is not UNSET:
            field_dict["correlation_id"] = correlation_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.envelope_data import EnvelopeData  # noqa: PLC0415
        from ..models.subject import Subject  # noqa: PLC0415

        d = dict(src_dict)
        event_id = d.pop("event_id")

        type_ = d.pop("type")

        occurred_at = datetime.datetime.fromisoformat(d.pop("occurred_at"))

        partner_id = d.pop("partner_id")

        subject = Subject.from_dict(d.pop("subject"))

        schema_version = d.pop("schema_version")

        data = EnvelopeData.from_dict(d.pop("data"))

        correlation_id = d.pop("correlation_id", UNSET)

        envelope = cls(
            event_id=event_id,
            type_=type_,
            occurred_at=occurred_at,
            partner_id=partner_id,
            subject=subject,
            schema_version=schema_version,
            data=data,
            correlation_id=correlation_id,
        )

        envelope.additional_properties = d
        return envelope

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
