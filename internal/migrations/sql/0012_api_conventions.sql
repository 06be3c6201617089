-- API conventions, endpoint health and replay-job cancellation (design.md section 10).

-- A partner API key carries a name its operator gives it (last_used_at exists since 0001).
ALTER TABLE partner_api_key ADD COLUMN name text NOT NULL DEFAULT '';

-- Idempotency-Key of the admin API's POSTs: one row per (caller, key), kept 24 hours. The first
-- request with a key inserts its row with status NULL, runs, and stores its answer; a request
-- with the same key and the same request_hash (method, path, body) gets that answer back, one
-- with another request_hash is refused. response is sealed with the secret key under the row's
-- own AAD (it may hold a secret shown once: a created endpoint's, a rotated one, an API key).
CREATE TABLE idempotency_key (
    scope         text NOT NULL,   -- the caller: 'operator' or 'partner_api_key:<id>'
    key           text NOT NULL,
    request_hash  bytea NOT NULL,
    status        integer,         -- NULL while the first request runs
    response      bytea,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_key_created_idx ON idempotency_key (created_at);

-- Endpoint health: the circuit breaker lives in the sender, which has no route to
-- PostgreSQL; each attempt record states the circuit after it, and the recorder keeps the
-- newest here with the last success and the last attempt. Not part of the endpoint row: that
-- row's every change is published to the endpoints topic, and these change with each attempt.
-- No foreign key: the recorder writes rows only for endpoints it finds, and a row left by a
-- deleted endpoint is never read (the API joins from endpoint).
CREATE TABLE endpoint_health (
    endpoint_id       text PRIMARY KEY,
    circuit_state     text CHECK (circuit_state IN ('closed', 'open', 'half_open')),
    circuit_probe_at  timestamptz,   -- with circuit_state open: when the next probe may go
    circuit_at        timestamptz,   -- when the sender stated it (the attempt record's circuit_at)
    last_success_at   timestamptz,
    last_attempt_at   timestamptz,
    updated_at        timestamptz NOT NULL DEFAULT now()
);

-- Replay jobs can be canceled (R24): the runner stops at its next step.
ALTER TABLE replay_job DROP CONSTRAINT replay_job_state_check;
ALTER TABLE replay_job ADD CONSTRAINT replay_job_state_check
    CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'canceled'));
