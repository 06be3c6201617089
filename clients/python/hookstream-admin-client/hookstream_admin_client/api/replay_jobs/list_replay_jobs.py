from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.list_replay_jobs_state import ListReplayJobsState
from ...models.problem import Problem
from ...models.replay_job_list import ReplayJobList
from ...types import UNSET, Response, Unset


def _get_kwargs(
    pid: str,
    *,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: ListReplayJobsState | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params["endpoint_id"] = endpoint_id

    json_state: str | Unset = UNSET
    if not isinstance(state, Unset):
        json_state = state.value

    params["state"] = json_state

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/partners/{pid}/replay-jobs".format(
            pid=quote(str(pid), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | ReplayJobList | None:
    if response.status_code == 200:
        response_200 = ReplayJobList.from_dict(response.json())

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | ReplayJobList]:
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
    cursor: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: ListReplayJobsState | Unset = UNSET,
) -> Response[Problem | ReplayJobList]:
    """The partner's replay jobs, newest first

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        endpoint_id (str | Unset):
        state (ListReplayJobsState | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJobList]
    """

    kwargs = _get_kwargs(
        pid=pid,
        limit=limit,
        cursor=cursor,
        endpoint_id=endpoint_id,
        state=state,
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
    cursor: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: ListReplayJobsState | Unset = UNSET,
) -> Problem | ReplayJobList | None:
    """The partner's replay jobs, newest first

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        endpoint_id (str | Unset):
        state (ListReplayJobsState | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayJobList
    """

    return sync_detailed(
        pid=pid,
        client=client,
        limit=limit,
        cursor=cursor,
        endpoint_id=endpoint_id,
        state=state,
    ).parsed


async def asyncio_detailed(
    pid: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: ListReplayJobsState | Unset = UNSET,
) -> Response[Problem | ReplayJobList]:
    """The partner's replay jobs, newest first

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        endpoint_id (str | Unset):
        state (ListReplayJobsState | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJobList]
    """

    kwargs = _get_kwargs(
        pid=pid,
        limit=limit,
        cursor=cursor,
        endpoint_id=endpoint_id,
        state=state,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    pid: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: ListReplayJobsState | Unset = UNSET,
) -> Problem | ReplayJobList | None:
    """The partner's replay jobs, newest first

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        endpoint_id (str | Unset):
        state (ListReplayJobsState | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayJobList
    """

    return (
        await asyncio_detailed(
            pid=pid,
            client=client,
            limit=limit,
            cursor=cursor,
            endpoint_id=endpoint_id,
            state=state,
        )
    ).parsed
