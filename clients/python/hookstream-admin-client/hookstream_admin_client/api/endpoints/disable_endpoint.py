from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.disable import Disable
from ...models.endpoint import Endpoint
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    pid: str,
    eid: str,
    *,
    body: Disable,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/partners/{pid}/endpoints/{eid}/disable".format(
            pid=quote(str(pid), safe=""),
            eid=quote(str(eid), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Endpoint | Problem | None:
    if response.status_code == 200:
        response_200 = Endpoint.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Endpoint | Problem]:
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
    body: Disable,
) -> Response[Endpoint | Problem]:
    """Disable an endpoint with a reason; emits endpoint.disabled

     Takes an Idempotency-Key header (see the API description): a repeat gets the first answer.

    Args:
        pid (str):
        eid (str):
        body (Disable):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Endpoint | Problem]
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
    body: Disable,
) -> Endpoint | Problem | None:
    """Disable an endpoint with a reason; emits endpoint.disabled

     Takes an Idempotency-Key header (see the API description): a repeat gets the first answer.

    Args:
        pid (str):
        eid (str):
        body (Disable):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Endpoint | Problem
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
    body: Disable,
) -> Response[Endpoint | Problem]:
    """Disable an endpoint with a reason; emits endpoint.disabled

     Takes an Idempotency-Key header (see the API description): a repeat gets the first answer.

    Args:
        pid (str):
        eid (str):
        body (Disable):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Endpoint | Problem]
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
    body: Disable,
) -> Endpoint | Problem | None:
    """Disable an endpoint with a reason; emits endpoint.disabled

     Takes an Idempotency-Key header (see the API description): a repeat gets the first answer.

    Args:
        pid (str):
        eid (str):
        body (Disable):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Endpoint | Problem
    """

    return (
        await asyncio_detailed(
            pid=pid,
            eid=eid,
            client=client,
            body=body,
        )
    ).parsed
