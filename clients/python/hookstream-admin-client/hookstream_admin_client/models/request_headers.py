from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RequestHeaders")


@_attrs_define
class RequestHeaders:
    """Extra request headers, sent with every request. Names are RFC 9110 tokens of at most 64 bytes (case-insensitive,
    each at most once); values printable ASCII, at most 1024 bytes. Reserved, refused: the signature headers (webhook-
    id, webhook-timestamp, webhook-signature and any webhook-*), Content-Type, Content-Length, Content-Encoding, Host,
    User-Agent, Expect, the hop-by-hop headers (Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Transfer-
    Encoding, Upgrade, Proxy-Authenticate) and the credential headers Authorization and Proxy-Authorization (credentials
    go in auth, where they are sealed and never shown). At most 20. Values are shown by GET: put no secret here.

    """

    additional_properties: dict[str, str] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        request_headers = cls()

        request_headers.additional_properties = d
        return request_headers

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> str:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: str) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
