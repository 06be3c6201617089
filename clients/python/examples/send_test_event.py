"""send_test_event.py PARTNER ENDPOINT_ID: a webhook.test event to the endpoint, then its delivery
read back until it is finished, with every attempt. Exits 1 unless it succeeded."""

import sys
import time

from config import admin_client, check
from hookstream_admin_client.api.deliveries import get_delivery
from hookstream_admin_client.api.endpoints import send_test_event

if len(sys.argv) != 3:
    sys.exit("usage: python send_test_event.py PARTNER ENDPOINT_ID")
partner, endpoint_id = sys.argv[1:]

with admin_client() as client:
    accepted = check(send_test_event.sync_detailed(partner, endpoint_id, client=client))
    print(f"test event {accepted.event_id} queued as delivery {accepted.delivery_id}")

    # The history is written as the attempts are made: wait until the delivery is finished.
    delivery = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        answer = get_delivery.sync_detailed(partner, accepted.delivery_id, client=client)
        if answer.status_code != 404:
            delivery = check(answer)
            if delivery.state in ("succeeded", "failed", "skipped"):
                break
        time.sleep(0.25)

if delivery is None:
    sys.exit(f"delivery {accepted.delivery_id} not recorded within 60 s")
print(
    f"delivery {delivery.delivery_id} of {delivery.event_type}: {delivery.state} "
    f"after {delivery.attempt_count} attempt(s)"
)
for attempt in delivery.attempts:
    # Fields an attempt may lack are UNSET or None, both false.
    status = attempt.status or "none"
    latency = attempt.latency_ms if isinstance(attempt.latency_ms, int) else "?"
    category = f", {attempt.error_category}" if attempt.error_category else ""
    print(f"  attempt {attempt.attempt_no} ({attempt.trigger}): status {status}, {latency} ms{category}")
sys.exit(0 if delivery.state == "succeeded" else 1)
