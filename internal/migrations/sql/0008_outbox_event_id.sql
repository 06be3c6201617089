-- One event_id is one event (R1), design.md sections 1 and 4.
--
-- outbox_event is partitioned by day on occurred_at, and PostgreSQL enforces uniqueness on a
-- partitioned table only for keys that include the partition key: its primary key
-- (event_id, occurred_at) let two rows share an id at two instants, and both were delivered under
-- one webhook-id. outbox_event_id holds every id of the outbox in a plain table keyed by the id
-- alone. A BEFORE INSERT row trigger on outbox_event claims the row's id there, so a second row
-- with an id the outbox holds fails with unique_violation on outbox_event_id_pkey, whoever writes
-- it: outbox.Append, raw SQL, COPY, or an insert straight into a partition (row triggers of a
-- partitioned table are cloned onto every partition, present and future). Claiming before the row
-- is stored makes every duplicate fail on that one constraint, and queues nothing per row.
--
-- The id table is deliberately not partitioned by occurred_at like the outbox: that would put
-- occurred_at back into its key and lose the guarantee. Retention deletes its rows instead, in
-- the same call that drops the outbox's day partitions (outbox_drop_partitions below), so it holds
-- the ids of the outbox's retention window and no more. The guarantee therefore holds within that
-- window (7 days by default): once an event's partition is dropped its id could be written again.
-- Append's ids are fresh ULIDs and never repeat; a writer that brings its own ids must never reuse
-- one, since receivers deduplicate on webhook-id and the compacted events topic keeps one record
-- per event_id.
CREATE TABLE outbox_event_id (
    event_id    text PRIMARY KEY,
    occurred_at timestamptz NOT NULL
);
CREATE INDEX outbox_event_id_occurred_at ON outbox_event_id (occurred_at);

CREATE FUNCTION outbox_claim_event_id() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO outbox_event_id (event_id, occurred_at) VALUES (NEW.event_id, NEW.occurred_at);
    RETURN NEW;
END $$;

-- Rows that outbox_create_partitions moves from the default partition into a new day partition are
-- inserted before that table is attached, so they fire no trigger and keep their claim.
CREATE TRIGGER outbox_event_claim_id BEFORE INSERT ON outbox_event
    FOR EACH ROW EXECUTE FUNCTION outbox_claim_event_id();

-- The outbox is insert-only (section 4); an UPDATE that changed a row's id or instant would slip
-- past the claim, so it is refused. Deletes keep the claim: an id once committed stays taken
-- until retention.
CREATE FUNCTION outbox_refuse_id_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'outbox_event is insert-only: event_id and occurred_at of % cannot change', OLD.event_id
        USING ERRCODE = 'integrity_constraint_violation';
END $$;

CREATE TRIGGER outbox_event_keep_id BEFORE UPDATE OF event_id, occurred_at ON outbox_event
    FOR EACH ROW WHEN (OLD.event_id IS DISTINCT FROM NEW.event_id OR OLD.occurred_at IS DISTINCT FROM NEW.occurred_at)
    EXECUTE FUNCTION outbox_refuse_id_change();

-- Claims for the rows already there. The triggers above were created first: creating them locks
-- outbox_event against writes until this migration commits, so no row can commit between this
-- backfill and the claims. Duplicates committed before this migration must not make it fail, and
-- are not deleted either (they may have been published already, and the outbox is history): each
-- duplicated id claims its newest row, so the id stays taken while any copy of it is retained,
-- and the copies expire with their partitions. Only new duplicates are refused.
INSERT INTO outbox_event_id (event_id, occurred_at)
SELECT event_id, max(occurred_at) FROM outbox_event GROUP BY event_id;

-- outbox_drop_partitions (migration 0002) now removes the claims of what it drops. Every row
-- older than the start of before's UTC day lives in a day partition dropped here or is a default
-- row deleted here, so the claims below that bound go in one range delete; the claims of default
-- rows deleted in the rest of that day go with them. A claim whose row was committed into an old
-- partition during this call outlives it until the next call, whose range delete takes it.
--
-- The claims go first: dropping a partition locks outbox_event exclusively until commit, so the
-- long delete of a day's ids runs before that, and writers wait only for the drops.
CREATE OR REPLACE FUNCTION outbox_drop_partitions(before timestamptz)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    part record;
    day date;
BEGIN
    DELETE FROM outbox_event_id WHERE occurred_at < date_trunc('day', before, 'UTC');
    WITH gone AS (DELETE FROM outbox_event_default WHERE occurred_at < before RETURNING event_id, occurred_at)
    DELETE FROM outbox_event_id i USING gone WHERE i.event_id = gone.event_id AND i.occurred_at = gone.occurred_at;
    FOR part IN
        SELECT c.relname
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'outbox_event'::regclass AND c.relname ~ '^outbox_event_[0-9]{8}$'
        ORDER BY c.relname
    LOOP
        day := to_date(substr(part.relname, 14), 'YYYYMMDD');
        IF ((day + 1)::timestamp AT TIME ZONE 'UTC') <= before THEN
            EXECUTE format('DROP TABLE %I', part.relname);
            RETURN NEXT part.relname;
        END IF;
    END LOOP;
END $$;
