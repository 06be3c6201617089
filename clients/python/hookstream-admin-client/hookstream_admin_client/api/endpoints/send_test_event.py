from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.empty import Empty
from ...models.problem import Problem
from ...models.test_accepted import TestAccepted
from ...types import UNSET, Response, Unset


def _get_kwargs(
    pid: str,
    eid: str,
    *,
    body: Empty | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/partners/{pid}/endpoints/{eid}/test".format(
            pid=quote(str(pid), safe=""),
            eid=quote(str(eid), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | TestAccepted | None:
    if response.status_code == 202:
        response_202 = TestAccepted.from_dict(response.json())

        return response_202

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

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | TestAccepted]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    pid: str,
    eid: str,
    *,
    client: AuthenticatedClient,
    body: Empty | Unset = UNSET,
) -> Response[Problem | TestAccepted]:
    """Send a webhook.test event to this endpoint only

     Takes an Idempotency-Key header (see the API description): a repeat gets the first answer. Every
    answer once the caller is let through to the partner (all but 401, 403 and another partner's 404)
    states this route's per-minute quota in RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset.

    Args:
        pid (str):
        eid (str):
        body (Empty | Unset): no fields; the body may also be omitted

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TestAccepted]
    """

    kwargs = _get_kwargs(
        pid=pid,
        eid=eid,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    pid: str,
    eid: str,
    *,
    client: AuthenticatedClient,
    body: Empty | Unset = UNSET,
) -> Problem | TestAccepted | None:
    """Send a webhook.test event to this endpoint only

     Takes an Idempotency-Key header (see the API description): a repeat gets the first answer. Every
    answer once the caller is let through to the partner (all but 401, 403 and another partner's 404)
    states this route's per-minute quota in RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset.

    Args:
        pid (str):
        eid (str):
        body (Empty | Unset): no fields; the body may also be omitted

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TestAccepted
    """

    return sync_detailed(
        pid=pid,
        eid=eid,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    pid: str,
    eid: str,
    *,
    client: AuthenticatedClient,
    body: Empty | Unset = UNSET,
) -> Response[Problem | TestAccepted]:
    """Send a webhook.test event to this endpoint only

     Takes an Idempotency-Key header (see the API description): a repeat gets the first answer. Every
    answer once the caller is let through to the partner (all but 401, 403 and another partner's 404)
    states this route's per-minute quota in RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset.

    Args:
        pid (str):
        eid (str):
        body (Empty | Unset): no fields; the body may also be omitted

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TestAccepted]
    """

    kwargs = _get_kwargs(
        pid=pid,
        eid=eid,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    pid: str,
    eid: str,
    *,
    client: AuthenticatedClient,
    body: Empty | Unset = UNSET,
) -> Problem | TestAccepted | None:
    """Send a webhook.test event to this endpoint only

     Takes an Idempotency-Key header (see the API description): a repeat gets the first answer. Every
    answer once the caller is let through to the partner (all but 401, 403 and another partner's 404)
    states this route's per-minute quota in RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset.

    Args:
        pid (str):
        eid (str):
        body (Empty | Unset): no fields; the body may also be omitted

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TestAccepted
    """

    return (
        await asyncio_detailed(
            pid=pid,
            eid=eid,
            client=client,
            body=body,
        )
    ).parsed
