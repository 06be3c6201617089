// send-test-event PARTNER ENDPOINT_ID: a webhook.test event to the endpoint, then its delivery
// read back until it is finished, with every attempt. Exits 1 unless it succeeded.
import { check, type Schemas } from "../src/index.js";
import { adminClient, usage } from "./config.js";

const [partner, endpointId] = process.argv.slice(2);
if (!partner || !endpointId) usage("node dist/examples/send-test-event.js PARTNER ENDPOINT_ID");

const client = adminClient();
const accepted = check(
  await client.POST("/v1/partners/{pid}/endpoints/{eid}/test", {
    params: { path: { pid: partner, eid: endpointId } },
  }),
);
console.log(`test event ${accepted.event_id} queued as delivery ${accepted.delivery_id}`);

// The history is written as the attempts are made: wait until the delivery is finished.
let delivery: Schemas["DeliveryDetail"] | undefined;
for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
  const answer = await client.GET("/v1/partners/{pid}/deliveries/{did}", {
    params: { path: { pid: partner, did: accepted.delivery_id } },
  });
  if (answer.response.status !== 404) {
    delivery = check(answer);
    if (["succeeded", "failed", "skipped"].includes(delivery.state)) break;
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
}
if (!delivery) {
  console.error(`delivery ${accepted.delivery_id} not recorded within 60 s`);
  process.exit(1);
}
console.log(`delivery ${delivery.delivery_id} of ${delivery.event_type}: ${delivery.state} after ${delivery.attempt_count} attempt(s)`);
for (const attempt of delivery.attempts) {
  console.log(`  attempt ${attempt.attempt_no} (${attempt.trigger}): status ${attempt.status ?? "none"}, ${attempt.latency_ms ?? "?"} ms${attempt.error_category ? `, ${attempt.error_category}` : ""}`);
}
process.exit(delivery.state === "succeeded" ? 0 : 1);
