from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.event_type_list import EventTypeList
from ...models.problem import Problem
from ...types import Response


def _get_kwargs() -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/event-types",
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EventTypeList | Problem | None:
    if response.status_code == 200:
        response_200 = EventTypeList.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[EventTypeList | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
) -> Response[EventTypeList | Problem]:
    """The event catalog with JSON Schemas

     Every event type with its newest schema version, its JSON Schema and example, and every version it
    is published at (versions, each with its schema, example and what changed). An endpoint's
    schema_version pins it to a catalog version: it receives each type in the type's newest version at
    or below the pin (usage.finalized: version 2 since its cost became integer micros, version 1 to
    endpoints pinned to 1).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventTypeList | Problem]
    """

    kwargs = _get_kwargs()

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
) -> EventTypeList | Problem | None:
    """The event catalog with JSON Schemas

     Every event type with its newest schema version, its JSON Schema and example, and every version it
    is published at (versions, each with its schema, example and what changed). An endpoint's
    schema_version pins it to a catalog version: it receives each type in the type's newest version at
    or below the pin (usage.finalized: version 2 since its cost became integer micros, version 1 to
    endpoints pinned to 1).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventTypeList | Problem
    """

    return sync_detailed(
        client=client,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
) -> Response[EventTypeList | Problem]:
    """The event catalog with JSON Schemas

     Every event type with its newest schema version, its JSON Schema and example, and every version it
    is published at (versions, each with its schema, example and what changed). An endpoint's
    schema_version pins it to a catalog version: it receives each type in the type's newest version at
    or below the pin (usage.finalized: version 2 since its cost became integer micros, version 1 to
    endpoints pinned to 1).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventTypeList | Problem]
    """

    kwargs = _get_kwargs()

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
) -> EventTypeList | Problem | None:
    """The event catalog with JSON Schemas

     Every event type with its newest schema version, its JSON Schema and example, and every version it
    is published at (versions, each with its schema, example and what changed). An endpoint's
    schema_version pins it to a catalog version: it receives each type in the type's newest version at
    or below the pin (usage.finalized: version 2 since its cost became integer micros, version 1 to
    endpoints pinned to 1).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventTypeList | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
        )
    ).parsed
