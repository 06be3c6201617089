// Package admin is hookstream's HTTP API for operators and partners (design.md section 10, R36):
// endpoints, secrets and rotation, delivery history, replay, disablement and the cursor feed.
// Every partner-scoped route filters by the authenticated partner.
//
// Wiring: New(cfg, pool) builds the API; Handler serves every /v1 route (mount it at "/v1/");
// Checks are its readiness checks for internal/probes, which serves /healthz, /readyz and
// /metrics beside it; Run executes bulk replay jobs until its context ends; Close releases the
// Kafka clients after both stopped.
//
// Guarantees:
//   - Authentication is a bearer token: the operator token (any partner) or a partner API key
//     (its own partner). Keys are shown once and stored as SHA-256 hashes. A missing or bad token
//     answers 401; a partner key on an operator route 403, decided before any lookup; another
//     partner's resources 404, the same answer as resources that do not exist.
//   - Errors are RFC 9457 problems (application/problem+json) with a stable code, the request
//     id (X-Request-Id) and the failing field, with a fitting 4xx. Bodies are JSON objects of at
//     most 1 MiB with no unknown fields. A 5xx means a fault of the service and is logged.
//   - Every POST takes an Idempotency-Key (idempotency.go): a repeat within 24 h gets the first
//     2xx answer and does nothing again; another request under the key is refused.
//   - A signing secret appears only in the response that created it (endpoint creation or
//     rotation) and never in a log line; it is stored sealed with the sender's AAD.
//   - Writes go to PostgreSQL, from where cdc publishes endpoint changes; disabling an endpoint
//     writes an endpoint.disabled event to the outbox in the same transaction.
//   - Replays and test events are delivery records produced to <prefix>.deliveries keyed by
//     endpoint_id by the replay engine (package replay). A replay keeps the event id and takes
//     the next attempt number, never one an automatic attempt may take. Bulk replays are jobs
//     in replay_job that survive restarts of the API; Run runs the engine's job runner.
//   - Per-partner quotas (Config.Limits, quota.go) bind every request on a partner's routes,
//     the operator's included: endpoints, replay jobs queued or running, test events per minute
//     (per process) answer 429 quota_exceeded with error.quota when reached; a replay larger
//     than one job may replay answers 422 replay_too_large. Refusals change nothing.
//   - The outbox rows cdc refused to publish (outbox_dead_letter) are listed to the operator
//     only, at GET /v1/outbox/dead-letters: the platform wrote them and fixes them, and no
//     partner sees them, its own included.
//   - The feed reads the partner's partition of the compacted events topic from a cursor and
//     returns the partner's envelopes, exact bytes, in log order, with a next_cursor always.
//
// The OpenAPI 3.1 document of every route is openapi.json, served at GET /v1/openapi.json.
package admin
