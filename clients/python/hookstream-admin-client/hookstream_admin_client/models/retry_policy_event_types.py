from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.retry_rule import RetryRule


T = TypeVar("T", bound="RetryPolicyEventTypes")


@_attrs_define
class RetryPolicyEventTypes:
    """rules per event type, keyed by an event type, a prefix wildcard like "balance.*" or "*": the most specific key
    covering an event's type (exact, then the longest wildcard, then "*") applies, its fields over the endpoint's own; a
    rule that sets delays_seconds brings its own attempt count

    """

    additional_properties: dict[str, RetryRule] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        for prop_name, prop in self.additional_properties.items():
            field_dict[prop_name] = prop.to_dict()

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.retry_rule import RetryRule  # noqa: PLC0415

        d = dict(src_dict)
        retry_policy_event_types = cls()

        additional_properties = {}
        for prop_name, prop_dict in d.items():
            additional_property = RetryRule.from_dict(prop_dict)

            additional_properties[prop_name] = additional_property

        retry_policy_event_types.additional_properties = additional_properties
        return retry_policy_event_types

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> RetryRule:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: RetryRule) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
