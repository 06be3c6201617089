from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.empty import Empty
from ...models.problem import Problem
from ...models.replay_job import ReplayJob
from ...types import UNSET, Response, Unset


def _get_kwargs(
    pid: str,
    jid: str,
    *,
    body: Empty | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/partners/{pid}/replay-jobs/{jid}/cancel".format(
            pid=quote(str(pid), safe=""),
            jid=quote(str(jid), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

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
    body: Empty | Unset = UNSET,
) -> Response[Problem | ReplayJob]:
    """Cancel a queued or running replay job

     The job is canceled at once; a runner holding it stops before its next batch, so at most the batch
    in flight is still replayed. Canceling a canceled job changes nothing; a finished one answers 409.

    Takes an Idempotency-Key header (see the API description): a repeat gets the first answer.

    Args:
        pid (str):
        jid (str):
        body (Empty | Unset): no fields; the body may also be omitted

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJob]
    """

    kwargs = _get_kwargs(
        pid=pid,
        jid=jid,
        body=body,
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
    body: Empty | Unset = UNSET,
) -> Problem | ReplayJob | None:
    """Cancel a queued or running replay job

     The job is canceled at once; a runner holding it stops before its next batch, so at most the batch
    in flight is still replayed. Canceling a canceled job changes nothing; a finished one answers 409.

    Takes an Idempotency-Key header (see the API description): a repeat gets the first answer.

    Args:
        pid (str):
        jid (str):
        body (Empty | Unset): no fields; the body may also be omitted

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
        body=body,
    ).parsed


async def asyncio_detailed(
    pid: str,
    jid: str,
    *,
    client: AuthenticatedClient,
    body: Empty | Unset = UNSET,
) -> Response[Problem | ReplayJob]:
    """Cancel a queued or running replay job

     The job is canceled at once; a runner holding it stops before its next batch, so at most the batch
    in flight is still replayed. Canceling a canceled job changes nothing; a finished one answers 409.

    Takes an Idempotency-Key header (see the API description): a repeat gets the first answer.

    Args:
        pid (str):
        jid (str):
        body (Empty | Unset): no fields; the body may also be omitted

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayJob]
    """

    kwargs = _get_kwargs(
        pid=pid,
        jid=jid,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    pid: str,
    jid: str,
    *,
    client: AuthenticatedClient,
    body: Empty | Unset = UNSET,
) -> Problem | ReplayJob | None:
    """Cancel a queued or running replay job

     The job is canceled at once; a runner holding it stops before its next batch, so at most the batch
    in flight is still replayed. Canceling a canceled job changes nothing; a finished one answers 409.

    Takes an Idempotency-Key header (see the API description): a repeat gets the first answer.

    Args:
        pid (str):
        jid (str):
        body (Empty | Unset): no fields; the body may also be omitted

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
            body=body,
        )
    ).parsed
