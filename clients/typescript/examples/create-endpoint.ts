// create-endpoint PARTNER URL: an endpoint of the partner that receives every event type at
// URL. Prints its id and its signing secret (shown only in this answer) as shell assignments.
import { check } from "../src/index.js";
import { adminClient, usage } from "./config.js";

const [partner, url] = process.argv.slice(2);
if (!partner || !url) usage("node dist/examples/create-endpoint.js PARTNER URL");

const client = adminClient();
const endpoint = check(
  await client.POST("/v1/partners/{pid}/endpoints", {
    params: { path: { pid: partner } },
    body: { url, event_types: ["*"], description: "created by the TypeScript client's example" },
  }),
);
console.log(`ENDPOINT_ID=${endpoint.id}`);
console.log(`WEBHOOK_SECRET=${endpoint.secret}`);
