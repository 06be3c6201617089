package inbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Schema creates the inbox table under its default name, idempotently. Partners who run their
// own migration tool may copy it; SchemaFor gives it for another table name.
//
// The primary key on id (the webhook-id, which is the event_id) is the deduplication (R29).
// body is bytea because the stored bytes are the ones that were signed, not a re-encoding.
// The CHECK constraints keep the states explicit: only received and retrying rows are due, and
// only processed rows have processed_at.
const Schema = `CREATE TABLE IF NOT EXISTS webhook_inbox (
    id              text        PRIMARY KEY,
    event_type      text        NOT NULL,
    body            bytea       NOT NULL,
    state           text        NOT NULL DEFAULT 'received'
                                CHECK (state IN ('received', 'retrying', 'processed', 'dead')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    received_at     timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz          DEFAULT now(),
    processed_at    timestamptz,
    last_error      text,
    CHECK ((state IN ('received', 'retrying')) = (next_attempt_at IS NOT NULL)),
    CHECK ((state = 'processed') = (processed_at IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS webhook_inbox_due ON webhook_inbox (next_attempt_at)
    WHERE state IN ('received', 'retrying');
`

// SchemaFor returns Schema for another table name (see Config.Table for the allowed names).
func SchemaFor(table string) (string, error) {
	if !tablePattern.MatchString(table) {
		return "", fmt.Errorf("inbox: table %q must be lowercase letters, digits and underscores, at most 48 bytes", table)
	}
	// The index name first: it contains the table name.
	return strings.NewReplacer(
		"webhook_inbox_due", pgx.Identifier{table + "_due"}.Sanitize(),
		"webhook_inbox", pgx.Identifier{table}.Sanitize(),
	).Replace(Schema), nil
}

// Migrate creates the default inbox table and its index if they do not exist.
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
		// is not safe against a concurrent creation of the same table.
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
