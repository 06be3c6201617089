package scratch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

// Deadlocks counts the deadlocks PostgreSQL detected in one database: none in a fresh one, one
// after two sessions locked two rows in opposite orders, and none in a database beside it.
func TestDeadlocksCountsTheDatabasesDeadlocks(t *testing.T) {
	server := testenv.ServerURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name, other := "hst_scratch_"+scratch.RandomHex(6), "hst_scratch_"+scratch.RandomHex(6)
	var url string
	for _, n := range []string{name, other} {
		u, err := scratch.CreateDatabase(ctx, server, n, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = scratch.DropDatabase(server, n) })
		if n == name {
			url = u
		}
	}
	if n, err := scratch.Deadlocks(ctx, server, name, 10*time.Second); err != nil || n != 0 {
		t.Fatalf("fresh database: %d deadlocks, %v; want 0", n, err)
	}

	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)`); err != nil {
		t.Fatal(err)
	}
	// Two transactions each lock one row, then the other's: PostgreSQL aborts one of them.
	var txs [2]pgx.Tx
	for i := range txs {
		if txs[i], err = pool.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		defer txs[i].Rollback(ctx) //nolint:errcheck // for a test ended early; rolled back below
		if _, err := txs[i].Exec(ctx, `SELECT 1 FROM t WHERE id = $1 FOR UPDATE`, i+1); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 2)
	for i := range txs {
		go func() {
			_, err := txs[i].Exec(ctx, `SELECT 1 FROM t WHERE id = $1 FOR UPDATE`, 2-i)
			errs <- err
		}()
	}
	deadlocked := 0
	for range txs {
		var pgErr *pgconn.PgError
		switch err := <-errs; {
		case errors.As(err, &pgErr) && pgErr.Code == "40P01":
			deadlocked++
		case err != nil:
			t.Fatal(err)
		}
	}
	if deadlocked != 1 {
		t.Fatalf("%d of the two transactions aborted for a deadlock (SQLSTATE 40P01), want 1", deadlocked)
	}
	for i := range txs {
		_ = txs[i].Rollback(ctx)
	}
	pool.Close()
	if n, err := scratch.Deadlocks(ctx, server, name, 10*time.Second); err != nil || n != 1 {
		t.Fatalf("after a deadlock: %d deadlocks, %v; want 1", n, err)
	}
	if n, err := scratch.Deadlocks(ctx, server, other, 10*time.Second); err != nil || n != 0 {
		t.Fatalf("the database beside it: %d deadlocks, %v; want 0", n, err)
	}
}
