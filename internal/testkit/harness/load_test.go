package harness_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/migrations"
	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/localinfra"
	"github.com/hookstream/hookstream/outbox"
)

// A load stopped while one of its commits is in doubt returns only once that commit resolved. A test that reads the outbox as the truth
// once the load returned, as the broker-kill test does, would otherwise miss an event the server
// committed a moment later, which cdc then publishes: a record of the events topic "unknown" to
// the outbox as read. A commit stays in doubt while the server cannot finish it; here every
// commit waits for a synchronous standby that does not exist (as one waits for a stalled WAL
// flush), in a private cluster since the setting binds the whole server.
func TestStoppedLoadWaitsForACommitInDoubt(t *testing.T) {
	ctx := context.Background()
	port, err := localinfra.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	var scriptLog bytes.Buffer
	pg := localinfra.Scripts{Repo: repo, Dir: t.TempDir(), Vars: []string{fmt.Sprintf("PG_PORT=%d", port)}, Log: &scriptLog, Timeout: 2 * time.Minute}
	url, err := pg.Run(ctx, "local/pg.sh", "up")
	t.Cleanup(func() {
		if _, err := pg.Run(context.Background(), "local/pg.sh", "down"); err != nil {
			t.Log(err)
		}
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, scriptLog.String())
	}
	pool, err := pgxpool.New(ctx, strings.TrimSpace(url))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.AcquireFunc(ctx, func(c *pgxpool.Conn) error {
		_, err := migrations.Apply(ctx, c.Conn())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	exec := func(sql string) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`INSERT INTO partner (id, name) VALUES ('p1', 'p1')`)
	exec(`ALTER SYSTEM SET synchronous_standby_names = 'absent'`)
	exec(`SELECT pg_reload_conf()`)

	gen, err := harness.NewGenerator(pool, 1, func(n int64) outbox.Event { return harness.NewEvent("p1", n) })
	if err != nil {
		t.Fatal(err)
	}
	loadCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, err := gen.Steady(loadCtx, 10, time.Hour)
		done <- err
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 30 s", what)
			}
		}
	}
	waitFor("commit waiting for the standby", func() bool {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&n)
		return err == nil && n > 0
	})
	stop() // the load ends while its commit is in doubt
	select {
	case err := <-done:
		t.Fatalf("the load returned while its commit was in doubt (%v)", err)
	case <-time.After(time.Second):
	}
	exec(`ALTER SYSTEM RESET synchronous_standby_names`)
	exec(`SELECT pg_reload_conf()`)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the load did not return within 30 s of its commit resolving")
	}
	// Read as the broker-kill test reads once the load returned, and again later: no commit
	// may resolve in between.
	outboxIDs := func() []string {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT event_id FROM outbox_event ORDER BY event_id`)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	first := outboxIDs()
	time.Sleep(time.Second)
	if later := outboxIDs(); len(first) == 0 || !slices.Equal(first, later) {
		t.Fatalf("the outbox held %v when the load returned and %v a second later: a commit was still in doubt", first, later)
	}
}
