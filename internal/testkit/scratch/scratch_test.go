package scratch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/migrations"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// A migrated scratch database holds every migration; dropping it also drops a replication slot
// left on it (PostgreSQL refuses to drop a database a slot refers to), and a slot nobody reads
// is not streaming.
func TestMigratedDatabaseDroppedWithItsSlot(t *testing.T) {
	server := testenv.ServerURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := "hst_scratch_" + scratch.RandomHex(6)
	url, err := scratch.MigratedDatabase(ctx, server, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = scratch.DropDatabase(server, name) })
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	var applied int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM schema_migration`).Scan(&applied); err != nil || applied != len(all) {
		t.Fatalf("applied migrations %d (%v), want %d", applied, err, len(all))
	}

	if _, err := pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, name); err != nil {
		t.Fatal(err)
	}
	err = scratch.WaitSlotStreaming(ctx, pool, name, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "not streaming") {
		t.Fatalf("WaitSlotStreaming on a slot without a reader = %v, want not streaming", err)
	}
	pool.Close()

	if err := scratch.DropDatabase(server, name); err != nil {
		t.Fatal(err)
	}
	admin, err := pgxpool.New(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var left int
	if err := admin.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_database WHERE datname = $1)
		+ (SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1)`, name).Scan(&left); err != nil || left != 0 {
		t.Fatalf("after DropDatabase %d database or slot rows are left (%v)", left, err)
	}
}
