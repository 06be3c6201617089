from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.auth_type_0_client_auth_method import AuthType0ClientAuthMethod
from ..models.auth_type_0_type import AuthType0Type
from ..types import UNSET, Unset

T = TypeVar("T", bound="AuthType0")


@_attrs_define
class AuthType0:
    """the endpoint's authentication to the receiver without its secret; null: none

    Attributes:
        type_ (AuthType0Type):
        header_name (str | Unset):
        username (str | Unset):
        token_url (str | Unset):
        client_id (str | Unset):
        scopes (list[str] | Unset):
        audience (str | Unset):
        client_auth_method (AuthType0ClientAuthMethod | Unset):
    """

    type_: AuthType0Type
    header_name: str | Unset = UNSET
    username: str | Unset = UNSET
    token_url: str | Unset = UNSET
    client_id: str | Unset = UNSET
    scopes: list[str] | Unset = UNSET
    audience: str | Unset = UNSET
    client_auth_method: AuthType0ClientAuthMethod | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        header_name = self.header_name

        username = self.username

        token_url = self.token_url

        client_id = self.client_id

        scopes: list[str] | Unset = UNSET
        if not isinstance(self.scopes, Unset):
            scopes = self.scopes

        audience = self.audience

        client_auth_method: str | Unset = UNSET
        if not isinstance(self.client_auth_method, Unset):
            client_auth_method = self.client_auth_method.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
            }
        )
        if header_name is not UNSET:
            field_dict["header_name"] = header_name
        if username is not UNSET:
            field_dict["username"] = username
        if token_url is not UNSET:
            field_dict["token_url"] = token_url
        if client_id is not UNSET:
            field_dict["client_id"] = client_id
        if scopes is not UNSET:
            field_dict["scopes"] = scopes
        if audience is not UNSET:
            field_dict["audience"] = audience
        if client_auth_method is not UNSET:
            field_dict["client_auth_method"] = client_auth_method

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = AuthType0Type(d.pop("type"))

        header_name = d.pop("header_name", UNSET)

        username = d.pop("username", UNSET)

        token_url = d.pop("token_url", UNSET)

        client_id = d.pop("client_id", UNSET)

        scopes = cast(list[str], d.pop("scopes", UNSET))

        audience = d.pop("audience", UNSET)

        _client_auth_method = d.pop("client_auth_method", UNSET)
        client_auth_method: AuthType0ClientAuthMethod | Unset
        if isinstance(_client_auth_method, Unset):
            client_auth_method = UNSET
        else:
            client_auth_method = AuthType0ClientAuthMethod(_client_auth_method)

        auth_type_0 = cls(
            type_=type_,
            header_name=header_name,
            username=username,
            token_url=token_url,
            client_id=client_id,
            scopes=scopes,
            audience=audience,
            client_auth_method=client_auth_method,
        )

        auth_type_0.additional_properties = d
        return auth_type_0

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
