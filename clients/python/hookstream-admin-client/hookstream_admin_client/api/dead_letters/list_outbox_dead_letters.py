from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.list_outbox_dead_letters_reason import ListOutboxDeadLettersReason
from ...models.outbox_dead_letter_list import OutboxDeadLetterList
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    partner_id: str | Unset = UNSET,
    reason: ListOutboxDeadLettersReason | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params["partner_id"] = partner_id

    json_reason: str | Unset = UNSET
    if not isinstance(reason, Unset):
        json_reason = reason.value

    params["reason"] = json_reason

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/outbox/dead-letters",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> OutboxDeadLetterList | Problem | None:
    if response.status_code == 200:
        response_200 = OutboxDeadLetterList.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[OutboxDeadLetterList | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    partner_id: str | Unset = UNSET,
    reason: ListOutboxDeadLettersReason | Unset = UNSET,
) -> Response[OutboxDeadLetterList | Problem]:
    """List the outbox rows cdc refused to publish, with the reasons, newest first

     cdc checks every committed outbox row before it publishes it. A row that is no valid envelope
    (`malformed`), is over the size limit (`too_large`), has a type the event catalog does not know
    (`unknown_type`), a schema version its type is not published at (`schema_version`) or data its
    type's JSON Schema refuses (`invalid_data`) is not published: no partner receives it. It goes to the
    dlq topic and is listed here, once, with the refusal in `detail` (naming the field, e.g.
    `data/amount/value`). Rows are kept for the outbox retention (GET /v1/limits). Operator only: the
    platform wrote these rows and fixes them; partners never see them, their own included.

    Args:
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        partner_id (str | Unset):
        reason (ListOutboxDeadLettersReason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OutboxDeadLetterList | Problem]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        partner_id=partner_id,
        reason=reason,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    partner_id: str | Unset = UNSET,
    reason: ListOutboxDeadLettersReason | Unset = UNSET,
) -> OutboxDeadLetterList | Problem | None:
    """List the outbox rows cdc refused to publish, with the reasons, newest first

     cdc checks every committed outbox row before it publishes it. A row that is no valid envelope
    (`malformed`), is over the size limit (`too_large`), has a type the event catalog does not know
    (`unknown_type`), a schema version its type is not published at (`schema_version`) or data its
    type's JSON Schema refuses (`invalid_data`) is not published: no partner receives it. It goes to the
    dlq topic and is listed here, once, with the refusal in `detail` (naming the field, e.g.
    `data/amount/value`). Rows are kept for the outbox retention (GET /v1/limits). Operator only: the
    platform wrote these rows and fixes them; partners never see them, their own included.

    Args:
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        partner_id (str | Unset):
        reason (ListOutboxDeadLettersReason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OutboxDeadLetterList | Problem
    """

    return sync_detailed(
        client=client,
        limit=limit,
        cursor=cursor,
        partner_id=partner_id,
        reason=reason,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    partner_id: str | Unset = UNSET,
    reason: ListOutboxDeadLettersReason | Unset = UNSET,
) -> Response[OutboxDeadLetterList | Problem]:
    """List the outbox rows cdc refused to publish, with the reasons, newest first

     cdc checks every committed outbox row before it publishes it. A row that is no valid envelope
    (`malformed`), is over the size limit (`too_large`), has a type the event catalog does not know
    (`unknown_type`), a schema version its type is not published at (`schema_version`) or data its
    type's JSON Schema refuses (`invalid_data`) is not published: no partner receives it. It goes to the
    dlq topic and is listed here, once, with the refusal in `detail` (naming the field, e.g.
    `data/amount/value`). Rows are kept for the outbox retention (GET /v1/limits). Operator only: the
    platform wrote these rows and fixes them; partners never see them, their own included.

    Args:
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        partner_id (str | Unset):
        reason (ListOutboxDeadLettersReason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OutboxDeadLetterList | Problem]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        partner_id=partner_id,
        reason=reason,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    partner_id: str | Unset = UNSET,
    reason: ListOutboxDeadLettersReason | Unset = UNSET,
) -> OutboxDeadLetterList | Problem | None:
    """List the outbox rows cdc refused to publish, with the reasons, newest first

     cdc checks every committed outbox row before it publishes it. A row that is no valid envelope
    (`malformed`), is over the size limit (`too_large`), has a type the event catalog does not know
    (`unknown_type`), a schema version its type is not published at (`schema_version`) or data its
    type's JSON Schema refuses (`invalid_data`) is not published: no partner receives it. It goes to the
    dlq topic and is listed here, once, with the refusal in `detail` (naming the field, e.g.
    `data/amount/value`). Rows are kept for the outbox retention (GET /v1/limits). Operator only: the
    platform wrote these rows and fixes them; partners never see them, their own included.

    Args:
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        partner_id (str | Unset):
        reason (ListOutboxDeadLettersReason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OutboxDeadLetterList | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            cursor=cursor,
            partner_id=partner_id,
            reason=reason,
        )
    ).parsed
