from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.event_page import EventPage
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    pid: str,
    *,
    limit: int | Unset = 100,
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["after"] = after

    params["types"] = types

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/partners/{pid}/events".format(
            pid=quote(str(pid), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EventPage | Problem | None:
    if response.status_code == 200:
        response_200 = EventPage.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 410:
        response_410 = Problem.from_dict(response.json())

        return response_410

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[EventPage | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    pid: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
) -> Response[EventPage | Problem]:
    """The cursor feed: the partner's events after a cursor, from the compacted event log

     Each event is the envelope as committed, in the schema version it was written in, which its
    schema_version states: usage.finalized may appear at version 1 (cost.value, a decimal string) and at
    version 2 (cost.amount_micros, integer millionths); GET /v1/event-types lists every version with its
    schema. Webhooks, unlike the feed, arrive in the version the endpoint is pinned to.

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        after (str | Unset):
        types (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventPage | Problem]
    """

    kwargs = _get_kwargs(
        pid=pid,
        limit=limit,
        after=after,
        types=types,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    pid: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
) -> EventPage | Problem | None:
    """The cursor feed: the partner's events after a cursor, from the compacted event log

     Each event is the envelope as committed, in the schema version it was written in, which its
    schema_version states: usage.finalized may appear at version 1 (cost.value, a decimal string) and at
    version 2 (cost.amount_micros, integer millionths); GET /v1/event-types lists every version with its
    schema. Webhooks, unlike the feed, arrive in the version the endpoint is pinned to.

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        after (str | Unset):
        types (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventPage | Problem
    """

    return sync_detailed(
        pid=pid,
        client=client,
        limit=limit,
        after=after,
        types=types,
    ).parsed


async def asyncio_detailed(
    pid: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
) -> Response[EventPage | Problem]:
    """The cursor feed: the partner's events after a cursor, from the compacted event log

     Each event is the envelope as committed, in the schema version it was written in, which its
    schema_version states: usage.finalized may appear at version 1 (cost.value, a decimal string) and at
    version 2 (cost.amount_micros, integer millionths); GET /v1/event-types lists every version with its
    schema. Webhooks, unlike the feed, arrive in the version the endpoint is pinned to.

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        after (str | Unset):
        types (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventPage | Problem]
    """

    kwargs = _get_kwargs(
        pid=pid,
        limit=limit,
        after=after,
        types=types,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    pid: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
) -> EventPage | Problem | None:
    """The cursor feed: the partner's events after a cursor, from the compacted event log

     Each event is the envelope as committed, in the schema version it was written in, which its
    schema_version states: usage.finalized may appear at version 1 (cost.value, a decimal string) and at
    version 2 (cost.amount_micros, integer millionths); GET /v1/event-types lists every version with its
    schema. Webhooks, unlike the feed, arrive in the version the endpoint is pinned to.

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        after (str | Unset):
        types (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventPage | Problem
    """

    return (
        await asyncio_detailed(
            pid=pid,
            client=client,
            limit=limit,
            after=after,
            types=types,
        )
    ).parsed
