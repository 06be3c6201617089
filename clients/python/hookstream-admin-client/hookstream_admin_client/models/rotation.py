from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.rotation_scheme import RotationScheme
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint import Endpoint


T = TypeVar("T", bound="Rotation")


@_attrs_define
class Rotation:
    """
    Attributes:
        id (str):
        scheme (RotationScheme): the scheme of the new key: the endpoint's signature_scheme
        created_at (datetime.datetime):  Example: 2026-01-02T15:04:05.123456Z.
        previous_secrets_expire_at (datetime.datetime | None):  Example: 2026-01-02T15:04:05.123456Z.
        endpoint (Endpoint):
        secret (str | Unset): whsec_… of a new v1 key; shown only in this response; the previous keys stay active until
            the rotation ends. Absent for v1a
        public_key (str | Unset): the whpk_ public key of a new v1a key (absent for v1); its signing key is never shown
    """

    id: str
    scheme: RotationScheme
    created_at: datetime.datetime
    previous_secrets_expire_at: datetime.datetime | None
    endpoint: Endpoint
    secret: str | Unset = UNSET
    public_key: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        scheme = self.scheme.value

        created_at = self.created_at.isoformat()

        previous_secrets_expire_at: None | str
        if isinstance(self.previous_secrets_expire_at, datetime.datetime):
            previous_secrets_expire_at = self.previous_secrets_expire_at.isoformat()
        else:
            previous_secrets_expire_at = self.previous_secrets_expire_at

        endpoint = self.endpoint.to_dict()

        secret = self.secret

        public_key = self.public_key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "scheme": scheme,
                "created_at": created_at,
                "previous_secrets_expire_at": previous_secrets_expire_at,
                "endpoint": endpoint,
            }
        )
        if secret is not UNSET:
            field_dict["secret"] = secret
        if public_key is not UNSET:
            field_dict["public_key"] = public_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint import Endpoint  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        scheme = RotationScheme(d.pop("scheme"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_previous_secrets_expire_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                previous_secrets_expire_at_type_0 = datetime.datetime.fromisoformat(data)

                return previous_secrets_expire_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        previous_secrets_expire_at = _parse_previous_secrets_expire_at(d.pop("previous_secrets_expire_at"))

        endpoint = Endpoint.from_dict(d.pop("endpoint"))

        secret = d.pop("secret", UNSET)

        public_key = d.pop("public_key", UNSET)

        rotation = cls(
            id=id,
            scheme=scheme,
            created_at=created_at,
            previous_secrets_expire_at=previous_secrets_expire_at,
            endpoint=endpoint,
            secret=secret,
            public_key=public_key,
        )

        rotation.additional_properties = d
        return rotation

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
