-- An event id has one spelling (design.md sections 1 and 4): evt_ and a ULID in upper case,
-- as outbox.NewEventID makes it. A ULID read case-insensitively let evt_01M9...ABC and its lower
-- case be two events with one identity for a receiver, each claiming its own id (0008). The check
-- of migration 0013 now takes upper-case Crockford base32 only; outbox.Append refuses a lower-case
-- id the same way (it does not rewrite the platform's id). Rows already committed keep theirs.
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
