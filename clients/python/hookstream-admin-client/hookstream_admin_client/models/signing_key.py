from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.signing_key_scheme import SigningKeyScheme

T = TypeVar("T", bound="SigningKey")


@_attrs_define
class SigningKey:
    """a key that signs the endpoint's deliveries now; never what signs, only what verifies

    Attributes:
        endpoint_id (str):
        id (str):
        scheme (SigningKeyScheme):
        public_key (None | str): v1a: the whpk_ public key that verifies this key's signatures; v1: null (the secret is
            never shown again)
        created_at (datetime.datetime):  Example: 2026-01-02T15:04:05.123456Z.
        expires_at (datetime.datetime | None): set while a rotated-out key is in its overlap Example:
            2026-01-02T15:04:05.123456Z.
    """

    endpoint_id: str
    id: str
    scheme: SigningKeyScheme
    public_key: None | str
    created_at: datetime.datetime
    expires_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        endpoint_id = self.endpoint_id

        id = self.id

        scheme = self.scheme.value

        public_key: None | str
        public_key = self.public_key

        created_at = self.created_at.isoformat()

        expires_at: None | str
        if isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "endpoint_id": endpoint_id,
                "id": id,
                "scheme": scheme,
                "public_key": public_key,
                "created_at": created_at,
                "expires_at": expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = d.pop("endpoint_id")

        id = d.pop("id")

        scheme = SigningKeyScheme(d.pop("scheme"))

        def _parse_public_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        public_key = _parse_public_key(d.pop("public_key"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_expires_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        expires_at = _parse_expires_at(d.pop("expires_at"))

        signing_key = cls(
            endpoint_id=endpoint_id,
            id=id,
            scheme=scheme,
            public_key=public_key,
            created_at=created_at,
            expires_at=expires_at,
        )

        signing_key.additional_properties = d
        return signing_key

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
