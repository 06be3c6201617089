from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.retry_policy_client_errors import RetryPolicyClientErrors
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.retry_policy_event_types import RetryPolicyEventTypes


T = TypeVar("T", bound="RetryPolicy")


@_attrs_define
class RetryPolicy:
    """the endpoint's retry policy: its schedule, attempt count and policy for other 4xx, for all its events and per event
    type, within the operator's bounds (GET /v1/limits retry.bounds; a policy outside them is refused with 422 naming
    the field). Retries of every policy wait in the shared retry tiers.

        Attributes:
            delays_seconds (list[float] | Unset): the wait after each failed attempt, before the ±jitter of GET /v1/limits;
                len+1 attempts unless attempts says otherwise; each within retry.bounds of GET /v1/limits
            attempts (int | Unset): attempts in all, the first included: the delays are cut to attempts-1, or extended by
                their last one; at most retry.bounds.max_attempts
            client_errors (RetryPolicyClientErrors | Unset): what a 4xx other than 408, 410, 425 and 429 does: retry by the
                schedule, or stop (the delivery fails at once); default: the deployment's (GET /v1/limits retry.client_errors)
            event_types (RetryPolicyEventTypes | Unset): rules per event type, keyed by an event type, a prefix wildcard
                like "balance.*" or "*": the most specific key covering an event's type (exact, then the longest wildcard, then
                "*") applies, its fields over the endpoint's own; a rule that sets delays_seconds brings its own attempt count
    """

    delays_seconds: list[float] | Unset = UNSET
    attempts: int | Unset = UNSET
    client_errors: RetryPolicyClientErrors | Unset = UNSET
    event_types: RetryPolicyEventTypes | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        delays_seconds: list[float] | Unset = UNSET
        if not isinstance(self.delays_seconds, Unset):
            delays_seconds = self.delays_seconds

        attempts = self.attempts

        client_errors: str | Unset = UNSET
        if not isinstance(self.client_errors, Unset):
            client_errors = self.client_errors.value

        event_types: dict[str, Any] | Unset = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = self.event_types.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if delays_seconds is not UNSET:
            field_dict["delays_seconds"] = delays_seconds
        if attempts is not UNSET:
            field_dict["attempts"] = attempts
        if client_errors is not UNSET:
            field_dict["client_errors"] = client_errors
        if event_types is not UNSET:
            field_dict["event_types"] = event_types

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.retry_policy_event_types import RetryPolicyEventTypes  # noqa: PLC0415

        d = dict(src_dict)
        delays_seconds = cast(list[float], d.pop("delays_seconds", UNSET))

        attempts = d.pop("attempts", UNSET)

        _client_errors = d.pop("client_errors", UNSET)
        client_errors: RetryPolicyClientErrors | Unset
        if isinstance(_client_errors, Unset):
            client_errors = UNSET
        else:
            client_errors = RetryPolicyClientErrors(_client_errors)

        _event_types = d.pop("event_types", UNSET)
        event_types: RetryPolicyEventTypes | Unset
        if isinstance(_event_types, Unset):
            event_types = UNSET
        else:
            event_types = RetryPolicyEventTypes.from_dict(_event_types)

        retry_policy = cls(
            delays_seconds=delays_seconds,
            attempts=attempts,
            client_errors=client_errors,
            event_types=event_types,
        )

        return retry_policy
