from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ClientCertificateRequest")


@_attrs_define
class ClientCertificateRequest:
    """A client certificate for mTLS, offered whenever the receiver asks for one. Every block of certificate_pem must be a
    CERTIFICATE block that parses as an X.509 certificate (a private key there, whatever its label, is refused with 422,
    never stored); private_key_pem must parse as a private key (PKCS #8, PKCS #1 or SEC 1); the key must belong to the
    leaf, the leaf must not have expired. The key is write-only: sealed like signing secrets and never returned.

        Attributes:
            certificate_pem (str): PEM certificate chain, leaf first
            private_key_pem (str): unencrypted PEM private key (PKCS #8, PKCS #1 or SEC 1)
    """

    certificate_pem: str
    private_key_pem: str

    def to_dict(self) -> dict[str, Any]:
        certificate_pem = self.certificate_pem

        private_key_pem = self.private_key_pem

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "certificate_pem": certificate_pem,
                "private_key_pem": private_key_pem,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        certificate_pem = d.pop("certificate_pem")

        private_key_pem = d.pop("private_key_pem")

        client_certificate_request = cls(
            certificate_pem=certificate_pem,
            private_key_pem=private_key_pem,
        )

        return client_certificate_request
