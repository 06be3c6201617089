package migrations_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookstream/hookstream/internal/migrations"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// schemaSnapshot lists every column, index, constraint, function, trigger and publication of the
// public schema, so two snapshots differ when anything in the schema does.
func schemaSnapshot(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	return strings.Join(testenv.QueryStrings(t, conn, `
		SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
		  FROM information_schema.columns WHERE table_schema = 'public'
		UNION ALL SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
		UNION ALL SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
		  FROM pg_constraint WHERE connamespace = 'public'::regnamespace
		UNION ALL SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace
		UNION ALL SELECT 'trigger ' || tgrelid::regclass || ' ' || pg_get_triggerdef(oid)
		  FROM pg_trigger WHERE NOT tgisinternal AND tgparentid = 0
		UNION ALL SELECT 'publication ' || pubname || ' ' || pubinsert || pubupdate || pubdelete || pubviaroot FROM pg_publication
		UNION ALL SELECT 'published ' || pubname || ' ' || tablename FROM pg_publication_tables
		ORDER BY 1`), "\n")
}

// connect opens a connection of its own to db (migrations run on one), closed when the test ends.
func connect(t *testing.T, db *testenv.Database) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestApplyIsIdempotent(t *testing.T) {
	db := testenv.NewEmptyDatabase(t)
	ctx := context.Background()
	conn := connect(t, db)

	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	applied, err := migrations.Apply(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(all) {
		t.Fatalf("first run applied %v, want all %d migrations", applied, len(all))
	}
	first := schemaSnapshot(t, conn)
	for _, want := range []string{
		"column outbox_event.payload jsonb NO",
		"column endpoint.event_types ARRAY NO",
		"constraint delivery delivery_event_id_endpoint_id_key UNIQUE (event_id, endpoint_id)",
		// one row per refused outbox row, however often cdc streams it (R6, design.md section 4)
		"constraint outbox_dead_letter outbox_dead_letter_event_id_occurred_at_key UNIQUE (event_id, occurred_at)",
		"publication hookstream_outbox truefalsefalsetrue", // inserts only, via the partition root
		"published hookstream_outbox outbox_event",
		"published hookstream_endpoints endpoint",
		"published hookstream_endpoints endpoint_secret",
		"function outbox_create_partitions",
		"function outbox_drop_partitions",
		"constraint outbox_event_id outbox_event_id_pkey PRIMARY KEY (event_id)", // one event_id is one event
		"trigger outbox_event CREATE TRIGGER outbox_event_accept_row BEFORE INSERT ON public.outbox_event FOR EACH ROW EXECUTE FUNCTION outbox_accept_row()", // checks, then the id claim
	} {
		if !strings.Contains(first, want) {
			t.Errorf("schema lacks %q", want)
		}
	}

	applied, err = migrations.Apply(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 0 {
		t.Fatalf("second run applied %v, want nothing", applied)
	}
	if second := schemaSnapshot(t, conn); second != first {
		t.Fatalf("schema changed on the second run:\n%s\n---\n%s", first, second)
	}
	if n := testenv.QueryInt(t, conn, `SELECT count(*) FROM schema_migration`); n != len(all) {
		t.Fatalf("schema_migration has %d rows, want %d", n, len(all))
	}
}

// Several processes starting together apply each migration once (the advisory lock).
func TestConcurrentApply(t *testing.T) {
	db := testenv.NewEmptyDatabase(t)
	ctx := context.Background()
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() {
			conn, err := pgx.Connect(ctx, db.URL)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close(ctx)
			_, err = migrations.Apply(ctx, conn)
			errs <- err
		}()
	}
	for i := 0; i < 4; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	all, _ := migrations.All()
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM schema_migration`); n != len(all) {
		t.Fatalf("schema_migration has %d rows, want %d", n, len(all))
	}
}

// A migration edited after it was applied is refused rather than silently skipped.
func TestChangedMigrationIsRefused(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `UPDATE schema_migration SET checksum = repeat('0', 64) WHERE version = 1`); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, db)
	_, err := migrations.Apply(ctx, conn)
	if err == nil || !strings.Contains(err.Error(), "changed after it was applied") {
		t.Fatalf("err = %v, want a changed-migration error", err)
	}
}

// The checksum covers the statements: a comment or blank line more or less leaves it as it is,
// any change to a line PostgreSQL runs (a trailing comment included) does not.
func TestChecksumCoversStatementsOnly(t *testing.T) {
	base := "-- the table\nCREATE TABLE t (\n    a int  -- the key\n);\n"
	same := []string{
		"-- the table, reworded\nCREATE TABLE t (\n    a int  -- the key\n);\n",
		"CREATE TABLE t (\n\n    a int  -- the key\n   -- an indented comment\n);\n",
		"-- the table\r\nCREATE TABLE t (\r\n    a int  -- the key\r\n);\r\n",
	}
	different := []string{
		"-- the table\nCREATE TABLE t (\n    a bigint  -- the key\n);\n",
		"-- the table\nCREATE TABLE t (\n    a int  -- the id\n);\n",
		"-- the table\nCREATE TABLE t (\n  a int  -- the key\n);\n",
		"-- the table\nCREATE TABLE t (\n    a int  -- the key\n);\nDROP TABLE t;\n",
	}
	for _, sql := range same {
		if migrations.Checksum(sql) != migrations.Checksum(base) {
			t.Errorf("checksum of %q differs from %q's: only comments or blank lines changed", sql, base)
		}
	}
	for _, sql := range different {
		if migrations.Checksum(sql) == migrations.Checksum(base) {
			t.Errorf("checksum of %q equals %q's: a statement changed", sql, base)
		}
	}
}

// A database an older binary migrated holds whole-file checksums; the current binary starts on
// it, applies nothing and leaves the recorded sums as they are (so that older binary still
// starts too).
func TestLegacyChecksumsAreAccepted(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	for version, sum := range migrations.LegacyChecksums {
		tag, err := db.Pool.Exec(ctx, `UPDATE schema_migration SET checksum = $2 WHERE version = $1`, version, sum)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("record the legacy checksum of version %d: %v (%d rows)", version, err, tag.RowsAffected())
		}
	}
	conn := connect(t, db)
	applied, err := migrations.Apply(ctx, conn)
	if err != nil {
		t.Fatalf("a database migrated by an older binary: %v", err)
	}
	if len(applied) != 0 {
		t.Fatalf("applied %v on a current schema, want nothing", applied)
	}
	for version, sum := range migrations.LegacyChecksums {
		if got := testenv.QueryStrings(t, conn, `SELECT checksum FROM schema_migration WHERE version = $1`, version); len(got) != 1 || got[0] != sum {
			t.Errorf("version %d's recorded checksum became %s, want the legacy %s kept", version, got, sum)
		}
	}
}

// A database that applied other statements under a migration's version is refused, whether it
// recorded the statement checksum or the whole-file sum of its file.
func TestChangedStatementsAreRefused(t *testing.T) {
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	first := all[0]
	other := strings.Replace(first.SQL, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1)
	if other == first.SQL {
		t.Fatalf("%s has no CREATE TABLE to change", first.Name)
	}
	whole := sha256.Sum256([]byte(other))
	for name, recorded := range map[string]string{
		"statement checksum": migrations.Checksum(other),
		"whole-file sum":     hex.EncodeToString(whole[:]),
	} {
		t.Run(name, func(t *testing.T) {
			db := testenv.NewDatabase(t)
			ctx := context.Background()
			if _, err := db.Pool.Exec(ctx, `UPDATE schema_migration SET checksum = $1 WHERE version = $2`, recorded, first.Version); err != nil {
				t.Fatal(err)
			}
			_, err := migrations.Apply(ctx, connect(t, db))
			if err == nil || !strings.Contains(err.Error(), "changed after it was applied") {
				t.Fatalf("err = %v, want a changed-migration error", err)
			}
		})
	}
}

// eventIDMigration is the migration that makes event ids unique (0008_outbox_event_id.sql).
const eventIDMigration = 8

// A database whose outbox already holds rows sharing an event id, as the schema before
// eventIDMigration allowed, migrates without failing: the rows stay, each id is claimed once, by
// its newest row so that it stays taken while any copy is retained, and from then on a second
// row with a claimed id is refused.
func TestEventIDMigrationKeepsExistingDuplicates(t *testing.T) {
	db := testenv.NewEmptyDatabase(t)
	ctx := context.Background()
	conn := connect(t, db)
	if _, err := migrations.ApplyThrough(ctx, conn, eventIDMigration-1); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	insert := `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ($1, $2, 'customer.created', 'customer', 'cus_1', $3, '{}')`
	rows := []struct {
		id, partner string
		at          time.Time
	}{
		{"evt_01JD0PAC0SSPARTNERS0000000", "pa", now},
		{"evt_01JD0PAC0SSPARTNERS0000000", "pb", now.Add(26 * time.Hour)}, // the next day's partition
		{"evt_01JD0PSAMEPARTNER000000000", "pa", now.Add(-time.Hour)},
		{"evt_01JD0PSAMEPARTNER000000000", "pa", now.Add(-2 * time.Hour)},
		{"evt_01JD0PSAMEPARTNER000000000", "pa", now.Add(-3 * time.Hour)},
		{"evt_01J0N1QVE00000000000000000", "pa", now},
	}
	for _, r := range rows {
		if _, err := conn.Exec(ctx, insert, r.id, r.partner, r.at); err != nil {
			t.Fatalf("seed %s at %s: %v", r.id, r.at, err)
		}
	}

	applied, err := migrations.Apply(ctx, conn)
	if err != nil {
		t.Fatalf("migrating an outbox with duplicate ids: %v", err)
	}
	if !slices.Contains(applied, eventIDMigration) {
		t.Fatalf("applied %v, want %d among them", applied, eventIDMigration)
	}
	if n := testenv.QueryInt(t, conn, `SELECT count(*) FROM outbox_event`); n != len(rows) {
		t.Fatalf("outbox holds %d rows, want all %d kept", n, len(rows))
	}
	claims := map[string]time.Time{}
	cr, err := conn.Query(ctx, `SELECT event_id, occurred_at FROM outbox_event_id`)
	if err != nil {
		t.Fatal(err)
	}
	var (
		id string
		at time.Time
	)
	if _, err := pgx.ForEachRow(cr, []any{&id, &at}, func() error { claims[id] = at.UTC(); return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{
		"evt_01JD0PAC0SSPARTNERS0000000": now.Add(26 * time.Hour),
		"evt_01JD0PSAMEPARTNER000000000": now.Add(-time.Hour),
		"evt_01J0N1QVE00000000000000000": now,
	}
	if len(claims) != len(want) {
		t.Fatalf("claims %v, want %v", claims, want)
	}
	for id, at := range want {
		if !claims[id].Equal(at) {
			t.Errorf("claim of %s at %s, want its newest row's %s", id, claims[id], at)
		}
	}
	// Since migration 0021 the outbox takes events of partners the partner table holds only.
	if _, err := conn.Exec(ctx, `INSERT INTO partner (id) VALUES ('pc')`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"evt_01JD0PAC0SSPARTNERS0000000", "evt_01J0N1QVE00000000000000000"} {
		_, err := conn.Exec(ctx, insert, id, "pc", now.Add(time.Minute))
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != "23505" || pgErr.ConstraintName != "outbox_event_id_pkey" {
			t.Errorf("a new row with the existing id %s: err = %v, want unique_violation on outbox_event_id_pkey", id, err)
		}
	}
	if _, err := conn.Exec(ctx, insert, "evt_01JNEW00000000000000000000", "pc", now); err != nil {
		t.Fatalf("a new id after the migration: %v", err)
	}
}
