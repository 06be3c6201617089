from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.outbox_dead_letter_reason import OutboxDeadLetterReason

if TYPE_CHECKING:
    from ..models.subject import Subject


T = TypeVar("T", bound="OutboxDeadLetter")


@_attrs_define
class OutboxDeadLetter:
    """
    Attributes:
        event_id (str): the outbox row's event_id as written (possibly not a valid id)
        partner_id (str):
        type_ (str):
        schema_version (int):
        subject (Subject): what the event is about
        occurred_at (datetime.datetime):  Example: 2026-01-02T15:04:05.123456Z.
        reason (OutboxDeadLetterReason):
        detail (str): why, naming the field
        commit_lsn (str): the PostgreSQL commit LSN of the transaction that wrote the row
        created_at (datetime.datetime): when cdc refused it Example: 2026-01-02T15:04:05.123456Z.
    """

    event_id: str
    partner_id: str
    type_: str
    schema_version: int
    subject: Subject
    occurred_at: datetime.datetime
    reason: OutboxDeadLetterReason
    detail: str
    commit_lsn: str
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_id = self.event_id

        partner_id = self.partner_id

        type_ = self.type_

        schema_version = self.schema_version

        subject = self.subject.to_dict()

        occurred_at = self.occurred_at.isoformat()

        reason = self.reason.value

        detail = self.detail

        commit_lsn = self.commit_lsn

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event_id": event_id,
                "partner_id": partner_id,
                "type": type_,
                "schema_version": schema_version,
                "subject": subject,
                "occurred_at": occurred_at,
                "reason": reason,
                "detail": detail,
                "commit_lsn": commit_lsn,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.subject import Subject  # noqa: PLC0415

        d = dict(src_dict)
        event_id = d.pop("event_id")

        partner_id = d.pop("partner_id")

        type_ = d.pop("type")

        schema_version = d.pop("schema_version")

        subject = Subject.from_dict(d.pop("subject"))

        occurred_at = datetime.datetime.fromisoformat(d.pop("occurred_at"))

        reason = OutboxDeadLetterReason(d.pop("reason"))

        detail = d.pop("detail")

        commit_lsn = d.pop("commit_lsn")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        outbox_dead_letter = cls(
            event_id=event_id,
            partner_id=partner_id,
            type_=type_,
            schema_version=schema_version,
            subject=subject,
            occurred_at=occurred_at,
            reason=reason,
            detail=detail,
            commit_lsn=commit_lsn,
            created_at=created_at,
        )

        outbox_dead_letter.additional_properties = d
        return outbox_dead_letter

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
