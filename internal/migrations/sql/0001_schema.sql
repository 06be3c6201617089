-- hookstream schema, design.md section 4. One file per version; never edit an applied file.

-- Partners and their API keys. Only a SHA-256 hash of each key is stored (R36).
CREATE TABLE partner (
    id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
    name        text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE partner_api_key (
    id            text PRIMARY KEY,
    partner_id    text NOT NULL REFERENCES partner (id) ON DELETE CASCADE,
    key_hash      bytea NOT NULL UNIQUE,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz,
    revoked_at    timestamptz
);
CREATE INDEX partner_api_key_partner_idx ON partner_api_key (partner_id);

-- Endpoints. `version` increases on every change so consumers of the endpoints topic can tell
-- newer configuration from older (R13, R14, R21).
CREATE TABLE endpoint (
    id                  text PRIMARY KEY,
    partner_id          text NOT NULL REFERENCES partner (id),
    url                 text NOT NULL,
    description         text NOT NULL DEFAULT '',
    status              text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    event_types         text[] NOT NULL DEFAULT '{}',
    schema_version      integer NOT NULL DEFAULT 1 CHECK (schema_version >= 1),
    max_in_flight       integer NOT NULL DEFAULT 8 CHECK (max_in_flight BETWEEN 1 AND 1000),
    rate_limit_per_sec  double precision CHECK (rate_limit_per_sec IS NULL OR rate_limit_per_sec > 0),
    ordered             boolean NOT NULL DEFAULT false,
    failing_since       timestamptz,
    disabled_reason     text,
    version             bigint NOT NULL DEFAULT 1,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX endpoint_partner_idx ON endpoint (partner_id, created_at, id);
-- Full row images in WAL so deletes and updates carry every column to cdc.
ALTER TABLE endpoint REPLICA IDENTITY FULL;

-- Signing secrets, AES-256-GCM ciphertext under a key held by the processes only (R16).
-- A secret with expires_at set is in its rotation overlap; both sign until then (R17).
CREATE TABLE endpoint_secret (
    endpoint_id        text NOT NULL REFERENCES endpoint (id) ON DELETE CASCADE,
    id                 text NOT NULL,
    secret_ciphertext  bytea NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    expires_at         timestamptz,
    PRIMARY KEY (endpoint_id, id)
);
ALTER TABLE endpoint_secret REPLICA IDENTITY FULL;

-- Delivery history (R18). One row per (event, endpoint) (R11); one attempt row per attempt.
CREATE TABLE delivery (
    delivery_id          text PRIMARY KEY,
    event_id             text NOT NULL,
    endpoint_id          text NOT NULL,
    partner_id           text NOT NULL,
    event_type           text NOT NULL DEFAULT '',
    state                text NOT NULL CHECK (state IN ('pending', 'retrying', 'succeeded', 'failed', 'skipped')),
    attempt_count        integer NOT NULL DEFAULT 0,
    next_attempt_at      timestamptz,
    last_status          integer,
    last_latency_ms      integer,
    last_error_category  text,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX delivery_endpoint_idx ON delivery (endpoint_id, created_at DESC, delivery_id);
CREATE INDEX delivery_partner_idx ON delivery (partner_id, created_at DESC);

CREATE TABLE delivery_attempt (
    delivery_id       text NOT NULL REFERENCES delivery (delivery_id) ON DELETE CASCADE,
    attempt_no        integer NOT NULL CHECK (attempt_no >= 1),
    trigger           text NOT NULL CHECK (trigger IN ('initial', 'retry', 'replay', 'test')),
    started_at        timestamptz NOT NULL,
    status            integer,
    latency_ms        integer,
    error_category    text CHECK (error_category IN ('dns', 'connection_refused', 'tls', 'timeout',
                          'http_status', 'redirect', 'blocked_destination', 'tenant_mismatch', 'internal')),
    response_excerpt  text NOT NULL DEFAULT '' CHECK (octet_length(response_excerpt) <= 1024),
    next_attempt_at   timestamptz,
    PRIMARY KEY (delivery_id, attempt_no)
);

-- Bulk replays with progress (R24); they survive an admin restart.
CREATE TABLE replay_job (
    id           text PRIMARY KEY,
    partner_id   text NOT NULL REFERENCES partner (id),
    endpoint_id  text NOT NULL,
    source       text NOT NULL CHECK (source IN ('history', 'log')),
    filter       jsonb NOT NULL DEFAULT '{}',
    state        text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
    total        integer NOT NULL DEFAULT 0,
    done         integer NOT NULL DEFAULT 0,
    failed       integer NOT NULL DEFAULT 0,
    position     text NOT NULL DEFAULT '',
    error        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX replay_job_partner_idx ON replay_job (partner_id, created_at DESC);
CREATE INDEX replay_job_open_idx ON replay_job (state) WHERE state IN ('queued', 'running');
