from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.replay_job_source import ReplayJobSource
from ..models.replay_job_state import ReplayJobState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.replay_filter import ReplayFilter


T = TypeVar("T", bound="ReplayJob")


@_attrs_define
class ReplayJob:
    """
    Attributes:
        id (str):
        job_id (str):
        state (ReplayJobState):
        total (int):
        done (int): replays produced
        failed (int): deliveries or events that could not be replayed; error gives the last reason
        partner_id (str | Unset):
        endpoint_id (str | Unset):
        source (ReplayJobSource | Unset):
        filter_ (ReplayFilter | Unset): the deliveries a replay job selects, as requested
        error (str | Unset):
        created_at (datetime.datetime | Unset):  Example: 2026-01-02T15:04:05.123456Z.
        updated_at (datetime.datetime | Unset):  Example: 2026-01-02T15:04:05.123456Z.
        started_at (datetime.datetime | None | Unset):  Example: 2026-01-02T15:04:05.123456Z.
        finished_at (datetime.datetime | None | Unset):  Example: 2026-01-02T15:04:05.123456Z.
        requested_by (str | Unset):
    """

    id: str
    job_id: str
    state: ReplayJobState
    total: int
    done: int
    failed: int
    partner_id: str | Unset = UNSET
    endpoint_id: str | Unset = UNSET
    source: ReplayJobSource | Unset = UNSET
    filter_: ReplayFilter | Unset = UNSET
    error: str | Unset = UNSET
    created_at: datetime.datetime | Unset = UNSET
    updated_at: datetime.datetime | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    requested_by: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        job_id = self.job_id

        state = self.state.value

        total = self.total

        done = self.done

        failed = self.failed

        partner_id = self.partner_id

        endpoint_id = self.endpoint_id

        source: str | Unset = UNSET
        if not isinstance(self.source, Unset):
            source = self.source.value

        filter_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()

        error = self.error

        created_at: str | Unset = UNSET
        if not isinstance(self.created_at, Unset):
            created_at = self.created_at.isoformat()

        updated_at: str | Unset = UNSET
        if not isinstance(self.updated_at, Unset):
            updated_at = self.updated_at.isoformat()

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        requested_by = self.requested_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "job_id": job_id,
                "state": state,
                "total": total,
                "done": done,
                "failed": failed,
            }
        )
        if partner_id is not UNSET:
            field_dict["partner_id"] = partner_id
        if endpoint_id is not UNSET:
            field_dict["endpoint_id"] = endpoint_id
        if source is not UNSET:
            field_dict["source"] = source
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if error is not UNSET:
            field_dict["error"] = error
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if updated_at is not UNSET:
            field_dict["updated_at"] = updated_at
        if started_at is not UNSET:
            field_dict["started_at"] = started_at
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if requested_by is not UNSET:
            field_dict["requested_by"] = requested_by

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.replay_filter import ReplayFilter  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        job_id = d.pop("job_id")

        state = ReplayJobState(d.pop("state"))

        total = d.pop("total")

        done = d.pop("done")

        failed = d.pop("failed")

        partner_id = d.pop("partner_id", UNSET)

        endpoint_id = d.pop("endpoint_id", UNSET)

        _source = d.pop("source", UNSET)
        source: ReplayJobSource | Unset
        if isinstance(_source, Unset):
            source = UNSET
        else:
            source = ReplayJobSource(_source)

        _filter_ = d.pop("filter", UNSET)
        filter_: ReplayFilter | Unset
        if isinstance(_filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = ReplayFilter.from_dict(_filter_)

        error = d.pop("error", UNSET)

        _created_at = d.pop("created_at", UNSET)
        created_at: datetime.datetime | Unset
        if isinstance(_created_at, Unset):
            created_at = UNSET
        else:
            created_at = datetime.datetime.fromisoformat(_created_at)

        _updated_at = d.pop("updated_at", UNSET)
        updated_at: datetime.datetime | Unset
        if isinstance(_updated_at, Unset):
            updated_at = UNSET
        else:
            updated_at = datetime.datetime.fromisoformat(_updated_at)

        def _parse_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        requested_by = d.pop("requested_by", UNSET)

        replay_job = cls(
            id=id,
            job_id=job_id,
            state=state,
            total=total,
            done=done,
            failed=failed,
            partner_id=partner_id,
            endpoint_id=endpoint_id,
            source=source,
            filter_=filter_,
            error=error,
            created_at=created_at,
            updated_at=updated_at,
            started_at=started_at,
            finished_at=finished_at,
            requested_by=requested_by,
        )

        replay_job.additional_properties = d
        return replay_job

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
