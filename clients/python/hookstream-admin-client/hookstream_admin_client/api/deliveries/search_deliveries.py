import datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.delivery_list import DeliveryList
from ...models.problem import Problem
from ...models.search_deliveries_error_category import SearchDeliveriesErrorCategory
from ...models.search_deliveries_state import SearchDeliveriesState
from ...types import UNSET, Response, Unset


def _get_kwargs(
    pid: str,
    *,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    event_id: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: SearchDeliveriesState | Unset = UNSET,
    error_category: SearchDeliveriesErrorCategory | Unset = UNSET,
    status: int | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params["event_id"] = event_id

    params["endpoint_id"] = endpoint_id

    json_state: str | Unset = UNSET
    if not isinstance(state, Unset):
        json_state = state.value

    params["state"] = json_state

    json_error_category: str | Unset = UNSET
    if not isinstance(error_category, Unset):
        json_error_category = error_category.value

    params["error_category"] = json_error_category

    params["status"] = status

    json_since: str | Unset = UNSET
    if not isinstance(since, Unset):
        json_since = since.isoformat()
    params["since"] = json_since

    json_until: str | Unset = UNSET
    if not isinstance(until, Unset):
        json_until = until.isoformat()
    params["until"] = json_until

    params["type"] = type_

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/partners/{pid}/deliveries".format(
            pid=quote(str(pid), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DeliveryList | Problem | None:
    if response.status_code == 200:
        response_200 = DeliveryList.from_dict(response.json())

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
) -> Response[DeliveryList | Problem]:
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
    event_id: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: SearchDeliveriesState | Unset = UNSET,
    error_category: SearchDeliveriesErrorCategory | Unset = UNSET,
    status: int | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
) -> Response[DeliveryList | Problem]:
    """Search the partner's deliveries across its endpoints

     Did partner X get event Y? The partner's deliveries, newest first, by event id, endpoint, state, the
    last attempt's error category and HTTP status, event type and creation time; cursor-paged.
    Deliveries of deleted endpoints are found while the history keeps them.

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        event_id (str | Unset):
        endpoint_id (str | Unset):
        state (SearchDeliveriesState | Unset):
        error_category (SearchDeliveriesErrorCategory | Unset):
        status (int | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        type_ (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryList | Problem]
    """

    kwargs = _get_kwargs(
        pid=pid,
        limit=limit,
        cursor=cursor,
        event_id=event_id,
        endpoint_id=endpoint_id,
        state=state,
        error_category=error_category,
        status=status,
        since=since,
        until=until,
        type_=type_,
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
    event_id: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: SearchDeliveriesState | Unset = UNSET,
    error_category: SearchDeliveriesErrorCategory | Unset = UNSET,
    status: int | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
) -> DeliveryList | Problem | None:
    """Search the partner's deliveries across its endpoints

     Did partner X get event Y? The partner's deliveries, newest first, by event id, endpoint, state, the
    last attempt's error category and HTTP status, event type and creation time; cursor-paged.
    Deliveries of deleted endpoints are found while the history keeps them.

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        event_id (str | Unset):
        endpoint_id (str | Unset):
        state (SearchDeliveriesState | Unset):
        error_category (SearchDeliveriesErrorCategory | Unset):
        status (int | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        type_ (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryList | Problem
    """

    return sync_detailed(
        pid=pid,
        client=client,
        limit=limit,
        cursor=cursor,
        event_id=event_id,
        endpoint_id=endpoint_id,
        state=state,
        error_category=error_category,
        status=status,
        since=since,
        until=until,
        type_=type_,
    ).parsed


async def asyncio_detailed(
    pid: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    event_id: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: SearchDeliveriesState | Unset = UNSET,
    error_category: SearchDeliveriesErrorCategory | Unset = UNSET,
    status: int | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
) -> Response[DeliveryList | Problem]:
    """Search the partner's deliveries across its endpoints

     Did partner X get event Y? The partner's deliveries, newest first, by event id, endpoint, state, the
    last attempt's error category and HTTP status, event type and creation time; cursor-paged.
    Deliveries of deleted endpoints are found while the history keeps them.

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        event_id (str | Unset):
        endpoint_id (str | Unset):
        state (SearchDeliveriesState | Unset):
        error_category (SearchDeliveriesErrorCategory | Unset):
        status (int | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        type_ (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryList | Problem]
    """

    kwargs = _get_kwargs(
        pid=pid,
        limit=limit,
        cursor=cursor,
        event_id=event_id,
        endpoint_id=endpoint_id,
        state=state,
        error_category=error_category,
        status=status,
        since=since,
        until=until,
        type_=type_,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    pid: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    event_id: str | Unset = UNSET,
    endpoint_id: str | Unset = UNSET,
    state: SearchDeliveriesState | Unset = UNSET,
    error_category: SearchDeliveriesErrorCategory | Unset = UNSET,
    status: int | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
) -> DeliveryList | Problem | None:
    """Search the partner's deliveries across its endpoints

     Did partner X get event Y? The partner's deliveries, newest first, by event id, endpoint, state, the
    last attempt's error category and HTTP status, event type and creation time; cursor-paged.
    Deliveries of deleted endpoints are found while the history keeps them.

    Args:
        pid (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        event_id (str | Unset):
        endpoint_id (str | Unset):
        state (SearchDeliveriesState | Unset):
        error_category (SearchDeliveriesErrorCategory | Unset):
        status (int | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        type_ (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryList | Problem
    """

    return (
        await asyncio_detailed(
            pid=pid,
            client=client,
            limit=limit,
            cursor=cursor,
            event_id=event_id,
            endpoint_id=endpoint_id,
            state=state,
            error_category=error_category,
            status=status,
            since=since,
            until=until,
            type_=type_,
        )
    ).parsed
