-- API conventions and endpoint health (issue 14, parts 5 to 7).

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
