from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.signing_keys_signature_scheme import SigningKeysSignatureScheme

if TYPE_CHECKING:
    from ..models.signing_key import SigningKey


T = TypeVar("T", bound="SigningKeys")


@_attrs_define
class SigningKeys:
    """
    Attributes:
        endpoint_id (str):
        signature_scheme (SigningKeysSignatureScheme):
        keys (list[SigningKey]): newest first; during a rotation overlap, each of them signs every delivery
    """

    endpoint_id: str
    signature_scheme: SigningKeysSignatureScheme
    keys: list[SigningKey]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        endpoint_id = self.endpoint_id

        signature_scheme = self.signature_scheme.value

        keys = []
        for keys_item_data in self.keys:
            keys_item = keys_item_data.to_dict()
            keys.append(keys_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "endpoint_id": endpoint_id,
                "signature_scheme": signature_scheme,
                "keys": keys,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.signing_key import SigningKey  # noqa: PLC0415

        d = dict(src_dict)
        endpoint_id = d.pop("endpoint_id")

        signature_scheme = SigningKeysSignatureScheme(d.pop("signature_scheme"))

        keys = []
        _keys = d.pop("keys")
        for keys_item_data in _keys:
            keys_item = SigningKey.from_dict(keys_item_data)

            keys.append(keys_item)

        signing_keys = cls(
            endpoint_id=endpoint_id,
            signature_scheme=signature_scheme,
            keys=keys,
        )

        signing_keys.additional_properties = d
        return signing_keys

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
