"""create_endpoint.py PARTNER URL: an endpoint of the partner that receives every event type at
URL. Prints its id and its signing secret (shown only in this answer) as shell assignments."""

import sys

from config import admin_client, check
from hookstream_admin_client.api.endpoints import create_endpoint
from hookstream_admin_client.models import EndpointCreate

if len(sys.argv) != 3:
    sys.exit("usage: python create_endpoint.py PARTNER URL")
partner, url = sys.argv[1:]

with admin_client() as client:
    endpoint = check(
        create_endpoint.sync_detailed(
            partner,
            client=client,
            body=EndpointCreate(url=url, event_types=["*"], description="created by the Python client's example"),
        )
    )
print(f"ENDPOINT_ID={endpoint.id}")
print(f"WEBHOOK_SECRET={endpoint.secret}")
