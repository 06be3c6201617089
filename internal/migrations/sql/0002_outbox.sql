-- The transactional outbox (R9, R10), design.md sections 2 and 4.
--
-- Insert-only and partitioned by day on occurred_at, so retention is a cheap DROP of a day's
-- partition. A DEFAULT partition catches rows whose day has no partition yet (an event stamped far
-- in the past or future), so a business transaction never fails for want of a partition; the
-- maintenance function below moves such rows into their day partition when it creates one.
CREATE TABLE outbox_event (
    event_id        text NOT NULL,
    partner_id      text NOT NULL,
    type            text NOT NULL,
    subject_type    text NOT NULL,
    subject_id      text NOT NULL,
    occurred_at     timestamptz NOT NULL,
    schema_version  integer NOT NULL DEFAULT 1,
    payload         jsonb NOT NULL,
    correlation_id  text NOT NULL DEFAULT '',
    PRIMARY KEY (event_id, occurred_at)
) PARTITION BY RANGE (occurred_at);

CREATE TABLE outbox_event_default PARTITION OF outbox_event DEFAULT;

-- outbox_day_partition_name gives the partition of one UTC day, e.g. outbox_event_20261130.
CREATE FUNCTION outbox_day_partition_name(day date) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT 'outbox_event_' || to_char(day, 'YYYYMMDD') $$;

-- outbox_create_partitions makes sure the partitions of the UTC days [from_day, from_day + days)
-- exist. Rows already sitting in the default partition for such a day are moved into the new table
-- before it is attached; that move is a delete and an insert on tables outside the publication's
-- insert stream, so cdc does not see the events twice. Returns the partitions it created.
CREATE FUNCTION outbox_create_partitions(from_day date, days integer)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    d date;
    name text;
    lo timestamptz;
    hi timestamptz;
BEGIN
    FOR i IN 0 .. days - 1 LOOP
        d := from_day + i;
        name := outbox_day_partition_name(d);
        CONTINUE WHEN to_regclass(name) IS NOT NULL;
        lo := d::timestamp AT TIME ZONE 'UTC';
        hi := (d + 1)::timestamp AT TIME ZONE 'UTC';
        EXECUTE format('CREATE TABLE %I (LIKE outbox_event INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
        EXECUTE format(
            'WITH moved AS (DELETE FROM outbox_event_default WHERE occurred_at >= %L AND occurred_at < %L RETURNING *)
             INSERT INTO %I SELECT * FROM moved', lo, hi, name);
        EXECUTE format('ALTER TABLE outbox_event ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', name, lo, hi);
        RETURN NEXT name;
    END LOOP;
END $$;

-- outbox_drop_partitions drops every day partition that ends at or before `before`, and deletes
-- default-partition rows older than it. The caller (cdc) passes a bound it has already published
-- past, so nothing unpublished is ever dropped (R10). Returns the partitions it dropped.
CREATE FUNCTION outbox_drop_partitions(before timestamptz)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    part record;
    day date;
BEGIN
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
    DELETE FROM outbox_event_default WHERE occurred_at < before;
END $$;

SELECT outbox_create_partitions((now() AT TIME ZONE 'UTC')::date - 1, 9);

-- Publications for cdc (R10, design.md section 4). The outbox publishes inserts only, through the partition root,
-- so partition maintenance (moves, drops) never reaches Kafka. Endpoint configuration publishes
-- every change, so the endpoints topic can follow creates, updates and deletes.
CREATE PUBLICATION hookstream_outbox FOR TABLE outbox_event
    WITH (publish = 'insert', publish_via_partition_root = true);
CREATE PUBLICATION hookstream_endpoints FOR TABLE endpoint, endpoint_secret
    WITH (publish = 'insert, update, delete, truncate');
