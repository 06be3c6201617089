-- One trigger accepts an outbox row (design.md section 4). Until now two BEFORE INSERT row
-- triggers ran for each row: outbox_event_check_row (migrations 0013, 0016 and 0021), ten checks
-- each raising its own error, then outbox_event_claim_id (0008), the id claim. At one event per
-- transaction they were about a third of PostgreSQL's CPU in the writer's backend: each trigger
-- call sets up a PL/pgSQL frame, each check is an expression evaluated on its own, and the
-- partner check and the claim are two statements with an executor start each.
--
-- outbox_event_accept_row does the same work for an accepted row in two steps: every check but
-- the partner's in one expression, then one statement that claims the id if the partner exists.
-- A row that fails either step goes through outbox_check_event, the checks of 0021 one by one in
-- the same order, so it is refused with the same error, SQLSTATE and constraint name as before;
-- a row they all pass (only a NULL the expression could not judge, which the columns' NOT NULL
-- refuses next) is claimed as 0008 claims it. Checks still come before the claim: a refused row
-- claims no id, and a duplicate id of a row that passes fails on outbox_event_id_pkey as before.
--
-- outbox_claim_event_id stays: a database's maintenance (and the tests' WithoutOutboxChecks)
-- can put it in a trigger of its own to write rows the checks would refuse with their ids
-- claimed. Rows committed before this migration keep their claims.
CREATE FUNCTION outbox_check_event(e outbox_event) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF e.event_id IS NULL OR e.event_id !~ '^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$' THEN
        RAISE EXCEPTION 'outbox_event: event_id % is not evt_ followed by a ULID in upper case', quote_nullable(left(e.event_id, 64))
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_event_id_format';
    END IF;
    IF e.partner_id = '' OR length(e.partner_id) > 255 THEN
        RAISE EXCEPTION 'outbox_event %: partner_id must be 1 to 255 characters', e.event_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_partner_id_required';
    END IF;
    IF length(e.type) > 128 OR e.type !~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$' THEN
        RAISE EXCEPTION 'outbox_event %: type % is not lowercase dotted words like api_key.status_changed', e.event_id, quote_literal(left(e.type, 64))
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_type_format';
    END IF;
    IF e.type IN ('webhook.test') THEN
        RAISE EXCEPTION 'outbox_event %: type % is reserved: hookstream sends it, the outbox does not carry it', e.event_id, quote_literal(e.type)
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_type_reserved';
    END IF;
    IF e.subject_type = '' OR e.subject_id = '' OR length(e.subject_type) > 255 OR length(e.subject_id) > 255 THEN
        RAISE EXCEPTION 'outbox_event %: subject_type and subject_id must be 1 to 255 characters', e.event_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_subject_required';
    END IF;
    IF length(e.correlation_id) > 255 THEN
        RAISE EXCEPTION 'outbox_event %: correlation_id is longer than 255 characters', e.event_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_correlation_id_length';
    END IF;
    IF e.schema_version < 1 THEN
        RAISE EXCEPTION 'outbox_event %: schema_version must be at least 1, got %', e.event_id, e.schema_version
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_schema_version_positive';
    END IF;
    IF jsonb_typeof(e.payload) <> 'object' THEN
        RAISE EXCEPTION 'outbox_event %: payload must be a JSON object, got %', e.event_id, jsonb_typeof(e.payload)
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_payload_object';
    END IF;
    IF octet_length(e.payload::text) > 917504 THEN
        RAISE EXCEPTION 'outbox_event %: payload is % bytes, limit 917504 (896 KiB)', e.event_id, octet_length(e.payload::text)
            USING ERRCODE = 'program_limit_exceeded', CONSTRAINT = 'outbox_event_payload_size';
    END IF;
    IF e.occurred_at < clock_timestamp() - interval '1 day' OR e.occurred_at > clock_timestamp() + interval '1 hour' THEN
        RAISE EXCEPTION 'outbox_event %: occurred_at % is outside [now - 1 day, now + 1 hour]', e.event_id, to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_occurred_at_window';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM partner WHERE id = e.partner_id) THEN
        RAISE EXCEPTION 'outbox_event %: partner % does not exist (create it through the admin API)', e.event_id, quote_literal(left(e.partner_id, 64))
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'outbox_event_partner_exists';
    END IF;
END $$;

-- The expression is outbox_check_event's conditions, each the negation of its refusal, joined
-- by AND: true only for a row every check passes. A NULL makes it NULL, and the row goes the
-- slow way.
CREATE FUNCTION outbox_accept_row() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.event_id ~ '^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$'
        AND NEW.partner_id <> '' AND length(NEW.partner_id) <= 255
        AND length(NEW.type) <= 128 AND NEW.type ~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$'
        AND NEW.type NOT IN ('webhook.test')
        AND NEW.subject_type <> '' AND NEW.subject_id <> '' AND length(NEW.subject_type) <= 255 AND length(NEW.subject_id) <= 255
        AND length(NEW.correlation_id) <= 255
        AND NEW.schema_version >= 1
        AND jsonb_typeof(NEW.payload) = 'object'
        AND octet_length(NEW.payload::text) <= 917504
        AND NEW.occurred_at >= clock_timestamp() - interval '1 day' AND NEW.occurred_at <= clock_timestamp() + interval '1 hour'
    THEN
        INSERT INTO outbox_event_id (event_id, occurred_at)
        SELECT NEW.event_id, NEW.occurred_at WHERE EXISTS (SELECT 1 FROM partner WHERE id = NEW.partner_id);
        IF FOUND THEN
            RETURN NEW;
        END IF;
    END IF;
    PERFORM outbox_check_event(NEW);
    INSERT INTO outbox_event_id (event_id, occurred_at) VALUES (NEW.event_id, NEW.occurred_at);
    RETURN NEW;
END $$;

-- Creating the trigger locks outbox_event against writes until this migration commits, so every
-- row is checked and claimed by one of the two ways, never by both or neither.
CREATE TRIGGER outbox_event_accept_row BEFORE INSERT ON outbox_event
    FOR EACH ROW EXECUTE FUNCTION outbox_accept_row();
DROP TRIGGER outbox_event_check_row ON outbox_event;
DROP TRIGGER outbox_event_claim_id ON outbox_event;
DROP FUNCTION outbox_check_row();
