from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.replay_job import ReplayJob
from ...types import Response


def _get_kwargs(
    pid: str,
    jid: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/partners/{pid}/replay-jobs/{jid}".format(
            pid=quote(str(pid), safe=""),
            jid=quote(str(jid), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ReplayJob | None:
    if response.status_code == 200:
        response_200 = ReplayJob.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ReplayJob]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    pid: str,
    jid: str,
    *,
    client: AuthenticatedClient,
) -> Response[Problem | ReplayJob]:
    """Progress of a replay job

    Args:
        pid (str):
        jid (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJob]
    """

    kwargs = _get_kwargs(
        pid=pid,
        jid=jid,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    pid: str,
    jid: str,
    *,
    client: AuthenticatedClient,
) -> Problem | ReplayJob | None:
    """Progress of a replay job

    Args:
        pid (str):
        jid (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayJob
    """

    return sync_detailed(
        pid=pid,
        jid=jid,
        client=client,
    ).parsed


async def asyncio_detailed(
    pid: str,
    jid: str,
    *,
    client: AuthenticatedClient,
) -> Response[Problem | ReplayJob]:
    """Progress of a replay job

    Args:
        pid (str):
        jid (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJob]
    """

    kwargs = _get_kwargs(
        pid=pid,
        jid=jid,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    pid: str,
    jid: str,
    *,
    client: AuthenticatedClient,
) -> Problem | ReplayJob | None:
    """Progress of a replay job

    Args:
        pid (str):
        jid (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayJob
    """

    return (
        await asyncio_detailed(
            pid=pid,
            jid=jid,
            client=client,
        )
    ).parsed
