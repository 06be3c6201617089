-- The SQL contract refuses rows the pipeline would deliver wrongly (design.md section 4), beside
-- the envelope checks of migrations 0013 and 0016. Each of these was accepted and published:
--
--   - a partner the partner table does not hold (the table the admin API's partners are): fanout
--     found no endpoint, so the event reached nobody and nothing told the writer or the operator.
--     Refused with foreign_key_violation (23503), constraint outbox_event_partner_exists. Partners
--     are never deleted, so a row that passes this stays a partner's row.
--   - an occurred_at outside the plausible window [clock_timestamp() - 1 day,
--     clock_timestamp() + 1 hour]: a 1970 or 2100 timestamp is a bug of the writer (a zero value,
--     seconds read as milliseconds), was delivered as if true, and lands in the default partition
--     that retention handles last. The window is the clock at the INSERT, not the transaction's
--     start, so a long business transaction is judged by when it writes the row. A day back
--     covers a writer that stamps the change when it happened and commits it late (a queue
--     drained after an outage); an hour ahead covers clock skew between the writer and
--     PostgreSQL. Both bounds are inside the day partitions outbox_create_partitions keeps ready
--     (yesterday to a week ahead). Refused with check_violation (23514), constraint
--     outbox_event_occurred_at_window.
--   - a reserved type, one the platform never writes: webhook.test (eventcatalog.ReservedTypes),
--     which admin sends to one endpoint straight through the deliveries topic (R25); from the
--     outbox it went to every subscribed endpoint as if it were a business event. Refused with
--     check_violation, constraint outbox_event_type_reserved.
--
-- The checks run in the BEFORE INSERT trigger outbox_event_check_row (0013), which fires before the
-- id claim (0008), so a refused row claims no id, and its error aborts the writer's transaction:
-- nothing it wrote commits. Rows committed before this migration are not checked.
CREATE OR REPLACE FUNCTION outbox_check_row() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.event_id IS NULL OR NEW.event_id !~ '^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$' THEN
        RAISE EXCEPTION 'outbox_event: event_id % is not evt_ followed by a ULID in upper case', quote_nullable(left(NEW.event_id, 64))
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
    IF NEW.type IN ('webhook.test') THEN
        RAISE EXCEPTION 'outbox_event %: type % is reserved: hookstream sends it, the outbox does not carry it', NEW.event_id, quote_literal(NEW.type)
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_type_reserved';
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
    IF NEW.occurred_at < clock_timestamp() - interval '1 day' OR NEW.occurred_at > clock_timestamp() + interval '1 hour' THEN
        RAISE EXCEPTION 'outbox_event %: occurred_at % is outside [now - 1 day, now + 1 hour]', NEW.event_id, to_char(NEW.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_occurred_at_window';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM partner WHERE id = NEW.partner_id) THEN
        RAISE EXCEPTION 'outbox_event %: partner % does not exist (create it through the admin API)', NEW.event_id, quote_literal(left(NEW.partner_id, 64))
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'outbox_event_partner_exists';
    END IF;
    RETURN NEW;
END $$;
