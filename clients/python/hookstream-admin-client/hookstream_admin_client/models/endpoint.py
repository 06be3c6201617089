from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.endpoint_ordering import EndpointOrdering
from ..models.endpoint_signature_scheme import EndpointSignatureScheme
from ..models.endpoint_status import EndpointStatus

if TYPE_CHECKING:
    from ..models.auth_type_0 import AuthType0
    from ..models.client_certificate_type_0 import ClientCertificateType0
    from ..models.endpoint_headers import EndpointHeaders
    from ..models.endpoint_health import EndpointHealth
    from ..models.retry_policy import RetryPolicy
    from ..models.secret import Secret


T = TypeVar("T", bound="Endpoint")


@_attrs_define
class Endpoint:
    """
    Attributes:
        id (str):
        partner_id (str):
        url (str):
        description (str):
        status (EndpointStatus):
        event_types (list[str]):
        schema_version (int):
        max_in_flight (int):
        rate_limit_per_sec (float | None):
        ordered (bool): true for ordering bounded and strict
        ordering (EndpointOrdering): none: no order; bounded: ordered (one request at a time in order; a failing head is
            held at most the sender's maximum hold, 15 minutes by default, then goes to the retry tiers and later events
            overtake it); strict: ordered, and a failing head is held until it is delivered or its retry schedule is
            exhausted, with no time limit; then it is dead-lettered, the attempt shows order_broken and the partner gets
            endpoint.order_broken
        failing_since (datetime.datetime | None):  Example: 2026-01-02T15:04:05.123456Z.
        disabled_reason (None | str):
        version (int):
        created_at (datetime.datetime):  Example: 2026-01-02T15:04:05.123456Z.
        updated_at (datetime.datetime):  Example: 2026-01-02T15:04:05.123456Z.
        secrets (list[Secret]):
        filter_ (None | str): A payload filter over the event envelope: the endpoint receives only the events of its
            types for which it holds. Grammar: or-separated and-terms of comparisons, `not` and parentheses; a comparison is
            `path == value`, `!=`, `<`, `<=`, `>`, `>=` (numbers only), `path in [v1, v2]`, `path not in [...]` or
            `exists(path)`. A path starts at an envelope field (event_id, type, occurred_at, partner_id, subject,
            schema_version, correlation_id, data) and goes on with `.name`, `[index]` or `["key"]`; values are JSON strings,
            numbers, true, false or null. A number compares exactly with numbers and decimal strings ("12.50"); a missing
            path makes every comparison false but != and not in. Example: `data.amount.value >= 100 and data.source in
            ["purchase", "refund"]`. At most 2048 bytes, 16 levels of nesting, 64 values per list, 16 segments per path,
            numbers of exponent -100 to 100 in scientific notation (1e-400 is refused), and a cost of at most 20, where each
            comparison costs 1 plus the segments of its path (an in list counts once, whatever its length). An invalid
            filter is refused with 422, the message naming the position (in characters, from 1) of the fault. null: every
            event of the subscribed types.
        retry_policy (None | RetryPolicy): null: the deployment's schedule and 4xx policy (GET /v1/limits retry)
        headers (EndpointHeaders): extra request headers ({} for none)
        auth (AuthType0 | None): the endpoint's authentication to the receiver without its secret; null: none
        client_certificate (ClientCertificateType0 | None): the endpoint's client certificate (its key is never shown);
            null: none
        egress_proxy (None | str): The name of one of the deployment's forward proxies (HOOKSTREAM_EGRESS_PROXIES) this
            endpoint's requests and token requests go through by HTTP CONNECT; null: the deployment's default route
            (HOOKSTREAM_EGRESS_PROXY, or direct). The egress guard checks the destination either way.
        health (EndpointHealth): The endpoint's delivery health. The circuit breaker lives in the sender; each attempt
            record states it, and the recorder keeps the newest, so this is the circuit as the newest recorded attempt left
            it.
        signature_scheme (EndpointSignatureScheme): The Standard Webhooks signature scheme of the endpoint's keys: `v1`,
            HMAC-SHA256 under a `whsec_` secret the receiver shares, or `v1a`, ed25519 under a `whsk_` signing key
            hookstream alone holds (sealed at rest, never shown); the receiver verifies with its `whpk_` public key. Both
            sign `msg_id.timestamp.body`; the header entry is `v1,<base64>` or `v1a,<base64>`.
    """

    id: str
    partner_id: str
    url: str
    description: str
    status: EndpointStatus
    event_types: list[str]
    schema_version: int
    max_in_flight: int
    rate_limit_per_sec: float | None
    ordered: bool
    ordering: EndpointOrdering
    failing_since: datetime.datetime | None
    disabled_reason: None | str
    version: int
    created_at: datetime.datetime
    updated_at: datetime.datetime
    secrets: list[Secret]
    filter_: None | str
    retry_policy: None | RetryPolicy
    headers: EndpointHeaders
    auth: AuthType0 | None
    client_certificate: ClientCertificateType0 | None
    egress_proxy: None | str
    health: EndpointHealth
    signature_scheme: EndpointSignatureScheme
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.auth_type_0 import AuthType0  # noqa: PLC0415
        from ..models.client_certificate_type_0 import ClientCertificateType0  # noqa: PLC0415
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415

        id = self.id

        partner_id = self.partner_id

        url = self.url

        description = self.description

        status = self.status.value

        event_types = self.event_types

        schema_version = self.schema_version

        max_in_flight = self.max_in_flight

        rate_limit_per_sec: float | None
        rate_limit_per_sec = self.rate_limit_per_sec

        ordered = self.ordered

        ordering = self.ordering.value

        failing_since: None | str
        if isinstance(self.failing_since, datetime.datetime):
            failing_since = self.failing_since.isoformat()
        else:
            failing_since = self.failing_since

        disabled_reason: None | str
        disabled_reason = self.disabled_reason

        version = self.version

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        secrets = []
        for secrets_item_data in self.secrets:
            secrets_item = secrets_item_data.to_dict()
            secrets.append(secrets_item)

        filter_: None | str
        filter_ = self.filter_

        retry_policy: dict[str, Any] | None
        if isinstance(self.retry_policy, RetryPolicy):
            retry_policy = self.retry_policy.to_dict()
        else:
            retry_policy = self.retry_policy

        headers = self.headers.to_dict()

        auth: dict[str, Any] | None
        if isinstance(self.auth, AuthType0):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        client_certificate: dict[str, Any] | None
        if isinstance(self.client_certificate, ClientCertificateType0):
            client_certificate = self.client_certificate.to_dict()
        else:
            client_certificate = self.client_certificate

        egress_proxy: None | str
        egress_proxy = self.egress_proxy

        health = self.health.to_dict()

        signature_scheme = self.signature_scheme.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "partner_id": partner_id,
                "url": url,
                "description": description,
                "status": status,
                "event_types": event_types,
                "schema_version": schema_version,
                "max_in_flight": max_in_flight,
                "rate_limit_per_sec": rate_limit_per_sec,
                "ordered": ordered,
                "ordering": ordering,
                "failing_since": failing_since,
                "disabled_reason": disabled_reason,
                "version": version,
                "created_at": created_at,
                "updated_at": updated_at,
                "secrets": secrets,
                "filter": filter_,
                "retry_policy": retry_policy,
                "headers": headers,
                "auth": auth,
                "client_certificate": client_certificate,
                "egress_proxy": egress_proxy,
                "health": health,
                "signature_scheme": signature_scheme,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.auth_type_0 import AuthType0  # noqa: PLC0415
        from ..models.client_certificate_type_0 import ClientCertificateType0  # noqa: PLC0415
        from ..models.endpoint_headers import EndpointHeaders  # noqa: PLC0415
        from ..models.endpoint_health import EndpointHealth  # noqa: PLC0415
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415
        from ..models.secret import Secret  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        partner_id = d.pop("partner_id")

        url = d.pop("url")

        description = d.pop("description")

        status = EndpointStatus(d.pop("status"))

        event_types = cast(list[str], d.pop("event_types"))

        schema_version = d.pop("schema_version")

        max_in_flight = d.pop("max_in_flight")

        def _parse_rate_limit_per_sec(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        rate_limit_per_sec = _parse_rate_limit_per_sec(d.pop("rate_limit_per_sec"))

        ordered = d.pop("ordered")

        ordering = EndpointOrdering(d.pop("ordering"))

        def _parse_failing_since(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                failing_since_type_0 = datetime.datetime.fromisoformat(data)

                return failing_since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        failing_since = _parse_failing_since(d.pop("failing_since"))

        def _parse_disabled_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        disabled_reason = _parse_disabled_reason(d.pop("disabled_reason"))

        version = d.pop("version")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        secrets = []
        _secrets = d.pop("secrets")
        for secrets_item_data in _secrets:
            secrets_item = Secret.from_dict(secrets_item_data)

            secrets.append(secrets_item)

        def _parse_filter_(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        filter_ = _parse_filter_(d.pop("filter"))

        def _parse_retry_policy(data: object) -> None | RetryPolicy:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                retry_policy_type_0 = RetryPolicy.from_dict(data)

                return retry_policy_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RetryPolicy, data)

        retry_policy = _parse_retry_policy(d.pop("retry_policy"))

        headers = EndpointHeaders.from_dict(d.pop("headers"))

        def _parse_auth(data: object) -> AuthType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_auth_type_0 = AuthType0.from_dict(data)

                return componentsschemas_auth_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuthType0 | None, data)

        auth = _parse_auth(d.pop("auth"))

        def _parse_client_certificate(data: object) -> ClientCertificateType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_client_certificate_type_0 = ClientCertificateType0.from_dict(data)

                return componentsschemas_client_certificate_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ClientCertificateType0 | None, data)

        client_certificate = _parse_client_certificate(d.pop("client_certificate"))

        def _parse_egress_proxy(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        egress_proxy = _parse_egress_proxy(d.pop("egress_proxy"))

        health = EndpointHealth.from_dict(d.pop("health"))

        signature_scheme = EndpointSignatureScheme(d.pop("signature_scheme"))

        endpoint = cls(
            id=id,
            partner_id=partner_id,
            url=url,
            description=description,
            status=status,
            event_types=event_types,
            schema_version=schema_version,
            max_in_flight=max_in_flight,
            rate_limit_per_sec=rate_limit_per_sec,
            ordered=ordered,
            ordering=ordering,
            failing_since=failing_since,
            disabled_reason=disabled_reason,
            version=version,
            created_at=created_at,
            updated_at=updated_at,
            secrets=secrets,
            filter_=filter_,
            retry_policy=retry_policy,
            headers=headers,
            auth=auth,
            client_certificate=client_certificate,
            egress_proxy=egress_proxy,
            health=health,
            signature_scheme=signature_scheme,
        )

        endpoint.additional_properties = d
        return endpoint

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
