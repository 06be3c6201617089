from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.endpoint_patch_ordering import EndpointPatchOrdering
from ..models.endpoint_patch_signature_scheme_type_1 import EndpointPatchSignatureSchemeType1
from ..models.endpoint_patch_signature_scheme_type_2_type_1 import EndpointPatchSignatureSchemeType2Type1
from ..models.endpoint_patch_signature_scheme_type_3_type_1 import EndpointPatchSignatureSchemeType3Type1
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.basic import Basic
    from ..models.client_certificate_request import ClientCertificateRequest
    from ..models.header import Header
    from ..models.oauth_2 import Oauth2
    from ..models.request_headers import RequestHeaders
    from ..models.retry_policy import RetryPolicy


T = TypeVar("T", bound="EndpointPatch")


@_attrs_define
class EndpointPatch:
    """Only the fields given change; null returns a field to its default, and url and event_types, which have none, refuse
    it.

        Attributes:
            url (str | Unset): cannot be null
            description (None | str | Unset): null: no description
            event_types (list[str] | Unset): cannot be null
            schema_version (int | None | Unset): one of the event catalog's schema versions (1 or 2), as on creation; it
                applies to the events fanned out after the change, while deliveries made before keep their bytes on retries;
                null: the newest
            max_in_flight (int | None | Unset): null: the default, 64
            rate_limit_per_sec (float | None | Unset): null: no limit
            ordered (bool | None | Unset): null: not ordered
            ordering (EndpointPatchOrdering | Unset): null: none. Sets ordered with it; ordered false alone ends strict
                order too, ordered true alone keeps it. none: no order; bounded: ordered (one request at a time in order; a
                failing head is held at most the sender's maximum hold, 15 minutes by default, then goes to the retry tiers and
                later events overtake it); strict: ordered, and a failing head is held until it is delivered or its retry
                schedule is exhausted, with no time limit; then it is dead-lettered, the attempt shows order_broken and the
                partner gets endpoint.order_broken
            filter_ (None | str | Unset): replaces the filter; null removes it. A payload filter over the event envelope:
                the endpoint receives only the events of its types for which it holds. Grammar: or-separated and-terms of
                comparisons, `not` and parentheses; a comparison is `path == value`, `!=`, `<`, `<=`, `>`, `>=` (numbers only),
                `path in [v1, v2]`, `path not in [...]` or `exists(path)`. A path starts at an envelope field (event_id, type,
                occurred_at, partner_id, subject, schema_version, correlation_id, data) and goes on with `.name`, `[index]` or
                `["key"]`; values are JSON strings, numbers, true, false or null. A number compares exactly with numbers and
                decimal strings ("12.50"); a missing path makes every comparison false but != and not in. Example:
                `data.amount.value >= 100 and data.source in ["purchase", "refund"]`. At most 2048 bytes, 16 levels of nesting,
                64 values per list, 16 segments per path, numbers of exponent -100 to 100 in scientific notation (1e-400 is
                refused), and a cost of at most 20, where each comparison costs 1 plus the segments of its path (an in list
                counts once, whatever its length). An invalid filter is refused with 422, the message naming the position (in
                characters, from 1) of the fault.
            retry_policy (None | RetryPolicy | Unset): replaces the whole policy; null removes it
            headers (None | RequestHeaders | Unset): replaces all extra headers; null or {} removes them
            auth (Basic | Header | None | Oauth2 | Unset): replaces the authentication (a whole object, with its secret);
                null removes it
            client_certificate (ClientCertificateRequest | None | Unset): replaces the client certificate; null removes it
            egress_proxy (None | str | Unset): null returns to the deployment's default route. The name of one of the
                deployment's forward proxies (HOOKSTREAM_EGRESS_PROXIES) this endpoint's requests and token requests go through
                by HTTP CONNECT; null: the deployment's default route (HOOKSTREAM_EGRESS_PROXY, or direct). The egress guard
                checks the destination either way.
            signature_scheme (EndpointPatchSignatureSchemeType1 | EndpointPatchSignatureSchemeType2Type1 |
                EndpointPatchSignatureSchemeType3Type1 | None | Unset): null: v1. A change of scheme is a rotation: a key of the
                new scheme is made and the current keys sign beside it for the configured rotation overlap (the header then
                carries a v1 and a v1a entry); moving to v1 returns the new secret in `secret`, shown only there. Naming the
                current scheme changes no key.
    """

    url: str | Unset = UNSET
    description: None | str | Unset = UNSET
    event_types: list[str] | Unset = UNSET
    schema_version: int | None | Unset = UNSET
    max_in_flight: int | None | Unset = UNSET
    rate_limit_per_sec: float | None | Unset = UNSET
    ordered: bool | None | Unset = UNSET
    ordering: EndpointPatchOrdering | Unset = UNSET
    filter_: None | str | Unset = UNSET
    retry_policy: None | RetryPolicy | Unset = UNSET
    headers: None | RequestHeaders | Unset = UNSET
    auth: Basic | Header | None | Oauth2 | Unset = UNSET
    client_certificate: ClientCertificateRequest | None | Unset = UNSET
    egress_proxy: None | str | Unset = UNSET
    signature_scheme: (
        EndpointPatchSignatureSchemeType1
        | EndpointPatchSignatureSchemeType2Type1
        | EndpointPatchSignatureSchemeType3Type1
        | None
        | Unset
    ) = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.basic import Basic  # noqa: PLC0415
        from ..models.client_certificate_request import ClientCertificateRequest  # noqa: PLC0415
        from ..models.header import Header  # noqa: PLC0415
        from ..models.oauth_2 import Oauth2  # noqa: PLC0415
        from ..models.request_headers import RequestHeaders  # noqa: PLC0415
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415

        url = self.url

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        event_types: list[str] | Unset = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = self.event_types

        schema_version: int | None | Unset
        if isinstance(self.schema_version, Unset):
            schema_version = UNSET
        else:
            schema_version = self.schema_version

        max_in_flight: int | None | Unset
        if isinstance(self.max_in_flight, Unset):
            max_in_flight = UNSET
        else:
            max_in_flight = self.max_in_flight

        rate_limit_per_sec: float | None | Unset
        if isinstance(self.rate_limit_per_sec, Unset):
            rate_limit_per_sec = UNSET
        else:
            rate_limit_per_sec = self.rate_limit_per_sec

        ordered: bool | None | Unset
        if isinstance(self.ordered, Unset):
            ordered = UNSET
        else:
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

        headers: dict[str, Any] | None | Unset
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, RequestHeaders):
            headers = self.headers.to_dict()
        else:
            headers = self.headers

        auth: dict[str, Any] | None | Unset
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, Header):
            auth = self.auth.to_dict()
        elif isinstance(self.auth, Basic):
            auth = self.auth.to_dict()
        elif isinstance(self.auth, Oauth2):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        client_certificate: dict[str, Any] | None | Unset
        if isinstance(self.client_certificate, Unset):
            client_certificate = UNSET
        elif isinstance(self.client_certificate, ClientCertificateRequest):
            client_certificate = self.client_certificate.to_dict()
        else:
            client_certificate = self.client_certificate

        egress_proxy: None | str | Unset
        if isinstance(self.egress_proxy, Unset):
            egress_proxy = UNSET
        else:
            egress_proxy = self.egress_proxy

        signature_scheme: None | str | Unset
        if isinstance(self.signature_scheme, Unset):
            signature_scheme = UNSET
        elif isinstance(self.signature_scheme, EndpointPatchSignatureSchemeType1):
            signature_scheme = self.signature_scheme.value
        elif isinstance(self.signature_scheme, EndpointPatchSignatureSchemeType2Type1):
            signature_scheme = self.signature_scheme.value
        elif isinstance(self.signature_scheme, EndpointPatchSignatureSchemeType3Type1):
            signature_scheme = self.signature_scheme.value
        else:
            signature_scheme = self.signature_scheme

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if url is not UNSET:
            field_dict["url"] = url
        if description is not UNSET:
            field_dict["description"] = description
        if event_types is not UNSET:
            field_dict["event_types"] = event_types
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
        url = d.pop("url", UNSET)

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        event_types = cast(list[str], d.pop("event_types", UNSET))

        def _parse_schema_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        schema_version = _parse_schema_version(d.pop("schema_version", UNSET))

        def _parse_max_in_flight(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_in_flight = _parse_max_in_flight(d.pop("max_in_flight", UNSET))

        def _parse_rate_limit_per_sec(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        rate_limit_per_sec = _parse_rate_limit_per_sec(d.pop("rate_limit_per_sec", UNSET))

        def _parse_ordered(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        ordered = _parse_ordered(d.pop("ordered", UNSET))

        _ordering = d.pop("ordering", UNSET)
        ordering: EndpointPatchOrdering | Unset
        if isinstance(_ordering, Unset):
            ordering = UNSET
        else:
            ordering = EndpointPatchOrdering(_ordering)

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

        def _parse_headers(data: object) -> None | RequestHeaders | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                headers_type_0 = RequestHeaders.from_dict(data)

                return headers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RequestHeaders | Unset, data)

        headers = _parse_headers(d.pop("headers", UNSET))

        def _parse_auth(data: object) -> Basic | Header | None | Oauth2 | Unset:
            if data is None:
                return data
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
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_auth_request_oauth_2 = Oauth2.from_dict(data)

                return componentsschemas_auth_request_oauth_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Basic | Header | None | Oauth2 | Unset, data)

        auth = _parse_auth(d.pop("auth", UNSET))

        def _parse_client_certificate(data: object) -> ClientCertificateRequest | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                client_certificate_type_0 = ClientCertificateRequest.from_dict(data)

                return client_certificate_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ClientCertificateRequest | None | Unset, data)

        client_certificate = _parse_client_certificate(d.pop("client_certificate", UNSET))

        def _parse_egress_proxy(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        egress_proxy = _parse_egress_proxy(d.pop("egress_proxy", UNSET))

        def _parse_signature_scheme(
            data: object,
        ) -> (
            EndpointPatchSignatureSchemeType1
            | EndpointPatchSignatureSchemeType2Type1
            | EndpointPatchSignatureSchemeType3Type1
            | None
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                signature_scheme_type_1 = EndpointPatchSignatureSchemeType1(data)

                return signature_scheme_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                signature_scheme_type_2_type_1 = EndpointPatchSignatureSchemeType2Type1(data)

                return signature_scheme_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                signature_scheme_type_3_type_1 = EndpointPatchSignatureSchemeType3Type1(data)

                return signature_scheme_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                EndpointPatchSignatureSchemeType1
                | EndpointPatchSignatureSchemeType2Type1
                | EndpointPatchSignatureSchemeType3Type1
                | None
                | Unset,
                data,
            )

        signature_scheme = _parse_signature_scheme(d.pop("signature_scheme", UNSET))

        endpoint_patch = cls(
            url=url,
            description=description,
            event_types=event_types,
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

        return endpoint_patch
