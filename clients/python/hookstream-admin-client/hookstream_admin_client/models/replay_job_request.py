from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.replay_job_request_source import ReplayJobRequestSource
from ..types import UNSET, Unset

T = TypeVar("T", bound="ReplayJobRequest")


@_attrs_define
class ReplayJobRequest:
    """
    Attributes:
        since (datetime.datetime): inclusive; within the replay window
        until (datetime.datetime | Unset): exclusive; default now
        state (str | Unset): history: a delivery state; log: a delivery state or "missing" (never delivered to this
            endpoint)
        source (ReplayJobRequestSource | Unset):  Default: ReplayJobRequestSource.HISTORY.
    """

    since: datetime.datetime
    until: datetime.datetime | Unset = UNSET
    state: str | Unset = UNSET
    source: ReplayJobRequestSource | Unset = ReplayJobRequestSource.HISTORY

    def to_dict(self) -> dict[str, Any]:
        since = self.since.isoformat()

        until: str | Unset = UNSET
        if not isinstance(self.until, Unset):
            until = self.until.isoformat()

        state = self.state

        source: str | Unset = UNSET
        if not isinstance(self.source, Unset):
            source = self.source.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "since": since,
            }
        )
        if until is not UNSET:
            field_dict["until"] = until
        if state is not UNSET:
            field_dict["state"] = state
        if source is not UNSET:
            field_dict["source"] = source

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        since = datetime.datetime.fromisoformat(d.pop("since"))

        _until = d.pop("until", UNSET)
        until: datetime.datetime | Unset
        if isinstance(_until, Unset):
            until = UNSET
        else:
            until = datetime.datetime.fromisoformat(_until)

        state = d.pop("state", UNSET)

        _source = d.pop("source", UNSET)
        source: ReplayJobRequestSource | Unset
        if isinstance(_source, Unset):
            source = UNSET
        else:
            source = ReplayJobRequestSource(_source)

        replay_job_request = cls(
            since=since,
            until=until,
            state=state,
            source=source,
        )

        return replay_job_request
