-- Outbox rows cdc refused to publish (R4, R6): a type the event catalog does not know, a schema
-- version or data the type's schema refuses, a row that is no valid envelope, an envelope over the
-- size limit. Each one also goes to the <prefix>.dlq topic; this table is where the operator lists
-- them (GET /v1/outbox/dead-letters), since the writer saw its commit succeed.
--
-- cdc inserts the row as soon as it refuses the outbox row, before the Kafka transaction holding
-- the dead letter commits. A cdc that dies in between streams the outbox row again after its
-- restart and finds it here: (event_id, occurred_at) is the outbox's own key, so ON CONFLICT DO
-- NOTHING keeps one row per refused outbox row. cdc deletes rows older than the outbox retention.
CREATE TABLE outbox_dead_letter (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id        text NOT NULL,
    occurred_at     timestamptz NOT NULL,
    partner_id      text NOT NULL,
    type            text NOT NULL,
    schema_version  integer NOT NULL,
    subject_type    text NOT NULL,
    subject_id      text NOT NULL,
    reason          text NOT NULL,  -- malformed, too_large, unknown_type, schema_version, invalid_data
    detail          text NOT NULL,  -- the refusal, naming the field
    commit_lsn      pg_lsn NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_id, occurred_at)
);

CREATE INDEX outbox_dead_letter_partner_idx ON outbox_dead_letter (partner_id, id);
CREATE INDEX outbox_dead_letter_created_idx ON outbox_dead_letter (created_at);
