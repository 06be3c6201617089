from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.retry_rule_client_errors import RetryRuleClientErrors
from ..types import UNSET, Unset

T = TypeVar("T", bound="RetryRule")


@_attrs_define
class RetryRule:
    """one level of a retry policy; a field left out is inherited

    Attributes:
        delays_seconds (list[float] | Unset): the wait after each failed attempt, before the ±jitter of GET /v1/limits;
            len+1 attempts unless attempts says otherwise; each within retry.bounds of GET /v1/limits
        attempts (int | Unset): attempts in all, the first included: the delays are cut to attempts-1, or extended by
            their last one; at most retry.bounds.max_attempts
        client_errors (RetryRuleClientErrors | Unset): what a 4xx other than 408, 410, 425 and 429 does: retry by the
            schedule, or stop (the delivery fails at once); default: the deployment's (GET /v1/limits retry.client_errors)
    """

    delays_seconds: list[float] | Unset = UNSET
    attempts: int | Unset = UNSET
    client_errors: RetryRuleClientErrors | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        delays_seconds: list[float] | Unset = UNSET
        if not isinstance(self.delays_seconds, Unset):
            delays_seconds = self.delays_seconds

        attempts = self.attempts

        client_errors: str | Unset = UNSET
        if not isinstance(self.client_errors, Unset):
            client_errors = self.client_errors.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if delays_seconds is not UNSET:
            field_dict["delays_seconds"] = delays_seconds
        if attempts is not UNSET:
            field_dict["attempts"] = attempts
        if client_errors is not UNSET:
            field_dict["client_errors"] = client_errors

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        delays_seconds = cast(list[float], d.pop("delays_seconds", UNSET))

        attempts = d.pop("attempts", UNSET)

        _client_errors = d.pop("client_errors", UNSET)
        client_errors: RetryRuleClientErrors | Unset
        if isinstance(_client_errors, Unset):
            client_errors = UNSET
        else:
            client_errors = RetryRuleClientErrors(_client_errors)

        retry_rule = cls(
            delays_seconds=delays_seconds,
            attempts=attempts,
            client_errors=client_errors,
        )

        return retry_rule
