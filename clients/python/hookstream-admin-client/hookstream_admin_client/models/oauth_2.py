from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..models.oauth_2_client_auth_method import Oauth2ClientAuthMethod
from ..types import UNSET, Unset

T = TypeVar("T", bound="Oauth2")


@_attrs_define
class Oauth2:
    """
    Attributes:
        type_ (Literal['oauth2']):
        token_url (str): the token endpoint of the OAuth 2.0 client credentials grant (RFC 6749 section 4.4); checked by
            the egress policy like url, and the token is fetched through the egress guard (and the endpoint's proxy). The
            token is cached until 30 s (at most a fifth of its lifetime) before its expires_in runs out (1 h when absent),
            and fetched anew once when the receiver answers 401 to it
        client_id (str):
        client_secret (str):
        scopes (list[str] | Unset): sent space-separated as scope
        audience (str | Unset): sent as audience (a common extension)
        client_auth_method (Oauth2ClientAuthMethod | Unset):  Default: Oauth2ClientAuthMethod.CLIENT_SECRET_BASIC.
    """

    type_: Literal["oauth2"]
    token_url: str
    client_id: str
    client_secret: str
    scopes: list[str] | Unset = UNSET
    audience: str | Unset = UNSET
    client_auth_method: Oauth2ClientAuthMethod | Unset = Oauth2ClientAuthMethod.CLIENT_SECRET_BASIC

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        token_url = self.token_url

        client_id = self.client_id

        client_secret = self.client_secret

        scopes: list[str] | Unset = UNSET
        if not isinstance(self.scopes, Unset):
            scopes = self.scopes

        audience = self.audience

        client_auth_method: str | Unset = UNSET
        if not isinstance(self.client_auth_method, Unset):
            client_auth_method = self.client_auth_method.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
                "token_url": token_url,
                "client_id": client_id,
                "client_secret": client_secret,
            }
        )
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
        type_ = cast(Literal["oauth2"], d.pop("type"))
        if type_ != "oauth2":
            raise ValueError(f"type must match const 'oauth2', got '{type_}'")

        token_url = d.pop("token_url")

        client_id = d.pop("client_id")

        client_secret = d.pop("client_secret")

        scopes = cast(list[str], d.pop("scopes", UNSET))

        audience = d.pop("audience", UNSET)

        _client_auth_method = d.pop("client_auth_method", UNSET)
        client_auth_method: Oauth2ClientAuthMethod | Unset
        if isinstance(_client_auth_method, Unset):
            client_auth_method = UNSET
        else:
            client_auth_method = Oauth2ClientAuthMethod(_client_auth_method)

        oauth_2 = cls(
            type_=type_,
            token_url=token_url,
            client_id=client_id,
            client_secret=client_secret,
            scopes=scopes,
            audience=audience,
            client_auth_method=client_auth_method,
        )

        return oauth_2
