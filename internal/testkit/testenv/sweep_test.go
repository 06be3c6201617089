package testenv

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/testkit/scratch"
)

// A test database left by a killed test process, with the logical slot a cdc test made on it,
// is dropped by a later process once it is stale; a recent one, a template and names of other
// kinds are left alone.
func TestStaleTestDatabasesAreSweptWithTheirSlots(t *testing.T) {
	server := ServerURL(t)
	ctx := context.Background()
	now := time.Now()
	stale, recent := testDatabaseName(now.Add(-staleAfter-time.Hour)), testDatabaseName(now.Add(-time.Hour))
	for _, name := range []string{stale, recent} {
		url, err := scratch.CreateDatabase(ctx, server, name, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = scratch.DropDatabase(server, name) })
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, name)
		conn.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
	}
	dropped := sweepStale(ctx, server, now)
	if !slices.Contains(dropped, stale) || slices.Contains(dropped, recent) {
		t.Errorf("swept %v: want %s dropped and %s kept", dropped, stale, recent)
	}
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for name, want := range map[string]int{stale: 0, recent: 1} {
		var dbs, slots int
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_database WHERE datname = $1),
			(SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1)`, name).Scan(&dbs, &slots); err != nil {
			t.Fatal(err)
		}
		if dbs != want || slots != want {
			t.Errorf("%s: %d databases and %d slots after the sweep, want %d of each", name, dbs, slots, want)
		}
	}
	for _, name := range []string{"hst_template_0123abcd", "hst_7d77d203f1aa9a16", "hstbench_e2e_0123456789", "hst_tx_1"} {
		if _, ok := testDatabaseCreated(name); ok {
			t.Errorf("%s taken for a test database of this kit", name)
		}
	}
}
