from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ClientCertificateType0")


@_attrs_define
class ClientCertificateType0:
    """the endpoint's client certificate (its key is never shown); null: none

    Attributes:
        subject (str):
        issuer (str):
        not_after (datetime.datetime):  Example: 2026-01-02T15:04:05.123456Z.
        sha256_fingerprint (str): SHA-256 of the leaf certificate's DER, hex
    """

    subject: str
    issuer: str
    not_after: datetime.datetime
    sha256_fingerprint: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        subject = self.subject

        issuer = self.issuer

        not_after = self.not_after.isoformat()

        sha256_fingerprint = self.sha256_fingerprint

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "subject": subject,
                "issuer": issuer,
                "not_after": not_after,
                "sha256_fingerprint": sha256_fingerprint,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        subject = d.pop("subject")

        issuer = d.pop("issuer")

        not_after = datetime.datetime.fromisoformat(d.pop("not_after"))

        sha256_fingerprint = d.pop("sha256_fingerprint")

        client_certificate_type_0 = cls(
            subject=subject,
            issuer=issuer,
            not_after=not_after,
            sha256_fingerprint=sha256_fingerprint,
        )

        client_certificate_type_0.additional_properties = d
        return client_certificate_type_0

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
