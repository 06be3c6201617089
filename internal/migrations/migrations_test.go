package migrations_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/migrations"
	"github.com/hookstream/hookstream/internal/testenv"
)

// schemaSnapshot lists every column, index, constraint, function and publication of the public
// schema, so two snapshots differ when anything in the schema does.
func schemaSnapshot(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
		SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
		  FROM information_schema.columns WHERE table_schema = 'public'
		UNION ALL SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
		UNION ALL SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
		  FROM pg_constraint WHERE connamespace = 'public'::regnamespace
		UNION ALL SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace
		UNION ALL SELECT 'publication ' || pubname || ' ' || pubinsert || pubupdate || pubdelete || pubviaroot FROM pg_publication
		UNION ALL SELECT 'published ' || pubname || ' ' || tablename FROM pg_publication_tables
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

func TestApplyIsIdempotent(t *testing.T) {
	db := testenv.NewEmptyDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

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
		"publication hookstream_outbox truefalsefalsetrue", // inserts only, via the partition root
		"published hookstream_outbox outbox_event",
		"published hookstream_endpoints endpoint",
		"published hookstream_endpoints endpoint_secret",
		"function outbox_create_partitions",
		"function outbox_drop_partitions",
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
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM schema_migration`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(all) {
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
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM schema_migration`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(all) {
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
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = migrations.Apply(ctx, conn)
	if err == nil || !strings.Contains(err.Error(), "changed after it was applied") {
		t.Fatalf("err = %v, want a changed-migration error", err)
	}
}
