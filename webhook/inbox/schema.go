package inbox

import (
	"context"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Schema creates the inbox table under its default name, or brings a table made by an earlier
// version up to date; every statement is idempotent, so it runs at every start. Partners who
// run their own migration tool may copy it; SchemaFor gives it for another table name.
//
// The primary key on (source, id) is the deduplication (R29): one row per event of each
// source, so two providers may use the same id. body is bytea because the stored bytes are the
// ones that were signed, not a re-encoding, and body_hash (SHA-256 of body) tells a retry of
// the event from a different body sent under a known id. The CHECK constraints keep the states
// explicit: only received and retrying rows are due, only processed rows have processed_at,
// only refused rows have refused_at.
//
// The upgrade from the table keyed by id alone adds source ('hookstream' for every existing
// row: they came through ServeHTTP), body_hash (computed from the stored bodies), refused_at,
// result and the refused state, and moves the primary key to (source, id); it rewrites the
// key index once, under the lock MigrateTable takes. Instances of the earlier version insert
// with ON CONFLICT (id), which the new key does not serve: upgrade every instance together.
const Schema = `CREATE TABLE IF NOT EXISTS webhook_inbox (
    source          text        NOT NULL DEFAULT 'hookstream',
    id              text        NOT NULL,
    event_type      text        NOT NULL,
    body            bytea       NOT NULL,
    body_hash       bytea       NOT NULL,
    state           text        NOT NULL DEFAULT 'received',
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    received_at     timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz          DEFAULT now(),
    processed_at    timestamptz,
    refused_at      timestamptz,
    last_error      text,
    result          bytea,
    CONSTRAINT webhook_inbox_pkey PRIMARY KEY (source, id),
    CONSTRAINT webhook_inbox_state_check
        CHECK (state IN ('received', 'retrying', 'processed', 'dead', 'refused')),
    CHECK ((state IN ('received', 'retrying')) = (next_attempt_at IS NOT NULL)),
    CHECK ((state = 'processed') = (processed_at IS NOT NULL)),
    CONSTRAINT webhook_inbox_refused_check CHECK ((state = 'refused') = (refused_at IS NOT NULL))
);
ALTER TABLE webhook_inbox
    ADD COLUMN IF NOT EXISTS source     text NOT NULL DEFAULT 'hookstream',
    ADD COLUMN IF NOT EXISTS body_hash  bytea,
    ADD COLUMN IF NOT EXISTS refused_at timestamptz,
    ADD COLUMN IF NOT EXISTS result     bytea;
DO $upgrade$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'webhook_inbox'::regclass
                  AND attname = 'body_hash' AND NOT attnotnull) THEN
        UPDATE webhook_inbox SET body_hash = sha256(body) WHERE body_hash IS NULL;
        ALTER TABLE webhook_inbox ALTER COLUMN body_hash SET NOT NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'webhook_inbox'::regclass
                      AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%refused_at IS NOT NULL%') THEN
        ALTER TABLE webhook_inbox
            DROP CONSTRAINT IF EXISTS webhook_inbox_state_check,
            ADD CONSTRAINT webhook_inbox_state_check
                CHECK (state IN ('received', 'retrying', 'processed', 'dead', 'refused')),
            ADD CONSTRAINT webhook_inbox_refused_check CHECK ((state = 'refused') = (refused_at IS NOT NULL));
    END IF;
    IF (SELECT array_length(conkey, 1) FROM pg_constraint WHERE conrelid = 'webhook_inbox'::regclass
           AND contype = 'p') = 1 THEN
        ALTER TABLE webhook_inbox
            DROP CONSTRAINT webhook_inbox_pkey,
            ADD CONSTRAINT webhook_inbox_pkey PRIMARY KEY (source, id);
    END IF;
END
$upgrade$;
CREATE INDEX IF NOT EXISTS webhook_inbox_due ON webhook_inbox (next_attempt_at)
    WHERE state IN ('received', 'retrying');
CREATE INDEX IF NOT EXISTS webhook_inbox_open ON webhook_inbox (source, state, received_at)
    WHERE state <> 'processed';
CREATE INDEX IF NOT EXISTS webhook_inbox_finished ON webhook_inbox (processed_at)
    WHERE state = 'processed';
`

// schemaName matches the default table name and the names derived from it (constraints,
// indexes), so SchemaFor can rename them together.
var schemaName = regexp.MustCompile(`webhook_inbox(_[a-z_]+)?`)

// SchemaFor returns Schema for another table name (see Config.Table for the allowed names).
func SchemaFor(table string) (string, error) {
	if !tablePattern.MatchString(table) {
		return "", fmt.Errorf("inbox: table %q must be lowercase letters, digits and underscores, at most 48 bytes", table)
	}
	return schemaName.ReplaceAllStringFunc(Schema, func(name string) string {
		return pgx.Identifier{table + name[len(DefaultTable):]}.Sanitize()
	}), nil
}

// Migrate creates the default inbox table and its indexes, or upgrades them, as needed.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return MigrateTable(ctx, pool, DefaultTable)
}

// MigrateTable is Migrate for a table named in Config.Table.
func MigrateTable(ctx context.Context, pool *pgxpool.Pool, table string) error {
	sql, err := SchemaFor(table)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Instances starting together would otherwise race in CREATE TABLE IF NOT EXISTS, which
		// is not safe against a concurrent creation of the same table, and in the upgrade.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('hookstream webhook inbox migrate'))`); err != nil {
			return err
		}
		// Without arguments Exec uses the simple protocol, which runs several statements at once.
		_, err := tx.Exec(ctx, sql)
		return err
	})
	if err != nil {
		return fmt.Errorf("inbox: migrate table %s: %w", table, err)
	}
	return nil
}
