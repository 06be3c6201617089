"""Where the examples find the admin API: the variables hookstream's own API commands read."""

import os
import sys

from hookstream_admin_client import AuthenticatedClient
from hookstream_admin_client.models import Problem


def admin_client() -> AuthenticatedClient:
    token = os.environ.get("HOOKSTREAM_API_KEY") or os.environ.get("HOOKSTREAM_ADMIN_TOKEN")
    if not token:
        sys.exit(
            "set HOOKSTREAM_ADMIN_TOKEN (the operator token; hookstream dev writes it to "
            ".data/dev-admin-token) or HOOKSTREAM_API_KEY"
        )
    return AuthenticatedClient(
        base_url=os.environ.get("HOOKSTREAM_ADMIN_URL") or "http://127.0.0.1:8080", token=token
    )


class APIError(Exception):
    """A refusal of the API: its HTTP status and its RFC 9457 problem."""

    def __init__(self, status: int, problem: Problem | None):
        self.status, self.problem = status, problem
        detail = f"{problem.code.value}: {problem.detail}" if problem else "no problem details"
        super().__init__(f"hookstream admin API: {status} {detail}")


def check(response):
    """The parsed answer of a success, else an APIError."""
    if 200 <= response.status_code < 300 and not isinstance(response.parsed, Problem):
        return response.parsed
    raise APIError(response.status_code, response.parsed if isinstance(response.parsed, Problem) else None)
