from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    pid: str,
    *,
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    params: dict[str, Any] = {}

    params["after"] = after

    params["types"] = types

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/partners/{pid}/events/stream".format(
            pid=quote(str(pid), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | str]:
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
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Response[Problem | str]:
    """The cursor feed as it happens: the partner's events in server-sent events (hookstream listen)

     The partner's events, in log order, from the same partition, scope and cursors as the cursor feed.
    Each event is one SSE message: `id` is the feed cursor after the event, `event` its type, `data` its
    envelope (a line of the envelope per `data` field). A message with only an `id` moves the cursor
    past records the partner does not see; a comment (`: heartbeat`) comes whenever the stream was
    silent for 15 seconds. Reconnect with `Last-Event-ID` (or `?after=`) set to the last id received to
    resume with no gap and no duplicate; without either the stream starts at the end of the log. A
    cursor that stops being servable while streaming (past the retention, 410) or a partner key that
    stops verifying (revoked, or its partner deleted, 401: the key is checked again before each batch of
    events and every 5 seconds while idle, so no event committed after the revocation is sent) ends the
    stream with an `error` message carrying the error body; a fault of a dependency ends it without one,
    and the client reconnects from its last id.

    Args:
        pid (str):
        after (str | Unset):
        types (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        pid=pid,
        after=after,
        types=types,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    pid: str,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Problem | str | None:
    """The cursor feed as it happens: the partner's events in server-sent events (hookstream listen)

     The partner's events, in log order, from the same partition, scope and cursors as the cursor feed.
    Each event is one SSE message: `id` is the feed cursor after the event, `event` its type, `data` its
    envelope (a line of the envelope per `data` field). A message with only an `id` moves the cursor
    past records the partner does not see; a comment (`: heartbeat`) comes whenever the stream was
    silent for 15 seconds. Reconnect with `Last-Event-ID` (or `?after=`) set to the last id received to
    resume with no gap and no duplicate; without either the stream starts at the end of the log. A
    cursor that stops being servable while streaming (past the retention, 410) or a partner key that
    stops verifying (revoked, or its partner deleted, 401: the key is checked again before each batch of
    events and every 5 seconds while idle, so no event committed after the revocation is sent) ends the
    stream with an `error` message carrying the error body; a fault of a dependency ends it without one,
    and the client reconnects from its last id.

    Args:
        pid (str):
        after (str | Unset):
        types (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return sync_detailed(
        pid=pid,
        client=client,
        after=after,
        types=types,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    pid: str,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Response[Problem | str]:
    """The cursor feed as it happens: the partner's events in server-sent events (hookstream listen)

     The partner's events, in log order, from the same partition, scope and cursors as the cursor feed.
    Each event is one SSE message: `id` is the feed cursor after the event, `event` its type, `data` its
    envelope (a line of the envelope per `data` field). A message with only an `id` moves the cursor
    past records the partner does not see; a comment (`: heartbeat`) comes whenever the stream was
    silent for 15 seconds. Reconnect with `Last-Event-ID` (or `?after=`) set to the last id received to
    resume with no gap and no duplicate; without either the stream starts at the end of the log. A
    cursor that stops being servable while streaming (past the retention, 410) or a partner key that
    stops verifying (revoked, or its partner deleted, 401: the key is checked again before each batch of
    events and every 5 seconds while idle, so no event committed after the revocation is sent) ends the
    stream with an `error` message carrying the error body; a fault of a dependency ends it without one,
    and the client reconnects from its last id.

    Args:
        pid (str):
        after (str | Unset):
        types (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        pid=pid,
        after=after,
        types=types,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    pid: str,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
    types: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Problem | str | None:
    """The cursor feed as it happens: the partner's events in server-sent events (hookstream listen)

     The partner's events, in log order, from the same partition, scope and cursors as the cursor feed.
    Each event is one SSE message: `id` is the feed cursor after the event, `event` its type, `data` its
    envelope (a line of the envelope per `data` field). A message with only an `id` moves the cursor
    past records the partner does not see; a comment (`: heartbeat`) comes whenever the stream was
    silent for 15 seconds. Reconnect with `Last-Event-ID` (or `?after=`) set to the last id received to
    resume with no gap and no duplicate; without either the stream starts at the end of the log. A
    cursor that stops being servable while streaming (past the retention, 410) or a partner key that
    stops verifying (revoked, or its partner deleted, 401: the key is checked again before each batch of
    events and every 5 seconds while idle, so no event committed after the revocation is sent) ends the
    stream with an `error` message carrying the error body; a fault of a dependency ends it without one,
    and the client reconnects from its last id.

    Args:
        pid (str):
        after (str | Unset):
        types (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return (
        await asyncio_detailed(
            pid=pid,
            client=client,
            after=after,
            types=types,
            last_event_id=last_event_id,
        )
    ).parsed
