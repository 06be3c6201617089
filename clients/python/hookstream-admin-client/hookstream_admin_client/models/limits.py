from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.limits_notes import LimitsNotes
    from ..models.quotas import Quotas
    from ..models.retry_limits import RetryLimits


T = TypeVar("T", bound="Limits")


@_attrs_define
class Limits:
    """
    Attributes:
        feed_retention_seconds (int): how far back the cursor feed is promised to reach
        event_log_retention_seconds (int): the events topic's retention (the event log data teams read); -1: no time
            limit. At least feed_retention_seconds: the feed reads the same topic
        outbox_retention_seconds (int):
        history_retention_seconds (int):
        replay_window_seconds (int):
        quotas (Quotas): per-partner quotas; over one a request answers 429 quota_exceeded (replay_deliveries: 422
            replay_too_large; deliveries_in_flight and deliveries_per_sec hold back the partner's deliveries in the sender;
            replay_deliveries_per_sec paces the partner's replay jobs)
        retry (RetryLimits): the deployment's retry policy, which endpoints without a retry_policy follow, and the
            bounds of endpoint policies
        rotation_overlap_seconds (int | Unset):
        automatic_attempts (int | Unset): the highest number an automatic attempt can have: the most attempts the
            deployment's schedule or any endpoint policy gives; a replay made while one may still come is numbered above it
        max_page_limit (int | Unset):
        default_page_limit (int | Unset):
        max_request_bytes (int | Unset):
        partner_id (str | Unset): the partner whose usage quotas show: the key's own, or the operator's partner_id;
            absent otherwise
        notes (LimitsNotes | Unset):
    """

    feed_retention_seconds: int
    event_log_retention_seconds: int
    outbox_retention_seconds: int
    history_retention_seconds: int
    replay_window_seconds: int
    quotas: Quotas
    retry: RetryLimits
    rotation_overlap_seconds: int | Unset = UNSET
    automatic_attempts: int | Unset = UNSET
    max_page_limit: int | Unset = UNSET
    default_page_limit: int | Unset = UNSET
    max_request_bytes: int | Unset = UNSET
    partner_id: str | Unset = UNSET
    notes: LimitsNotes | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        feed_retention_seconds = self.feed_retention_seconds

        event_log_retention_seconds = self.event_log_retention_seconds

        outbox_retention_seconds = self.outbox_retention_seconds

        history_retention_seconds = self.history_retention_seconds

        replay_window_seconds = self.replay_window_seconds

        quotas = self.quotas.to_dict()

        retry = self.retry.to_dict()

        rotation_overlap_seconds = self.rotation_overlap_seconds

        automatic_attempts = self.automatic_attempts

        max_page_limit = self.max_page_limit

        default_page_limit = self.default_page_limit

        max_request_bytes = self.max_request_bytes

        partner_id = self.partner_id

        notes: dict[str, Any] | Unset = UNSET
        if not isinstance(self.notes, Unset):
            notes = self.notes.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "feed_retention_seconds": feed_retention_seconds,
                "event_log_retention_seconds": event_log_retention_seconds,
                "outbox_retention_seconds": outbox_retention_seconds,
                "history_retention_seconds": history_retention_seconds,
                "replay_window_seconds": replay_window_seconds,
                "quotas": quotas,
                "retry": retry,
            }
        )
        if rotation_overlap_seconds is not UNSET:
            field_dict["rotation_overlap_seconds"] = rotation_overlap_seconds
        if automatic_attempts is not UNSET:
            field_dict["automatic_attempts"] = automatic_attempts
        if max_page_limit is not UNSET:
            field_dict["max_page_limit"] = max_page_limit
        if default_page_limit is not UNSET:
            field_dict["default_page_limit"] = default_page_limit
        if max_request_bytes is not UNSET:
            field_dict["max_request_bytes"] = max_request_bytes
        if partner_id is not UNSET:
            field_dict["partner_id"] = partner_id
        if notes is not UNSET:
            field_dict["notes"] = notes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.limits_notes import LimitsNotes  # noqa: PLC0415
        from ..models.quotas import Quotas  # noqa: PLC0415
        from ..models.retry_limits import RetryLimits  # noqa: PLC0415

        d = dict(src_dict)
        feed_retention_seconds = d.pop("feed_retention_seconds")

        event_log_retention_seconds = d.pop("event_log_retention_seconds")

        outbox_retention_seconds = d.pop("outbox_retention_seconds")

        history_retention_seconds = d.pop("history_retention_seconds")

        replay_window_seconds = d.pop("replay_window_seconds")

        quotas = Quotas.from_dict(d.pop("quotas"))

        retry = RetryLimits.from_dict(d.pop("retry"))

        rotation_overlap_seconds = d.pop("rotation_overlap_seconds", UNSET)

        automatic_attempts = d.pop("automatic_attempts", UNSET)

        max_page_limit = d.pop("max_page_limit", UNSET)

        default_page_limit = d.pop("default_page_limit", UNSET)

        max_request_bytes = d.pop("max_request_bytes", UNSET)

        partner_id = d.pop("partner_id", UNSET)

        _notes = d.pop("notes", UNSET)
        notes: LimitsNotes | Unset
        if isinstance(_notes, Unset):
            notes = UNSET
        else:
            notes = LimitsNotes.from_dict(_notes)

        limits = cls(
            feed_retention_seconds=feed_retention_seconds,
            event_log_retention_seconds=event_log_retention_seconds,
            outbox_retention_seconds=outbox_retention_seconds,
            history_retention_seconds=history_retention_seconds,
            replay_window_seconds=replay_window_seconds,
            quotas=quotas,
            retry=retry,
            rotation_overlap_seconds=rotation_overlap_seconds,
            automatic_attempts=automatic_attempts,
            max_page_limit=max_page_limit,
            default_page_limit=default_page_limit,
            max_request_bytes=max_request_bytes,
            partner_id=partner_id,
            notes=notes,
        )

        limits.additional_properties = d
        return limits

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
