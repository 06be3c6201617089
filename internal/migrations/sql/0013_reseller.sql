-- In two parts: the SQL contract of outbox_event for writers outside Go, and the tables
-- of the reseller reference platform (package reseller, R34).

-- Part 1. The SQL contract (design.md section 4). A platform that inserts into outbox_event with
-- SQL gets the same refusals outbox.Append gives for the envelope's shape, at the INSERT, with a
-- message that names the field: an id that is not evt_ + ULID, an empty or oversized partner,
-- subject or correlation id, a malformed type, a schema version below 1, data that is not a JSON
-- object, and a payload over 896 KiB in its text form (cdc publishes envelopes up to 900 KiB by
-- default; ids and type are bounded below, so a row accepted here is never too_large for cdc
-- with its default limit). What needs the catalog's JSON Schemas (unknown type, invalid data,
-- forbidden fields) stays in the writers and in cdc, which dead-letters such rows.
--
-- A trigger rather than CHECK constraints: a CHECK failure reports the whole failing row (up to
-- the payload), this names the field and its rule. Its name sorts before outbox_event_claim_id
-- (0008), and BEFORE triggers fire in name order, so a refused row claims no id. Row triggers of
-- the partitioned table are cloned onto every partition, present and future.
CREATE FUNCTION outbox_check_row() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.event_id IS NULL OR NEW.event_id !~ '^evt_[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$' THEN
        RAISE EXCEPTION 'outbox_event: event_id % is not evt_ followed by a ULID', quote_nullable(left(NEW.event_id, 64))
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_event_id_format';
    END IF;
    IF NEW.partner_id = '' OR length(NEW.partner_id) > 255 THEN
        RAISE EXCEPTION 'outbox_event %: partner_id must be 1 to 255 characters', NEW.event_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_partner_id_required';
    END IF;
    IF length(NEW.type) > 128 OR NEW.type !~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$' THEN
        RAISE EXCEPTION 'outbox_event %: type % is not lowercase dotted words like api_key.status_changed', NEW.event_id, quote_literal(left(NEW.type, 64))
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_type_format';
    END IF;
    IF NEW.subject_type = '' OR NEW.subject_id = '' OR length(NEW.subject_type) > 255 OR length(NEW.subject_id) > 255 THEN
        RAISE EXCEPTION 'outbox_event %: subject_type and subject_id must be 1 to 255 characters', NEW.event_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_subject_required';
    END IF;
    IF length(NEW.correlation_id) > 255 THEN
        RAISE EXCEPTION 'outbox_event %: correlation_id is longer than 255 characters', NEW.event_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_correlation_id_length';
    END IF;
    IF NEW.schema_version < 1 THEN
        RAISE EXCEPTION 'outbox_event %: schema_version must be at least 1, got %', NEW.event_id, NEW.schema_version
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_schema_version_positive';
    END IF;
    IF jsonb_typeof(NEW.payload) <> 'object' THEN
        RAISE EXCEPTION 'outbox_event %: payload must be a JSON object, got %', NEW.event_id, jsonb_typeof(NEW.payload)
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_payload_object';
    END IF;
    IF octet_length(NEW.payload::text) > 917504 THEN
        RAISE EXCEPTION 'outbox_event %: payload is % bytes, limit 917504 (896 KiB)', NEW.event_id, octet_length(NEW.payload::text)
            USING ERRCODE = 'program_limit_exceeded', CONSTRAINT = 'outbox_event_payload_size';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER outbox_event_check_row BEFORE INSERT ON outbox_event
    FOR EACH ROW EXECUTE FUNCTION outbox_check_row();

-- Part 2. The reseller reference platform (package reseller): an example a platform team copies,
-- so its tables live in a schema of their own, apart from hookstream's. Every row belongs to a
-- partner of hookstream (the admin API's partners) and goes with it. Money is numeric with 6
-- decimals, the catalog's precision (R7). version increases with every change of a row (R30).
CREATE SCHEMA reseller;

CREATE TABLE reseller.customer (
    id                    text PRIMARY KEY,
    partner_id            text NOT NULL REFERENCES partner (id) ON DELETE CASCADE,
    name                  text NOT NULL,
    status                text NOT NULL CHECK (status IN ('active', 'suspended', 'deleted')),
    currency              text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    balance               numeric(24, 6) NOT NULL DEFAULT 0,
    low_balance_threshold numeric(24, 6) CHECK (low_balance_threshold >= 0),
    version               bigint NOT NULL DEFAULT 1,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reseller_customer_partner_idx ON reseller.customer (partner_id, id);

-- Only a hash of each key and its first characters (for display) are stored; the key is shown
-- once, when it is created.
CREATE TABLE reseller.api_key (
    id          text PRIMARY KEY,
    partner_id  text NOT NULL REFERENCES partner (id) ON DELETE CASCADE,
    customer_id text NOT NULL REFERENCES reseller.customer (id) ON DELETE CASCADE,
    name        text NOT NULL,
    prefix      text NOT NULL,
    key_hash    bytea NOT NULL UNIQUE,
    status      text NOT NULL CHECK (status IN ('active', 'suspended', 'revoked')),
    version     bigint NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reseller_api_key_customer_idx ON reseller.api_key (partner_id, customer_id, id);

CREATE TABLE reseller.budget (
    id           text PRIMARY KEY,
    partner_id   text NOT NULL REFERENCES partner (id) ON DELETE CASCADE,
    customer_id  text NOT NULL REFERENCES reseller.customer (id) ON DELETE CASCADE,
    api_key_id   text REFERENCES reseller.api_key (id) ON DELETE CASCADE,
    limit_amount numeric(24, 6) NOT NULL CHECK (limit_amount > 0),
    currency     text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    thresholds   integer[] NOT NULL,
    spent        numeric(24, 6) NOT NULL DEFAULT 0,
    period_start timestamptz NOT NULL,
    period_end   timestamptz NOT NULL CHECK (period_end > period_start),
    version      bigint NOT NULL DEFAULT 1,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reseller_budget_customer_idx ON reseller.budget (partner_id, customer_id, id);

-- The export (R34) pages through finalized usage and ledger entries in one order (export_seq)
-- and keeps each export to the snapshot its first page saw: xid is the writing transaction, and
-- a page lists only rows whose xid the export's snapshot counts as committed.
CREATE SEQUENCE reseller.export_seq;

CREATE TABLE reseller.ledger_entry (
    id            text PRIMARY KEY,
    partner_id    text NOT NULL REFERENCES partner (id) ON DELETE CASCADE,
    customer_id   text NOT NULL REFERENCES reseller.customer (id) ON DELETE CASCADE,
    kind          text NOT NULL CHECK (kind IN ('credit', 'adjustment')),
    amount        numeric(24, 6) NOT NULL,
    currency      text NOT NULL,
    balance_after numeric(24, 6) NOT NULL,
    reason        text NOT NULL,
    budget_id     text REFERENCES reseller.budget (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    export_seq    bigint NOT NULL DEFAULT nextval('reseller.export_seq'),
    xid           xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX reseller_ledger_export_idx ON reseller.ledger_entry (partner_id, export_seq);

CREATE TABLE reseller.usage_record (
    id            text PRIMARY KEY,
    partner_id    text NOT NULL REFERENCES partner (id) ON DELETE CASCADE,
    customer_id   text NOT NULL REFERENCES reseller.customer (id) ON DELETE CASCADE,
    api_key_id    text REFERENCES reseller.api_key (id) ON DELETE SET NULL,
    period_start  timestamptz NOT NULL,
    period_end    timestamptz NOT NULL CHECK (period_end >= period_start),
    requests      bigint NOT NULL CHECK (requests >= 0),
    input_tokens  bigint NOT NULL CHECK (input_tokens >= 0),
    output_tokens bigint NOT NULL CHECK (output_tokens >= 0),
    cost          numeric(24, 6) NOT NULL CHECK (cost >= 0),
    currency      text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    export_seq    bigint NOT NULL DEFAULT nextval('reseller.export_seq'),
    xid           xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX reseller_usage_export_idx ON reseller.usage_record (partner_id, export_seq);
