from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.endpoint_create_ordering import EndpointCreateOrdering
from ..models.endpoint_create_schema_version import EndpointCreateSchemaVersion
from ..models.endpoint_create_signature_scheme import EndpointCreateSignatureScheme
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.basic import Basic
    from ..models.client_certificate_request import ClientCertificateRequest
    from ..models.header import Header
    from ..models.oauth_2 import Oauth2
    from ..models.request_headers import RequestHeaders
    from ..models.retry_policy import RetryPolicy


T = TypeVar("T", bound="EndpointCreate")


@_attrs_define
class EndpointCreate:
    """
    Attributes:
        url (str): HTTPS URL accepted by the egress policy: an allowed port, no embedded credentials, and a host that
            resolves to public addresses only (no loopback, private, link-local or cloud-metadata addresses), without
            control or bidi-control characters (percent-encode them)
        event_types (list[str]):
        description (str | Unset):
        schema_version (EndpointCreateSchemaVersion | Unset): the event catalog's schema version the endpoint is pinned
            to: it receives each event type in the type's newest version at or below it, converted from the version the
            event was written in; usage.finalized is at 2 since its cost became integer micros, every other type at 1.
            Default: the newest. Default: EndpointCreateSchemaVersion.VALUE_2.
        max_in_flight (int | Unset): The most requests in flight to this endpoint at once: the ceiling of the sender's
            adaptive concurrency, which starts at 8 and rises while the endpoint answers fast. Default: 64.
        rate_limit_per_sec (float | None | Unset):
        ordered (bool | Unset):  Default: False.
        ordering (EndpointCreateOrdering | Unset): default: bounded when ordered is true, else none; ordered, if given
            too, must agree. none: no order; bounded: ordered (one request at a time in order; a failing head is held at
            most the sender's maximum hold, 15 minutes by default, then goes to the retry tiers and later events overtake
            it); strict: ordered, and a failing head is held until it is delivered or its retry schedule is exhausted, with
            no time limit; then it is dead-lettered, the attempt shows order_broken and the partner gets
            endpoint.order_broken
        filter_ (None | str | Unset): A payload filter over the event envelope: the endpoint receives only the events of
            its types for which it holds. Grammar: or-separated and-terms of comparisons, `not` and parentheses; a
            comparison is `path == value`, `!=`, `<`, `<=`, `>`, `>=` (numbers only), `path in [v1, v2]`, `path not in
            [...]` or `exists(path)`. A path starts at an envelope field (event_id, type, occurred_at, partner_id, subject,
            schema_version, correlation_id, data) and goes on with `.name`, `[index]` or `["key"]`; values are JSON strings,
            numbers, true, false or null. A number compares exactly with numbers and decimal strings ("12.50"); a missing
            path makes every comparison false but != and not in. Example: `data.amount.value >= 100 and data.source in
            ["purchase", "refund"]`. At most 2048 bytes, 16 levels of nesting, 64 values per list, 16 segments per path,
            numbers of exponent -100 to 100 in scientific notation (1e-400 is refused), and a cost of at most 20, where each
            comparison costs 1 plus the segments of its path (an in list counts once, whatever its length). An invalid
            filter is refused with 422, the message naming the position (in characters, from 1) of the fault.
        retry_policy (None | RetryPolicy | Unset):
        headers (RequestHeaders | Unset): Extra request headers, sent with every request. Names are RFC 9110 tokens of
            at most 64 bytes (case-insensitive, each at most once); values printable ASCII, at most 1024 bytes. Reserved,
            refused: the signature headers (webhook-id, webhook-timestamp, webhook-signature and any webhook-*), Content-
            Type, Content-Length, Content-Encoding, Host, User-Agent, Expect, the hop-by-hop headers (Connection, Keep-
            Alive, Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade, Proxy-Authenticate) and the credential headers
            Authorization and Proxy-Authorization (credentials go in auth, where they are sealed and never shown). At most
            20. Values are shown by GET: put no secret here.
        auth (Basic | Header | Oauth2 | Unset): Authentication to the receiver. Its secret (value, password or
            client_secret; 8 to 4096 printable ASCII bytes) is write-only: sealed with AES-256-GCM under the processes' key
            like signing secrets, never returned, not even by this request, and redacted by value from the delivery evidence
            and the logs. A whole object replaces the previous one.
        client_certificate (ClientCertificateRequest | Unset): A client certificate for mTLS, offered whenever the
            receiver asks for one. Every block of certificate_pem must be a CERTIFICATE block that parses as an X.509
            certificate (a private key there, whatever its label, is refused with 422, never stored); private_key_pem must
            parse as a private key (PKCS #8, PKCS #1 or SEC 1); the key must belong to the leaf, the leaf must not have
            expired. The key is write-only: sealed like signing secrets and never returned.
        egress_proxy (None | str | Unset): The name of one of the deployment's forward proxies
            (HOOKSTREAM_EGRESS_PROXIES) this endpoint's requests and token requests go through by HTTP CONNECT; null: the
            deployment's default route (HOOKSTREAM_EGRESS_PROXY, or direct). The egress guard checks the destination either
            way.
        signature_scheme (EndpointCreateSignatureScheme | Unset): The Standard Webhooks signature scheme of the
            endpoint's keys: `v1`, HMAC-SHA256 under a `whsec_` secret the receiver shares, or `v1a`, ed25519 under a
            `whsk_` signing key hookstream alone holds (sealed at rest, never shown); the receiver verifies with its `whpk_`
            public key. Both sign `msg_id.timestamp.body`; the header entry is `v1,<base64>` or `v1a,<base64>`. Default:
            EndpointCreateSignatureScheme.V1.
    """

    url: str
    event_types: list[str]
    description: str | Unset = UNSET
    schema_version: EndpointCreateSchemaVersion | Unset = EndpointCreateSchemaVersion.VALUE_2
    max_in_flight: int | Unset = 64
    rate_limit_per_sec: float | None | Unset = UNSET
    ordered: bool | Unset = False
    ordering: EndpointCreateOrdering | Unset = UNSET
    filter_: None | str | Unset = UNSET
    retry_policy: None | RetryPolicy | Unset = UNSET
    headers: RequestHeaders | Unset = UNSET
    auth: Basic | Header | Oauth2 | Unset = UNSET
    client_certificate: ClientCertificateRequest | Unset = UNSET
    egress_proxy: None | str | Unset = UNSET
    signature_scheme: EndpointCreateSignatureScheme | Unset = EndpointCreateSignatureScheme.V1

    def to_dict(self) -> dict[str, Any]:
        from ..models.basic import Basic  # noqa: PLC0415
        from ..models.header import Header  # noqa: PLC0415
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415

        url = self.url

        event_types = self.event_types

        description = self.description

        schema_version: int | Unset = UNSET
        if not isinstance(self.schema_version, Unset):
            schema_version = self.schema_version.value

        max_in_flight = self.max_in_flight

        rate_limit_per_sec: float | None | Unset
        if isinstance(self.rate_limit_per_sec, Unset):
            rate_limit_per_sec = UNSET
        else:
            rate_limit_per_sec = self.rate_limit_per_sec

        ordered = self.ordered

        ordering: str | Unset = UNSET
        if not isinstance(self.ordering, Unset):
            ordering = self.ordering.value

        filter_: None | str | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = self.filter_

        retry_policy: dict[str, Any] | None | Unset
        if isinstance(self.retry_policy, Unset):
            retry_policy = UNSET
        elif isinstance(self.retry_policy, RetryPolicy):
            retry_policy = self.retry_policy.to_dict()
        else:
            retry_policy = self.retry_policy

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        auth: dict[str, Any] | Unset
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, Header):
            auth = self.auth.to_dict()
        elif isinstance(self.auth, Basic):
            auth = self.auth.to_dict()
        else:
            auth = self.auth.to_dict()

        client_certificate: dict[str, Any] | Unset = UNSET
        if not isinstance(self.client_certificate, Unset):
            client_certificate = self.client_certificate.to_dict()

        egress_proxy: None | str | Unset
        if isinstance(self.egress_proxy, Unset):
            egress_proxy = UNSET
        else:
            egress_proxy = self.egress_proxy

        signature_scheme: str | Unset = UNSET
        if not isinstance(self.signature_scheme, Unset):
            signature_scheme = self.signature_scheme.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
                "event_types": event_types,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if schema_version is not UNSET:
            field_dict["schema_version"] = schema_version
        if max_in_flight is not UNSET:
            field_dict["max_in_flight"] = max_in_flight
        if rate_limit_per_sec is not UNSET:
            field_dict["rate_limit_per_sec"] = rate_limit_per_sec
        if ordered is not UNSET:
            field_dict["ordered"] = ordered
        if ordering is not UNSET:
            field_dict["ordering"] = ordering
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if retry_policy is not UNSET:
            field_dict["retry_policy"] = retry_policy
        if headers is not UNSET:
            field_dict["headers"] = headers
        if auth is not UNSET:
            field_dict["auth"] = auth
        if client_certificate is not UNSET:
            field_dict["client_certificate"] = client_certificate
        if egress_proxy is not UNSET:
            field_dict["egress_proxy"] = egress_proxy
        if signature_scheme is not UNSET:
            field_dict["signature_scheme"] = signature_scheme

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.basic import Basic  # noqa: PLC0415
        from ..models.client_certificate_request import ClientCertificateRequest  # noqa: PLC0415
        from ..models.header import Header  # noqa: PLC0415
        from ..models.oauth_2 import Oauth2  # noqa: PLC0415
        from ..models.request_headers import RequestHeaders  # noqa: PLC0415
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415

        d = dict(src_dict)
        url = d.pop("url")

        event_types = cast(list[str], d.pop("event_types"))

        description = d.pop("description", UNSET)

        _schema_version = d.pop("schema_version", UNSET)
        schema_version: EndpointCreateSchemaVersion | Unset
        if isinstance(_schema_version, Unset):
            schema_version = UNSET
        else:
            schema_version = EndpointCreateSchemaVersion(_schema_version)

        max_in_flight = d.pop("max_in_flight", UNSET)

        def _parse_rate_limit_per_sec(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        rate_limit_per_sec = _parse_rate_limit_per_sec(d.pop("rate_limit_per_sec", UNSET))

        ordered = d.pop("ordered", UNSET)

        _ordering = d.pop("ordering", UNSET)
        ordering: EndpointCreateOrdering | Unset
        if isinstance(_ordering, Unset):
            ordering = UNSET
        else:
            ordering = EndpointCreateOrdering(_ordering)

        def _parse_filter_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        def _parse_retry_policy(data: object) -> None | RetryPolicy | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                retry_policy_type_0 = RetryPolicy.from_dict(data)

                return retry_policy_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RetryPolicy | Unset, data)

        retry_policy = _parse_retry_policy(d.pop("retry_policy", UNSET))

        _headers = d.pop("headers", UNSET)
        headers: RequestHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = RequestHeaders.from_dict(_headers)

        def _parse_auth(data: object) -> Basic | Header | Oauth2 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_auth_request_header = Header.from_dict(data)

                return componentsschemas_auth_request_header
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_auth_request_basic = Basic.from_dict(data)

                return componentsschemas_auth_request_basic
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_auth_request_oauth_2 = Oauth2.from_dict(data)

            return componentsschemas_auth_request_oauth_2

        auth = _parse_auth(d.pop("auth", UNSET))

        _client_certificate = d.pop("client_certificate", UNSET)
        client_certificate: ClientCertificateRequest | Unset
        if isinstance(_client_certificate, Unset):
            client_certificate = UNSET
        else:
            client_certificate = ClientCertificateRequest.from_dict(_client_certificate)

        def _parse_egress_proxy(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        egress_proxy = _parse_egress_proxy(d.pop("egress_proxy", UNSET))

        _signature_scheme = d.pop("signature_scheme", UNSET)
        signature_scheme: EndpointCreateSignatureScheme | Unset
        if isinstance(_signature_scheme, Unset):
            signature_scheme = UNSET
        else:
            signature_scheme = EndpointCreateSignatureScheme(_signature_scheme)

        endpoint_create = cls(
            url=url,
            event_types=event_types,
            description=description,
            schema_version=schema_version,
            max_in_flight=max_in_flight,
            rate_limit_per_sec=rate_limit_per_sec,
            ordered=ordered,
            ordering=ordering,
            filter_=filter_,
            retry_policy=retry_policy,
            headers=headers,
            auth=auth,
            client_certificate=client_certificate,
            egress_proxy=egress_proxy,
            signature_scheme=signature_scheme,
        )

        return endpoint_create
