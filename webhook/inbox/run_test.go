package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook/inbox"
)

// createEffects makes the application's own table: one row per applied event, deliberately
// without a unique constraint, so a second application of an event shows as a second row.
func createEffects(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	if _, err := pool.Exec(context.Background(),
		`CREATE TABLE effects (event_id text NOT NULL, attempt int NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`); err != nil {
		t.Fatal(err)
	}
}

// newEffectsDatabase is newDatabase with the application's effects table (createEffects).
func newEffectsDatabase(t testing.TB) *testenv.Database {
	t.Helper()
	db := newDatabase(t)
	createEffects(t, db.Pool)
	return db
}

func applyEffect(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
	_, err := tx.Exec(ctx, `INSERT INTO effects (event_id, attempt) VALUES ($1, $2)`, ev.ID, ev.Attempt)
	return err
}

// Three instances, each with its own pool, handler and Run loop, receive every event three
// times in any order while they process; each event has its effect exactly once (R29).
func TestRunProcessesEachEventOnce(t *testing.T) {
	const (
		events    = 60
		instances = 3
		copies    = 3
	)
	db := newEffectsDatabase(t)
	hookstream := newPartner(t)

	var receivers []*inbox.Inbox
	for n := range instances {
		pool := testenv.NewPool(t, db.URL)
		cfg := testConfig(t)
		cfg.BatchSize = 4
		cfg.PollInterval = 50 * time.Millisecond
		in := newInbox(t, pool, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
			// A little work inside the transaction, so claims overlap.
			time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
			return applyEffect(ctx, tx, ev)
		}, cfg)
		receivers = append(receivers, in)
		testenv.Go(t, fmt.Sprintf("Run of instance %d", n), in.Run)
	}

	var ids []string
	for range events {
		ids = append(ids, outbox.NewEventID())
	}
	var g errgroup.Group
	g.SetLimit(12)
	for c := range copies {
		for _, id := range ids {
			g.Go(func() error {
				in := receivers[rand.IntN(instances)]
				// Copies of one event are the same bytes (design.md section 1); a different
				// body under a known id is refused (TestHandlerRefusesBodyConflict).
				if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
					return fmt.Errorf("copy %d of %s: status %d", c+1, id, code)
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}

	testenv.Eventually(t, 30*time.Second, "every event processed", func() bool {
		return testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox WHERE state = 'processed'`) == events
	})
	time.Sleep(200 * time.Millisecond) // room for a wrong second application to show

	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox`); n != events {
		t.Fatalf("%d inbox rows, want %d", n, events)
	}
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects`); n != events {
		t.Fatalf("%d effects, want %d (one per event)", n, events)
	}
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(DISTINCT event_id) FROM effects WHERE event_id = ANY($1)`, ids); n != events {
		t.Fatalf("effects for %d distinct events, want %d", n, events)
	}
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox WHERE attempts <> 1 OR processed_at IS NULL`); n != 0 {
		t.Fatalf("%d events took other than one attempt", n)
	}
}

// A failing event is retried after a growing delay; the writes of a failed attempt, and a panic,
// leave nothing behind; the error stays visible until success.
func TestRunRetriesWithBackoff(t *testing.T) {
	db := newEffectsDatabase(t)
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.FirstRetryDelay = 400 * time.Millisecond
	cfg.MaxRetryDelay = 10 * time.Second

	var (
		mu       sync.Mutex
		starts   []time.Time
		attempts []int
	)
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		mu.Lock()
		starts = append(starts, time.Now())
		attempts = append(attempts, ev.Attempt)
		mu.Unlock()
		if err := applyEffect(ctx, tx, ev); err != nil {
			return err
		}
		switch ev.Attempt {
		case 1:
			return errors.New("billing service unavailable")
		case 2:
			panic("nil map in the application")
		}
		return nil
	}, cfg)
	testenv.Go(t, "Run", in.Run)

	id := outbox.NewEventID()
	if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
		t.Fatalf("status %d", code)
	}

	// Between the first and the second attempt an operator sees the failure and the next try.
	var afterFirst row
	testenv.Eventually(t, 5*time.Second, "first failure recorded", func() bool {
		afterFirst, _ = getRow(t, db.Pool, id)
		return afterFirst.Attempts == 1
	})
	if afterFirst.State != "retrying" || afterFirst.LastError == nil || !strings.Contains(*afterFirst.LastError, "billing service unavailable") ||
		afterFirst.NextAttemptAt == nil || afterFirst.ProcessedAt != nil {
		t.Fatalf("after one failure the row is %+v, want retrying with the error and a next attempt", afterFirst)
	}
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects`); n != 0 {
		t.Fatalf("%d effects after a failed attempt, want 0: its write was not rolled back", n)
	}

	testenv.Eventually(t, 10*time.Second, "event processed", func() bool {
		r, _ := getRow(t, db.Pool, id)
		return r.State == "processed"
	})
	final, _ := getRow(t, db.Pool, id)
	if final.Attempts != 3 || final.ProcessedAt == nil || final.NextAttemptAt != nil {
		t.Fatalf("processed row is %+v, want 3 attempts", final)
	}
	if final.LastError == nil || !strings.Contains(*final.LastError, "panic: nil map in the application") {
		t.Fatalf("last_error = %v, want the panic of attempt 2", final.LastError)
	}

	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(attempts) != "[1 2 3]" {
		t.Fatalf("ProcessFunc saw attempts %v, want [1 2 3]", attempts)
	}
	// Exponential: at least 400 ms before attempt 2, at least 800 ms before attempt 3.
	if gap := starts[1].Sub(starts[0]); gap < cfg.FirstRetryDelay {
		t.Errorf("attempt 2 came %s after attempt 1, want at least %s", gap, cfg.FirstRetryDelay)
	}
	if gap := starts[2].Sub(starts[1]); gap < 2*cfg.FirstRetryDelay {
		t.Errorf("attempt 3 came %s after attempt 2, want at least %s", gap, 2*cfg.FirstRetryDelay)
	}
	var effectAttempt int
	if err := db.Pool.QueryRow(context.Background(), `SELECT attempt FROM effects WHERE event_id = $1`, id).Scan(&effectAttempt); err != nil {
		t.Fatalf("exactly one effect expected: %v", err)
	}
	if effectAttempt != 3 {
		t.Fatalf("the effect is from attempt %d, want 3", effectAttempt)
	}
}

// After MaxAttempts failures an event is dead, keeps its last error (made storable whatever it
// contained), and is not tried again.
func TestRunDeadAfterMaxAttempts(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.MaxAttempts = 3
	var (
		mu    sync.Mutex
		calls int
		fixed bool // the application's bug is fixed
	)
	// PostgreSQL text refuses NUL and invalid UTF-8; a long error must be cut.
	ugly := "schema mismatch\x00 in \xff field " + strings.Repeat("x", 10_000)
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(context.Context, pgx.Tx, inbox.Event) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if fixed {
			return nil
		}
		return errors.New(ugly)
	}, cfg)
	testenv.Go(t, "Run", in.Run)

	id := outbox.NewEventID()
	if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
		t.Fatalf("status %d", code)
	}
	testenv.Eventually(t, 10*time.Second, "event dead", func() bool {
		r, _ := getRow(t, db.Pool, id)
		return r.State == "dead"
	})
	time.Sleep(4 * cfg.MaxRetryDelay) // a dead event must not be tried again

	r, _ := getRow(t, db.Pool, id)
	if r.Attempts != 3 || r.NextAttemptAt != nil || r.ProcessedAt != nil {
		t.Fatalf("dead row is %+v, want 3 attempts and no next attempt", r)
	}
	if r.LastError == nil || !strings.HasPrefix(*r.LastError, "schema mismatch in \uFFFD field xxx") ||
		len(*r.LastError) > 2048 || !utf8.ValidString(*r.LastError) {
		t.Fatalf("last_error = %.80q… (%d bytes), want the cleaned, cut error", derefOr(r.LastError), len(derefOr(r.LastError)))
	}
	mu.Lock()
	if calls != 3 {
		t.Fatalf("ProcessFunc called %d times, want 3", calls)
	}
	fixed = true
	mu.Unlock()

	// Once the cause is fixed, the statement from the package documentation tries it again.
	if _, err := db.Pool.Exec(context.Background(), `UPDATE webhook_inbox SET state = 'retrying', attempts = 0, next_attempt_at = now()
	 WHERE id = $1 AND state = 'dead'`, id); err != nil {
		t.Fatalf("documented retry statement: %v", err)
	}
	testenv.Eventually(t, 5*time.Second, "dead event processed after the retry", func() bool {
		r, _ := getRow(t, db.Pool, id)
		return r.State == "processed" && r.Attempts == 1
	})
	// And the documented pruning keeps a row processed just now.
	if _, err := db.Pool.Exec(context.Background(),
		`DELETE FROM webhook_inbox WHERE state = 'processed' AND processed_at < now() - interval '30 days'`); err != nil {
		t.Fatalf("documented prune statement: %v", err)
	}
	if _, ok := getRow(t, db.Pool, id); !ok {
		t.Fatal("pruning deleted a row processed just now")
	}
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// In a batch, a failing event loses its own writes and nothing else: the others' writes and
// processed states commit.
func TestRunFailureRollsBackOnlyThatEvent(t *testing.T) {
	db := newEffectsDatabase(t)
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.BatchSize = 3
	cfg.FirstRetryDelay = time.Hour
	cfg.MaxRetryDelay = time.Hour
	ids := []string{outbox.NewEventID(), outbox.NewEventID(), outbox.NewEventID()}
	failing := ids[1]
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		if err := applyEffect(ctx, tx, ev); err != nil {
			return err
		}
		if ev.ID == failing {
			// A statement error aborts the transaction; the savepoint must recover it.
			_, err := tx.Exec(ctx, `INSERT INTO no_such_table VALUES (1)`)
			return err
		}
		return nil
	}, cfg)
	// All three are stored before Run starts, so one claim takes them together.
	for _, id := range ids {
		if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
			t.Fatalf("status %d", code)
		}
	}
	testenv.Go(t, "Run", in.Run)
	testenv.Eventually(t, 5*time.Second, "batch done", func() bool {
		return testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox WHERE attempts = 1`) == 3
	})
	for _, id := range ids {
		r, _ := getRow(t, db.Pool, id)
		effects := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects WHERE event_id = $1`, id)
		switch {
		case id == failing && (r.State != "retrying" || effects != 0 || !strings.Contains(derefOr(r.LastError), "no_such_table")):
			t.Errorf("failing event: %s with %d effects, last_error %q; want retrying, 0 effects, the SQL error", r.State, effects, derefOr(r.LastError))
		case id != failing && (r.State != "processed" || effects != 1):
			t.Errorf("event beside the failure: %s with %d effects; want processed, 1", r.State, effects)
		}
	}
}

// A Run stopped while the ProcessFunc works rolls the event back; it is not counted as an
// attempt, another instance cannot take it while it is locked, and takes it once it is free.
func TestRunStoppedMidProcessing(t *testing.T) {
	db := newEffectsDatabase(t)
	hookstream := newPartner(t)
	cfg := testConfig(t)

	started := make(chan struct{})
	crashing := newInbox(t, db.Pool, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		if err := applyEffect(ctx, tx, ev); err != nil {
			return err
		}
		close(started)
		<-ctx.Done() // stuck until the service shuts down
		return ctx.Err()
	}, cfg)
	stopCrashing := testenv.Go(t, "Run of the stopping instance", crashing.Run)

	id := hookstream.deliverPickedUp(t, crashing, started)

	other := newInbox(t, db.Pool, hookstream.verifier(t), applyEffect, cfg)
	testenv.Go(t, "Run of the other instance", other.Run)
	time.Sleep(10 * cfg.PollInterval) // the other instance polls and must skip the locked row

	if r, _ := getRow(t, db.Pool, id); r.State != "received" || r.Attempts != 0 {
		t.Fatalf("while locked the row is %s with %d attempts, want received with 0", r.State, r.Attempts)
	}
	stopCrashing()
	testenv.Eventually(t, 5*time.Second, "processed by the other instance", func() bool {
		r, _ := getRow(t, db.Pool, id)
		return r.State == "processed"
	})
	r, _ := getRow(t, db.Pool, id)
	if r.Attempts != 1 || r.LastError != nil {
		t.Fatalf("row is %+v; the interrupted attempt must not count", r)
	}
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects WHERE event_id = $1`, id); n != 1 {
		t.Fatalf("%d effects, want 1: the interrupted attempt's write must be rolled back", n)
	}
}

// An event whose processing breaks the connection still counts its attempts and ends dead,
// instead of being retried for ever without a trace.
func TestRunBrokenConnectionCountsAttempts(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.MaxAttempts = 2
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		_, err := tx.Exec(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`)
		return err
	}, cfg)
	testenv.Go(t, "Run", in.Run)
	id := outbox.NewEventID()
	if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
		t.Fatalf("status %d", code)
	}
	testenv.Eventually(t, 10*time.Second, "event dead", func() bool {
		r, _ := getRow(t, db.Pool, id)
		return r.State == "dead"
	})
	if r, _ := getRow(t, db.Pool, id); r.Attempts != 2 || r.LastError == nil {
		t.Fatalf("row is %+v, want dead after 2 attempts with the error", r)
	}
}

// The inbox owns the transaction: the application cannot commit half an event.
func TestRunTransactionCannotBeEnded(t *testing.T) {
	db := newEffectsDatabase(t)
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.FirstRetryDelay, cfg.MaxRetryDelay = time.Hour, time.Hour
	commitErr := make(chan error, 1)
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		if err := applyEffect(ctx, tx, ev); err != nil {
			return err
		}
		err := tx.Commit(ctx)
		commitErr <- err
		return errors.New("fail after the commit attempt")
	}, cfg)
	testenv.Go(t, "Run", in.Run)
	id := outbox.NewEventID()
	if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
		t.Fatalf("status %d", code)
	}
	select {
	case err := <-commitErr:
		if err == nil {
			t.Fatal("tx.Commit inside the ProcessFunc succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not processed")
	}
	testenv.Eventually(t, 5*time.Second, "failure recorded", func() bool {
		r, _ := getRow(t, db.Pool, id)
		return r.State == "retrying"
	})
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects`); n != 0 {
		t.Fatalf("%d effects: the application committed a failed event's write", n)
	}
}

// Run refuses to wait for a table that does not exist: that is a deployment error.
func TestRunWithoutTable(t *testing.T) {
	db := testenv.NewEmptyDatabase(t)
	hookstream := newPartner(t)
	in := newInbox(t, db.Pool, hookstream.verifier(t), noProcessing, testConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := in.Run(ctx)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "webhook_inbox") {
		t.Fatalf("Run = %v (ctx %v), want an immediate error naming the table", err, ctx.Err())
	}
}

func TestMigrate(t *testing.T) {
	db := newDatabase(t) // migrated once
	ctx := context.Background()
	if err := inbox.Migrate(ctx, db.Pool); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	// Instances starting together migrate concurrently.
	var g errgroup.Group
	for range 4 {
		g.Go(func() error { return inbox.MigrateTable(ctx, db.Pool, "partner_inbox") })
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("concurrent MigrateTable: %v", err)
	}

	// The configured table is the one used.
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.Table = "partner_inbox"
	in := newInbox(t, db.Pool, hookstream.verifier(t), noProcessing, cfg)
	id := outbox.NewEventID()
	if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
		t.Fatalf("status %d", code)
	}
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM partner_inbox WHERE id = $1`, id); n != 1 {
		t.Fatalf("%d rows in partner_inbox, want 1", n)
	}

	// The states are explicit: the table refuses any other.
	_, err := db.Pool.Exec(ctx, `UPDATE partner_inbox SET state = 'done' WHERE id = $1`, id)
	if err == nil || !strings.Contains(err.Error(), "check constraint") {
		t.Fatalf("state 'done' accepted or refused for another reason: %v", err)
	}
	_, err = db.Pool.Exec(ctx, `UPDATE partner_inbox SET state = 'processed' WHERE id = $1`, id)
	if err == nil || !strings.Contains(err.Error(), "check constraint") {
		t.Fatalf("processed without processed_at accepted: %v", err)
	}
}

func TestNewRefusesMissingParts(t *testing.T) {
	db := testenv.NewEmptyDatabase(t)
	v := newPartner(t).verifier(t)
	bad := inbox.DefaultConfig()
	bad.BatchSize = 0
	for _, tt := range []struct {
		name string
		err  func() error
	}{
		{"nil pool", func() error { _, err := inbox.New(nil, v, noProcessing, inbox.DefaultConfig()); return err }},
		{"nil verifier", func() error { _, err := inbox.New(db.Pool, nil, noProcessing, inbox.DefaultConfig()); return err }},
		{"nil process", func() error { _, err := inbox.New(db.Pool, v, nil, inbox.DefaultConfig()); return err }},
		{"bad config", func() error { _, err := inbox.New(db.Pool, v, noProcessing, bad); return err }},
	} {
		if tt.err() == nil {
			t.Errorf("%s: New succeeded", tt.name)
		}
	}
}

// A write that breaks a deferred constraint fails only at COMMIT, after the ProcessFunc returned.
// The event at fault must still be found and counted, and the events committed beside it in a
// batch must not be held back by it.
func TestRunDeferredConstraintAtCommit(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `
		CREATE TABLE customers_known (id text PRIMARY KEY);
		CREATE TABLE notes (event_id text NOT NULL, customer_id text NOT NULL
			REFERENCES customers_known (id) DEFERRABLE INITIALLY DEFERRED);
		INSERT INTO customers_known VALUES ('cus_known');`); err != nil {
		t.Fatal(err)
	}
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.BatchSize = 3
	cfg.MaxAttempts = 2
	ids := []string{outbox.NewEventID(), outbox.NewEventID(), outbox.NewEventID()}
	poison := ids[1]
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		customer := "cus_known"
		if ev.ID == poison {
			customer = "cus_unknown"
		}
		_, err := tx.Exec(ctx, `INSERT INTO notes VALUES ($1, $2)`, ev.ID, customer)
		return err
	}, cfg)
	for _, id := range ids {
		if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
			t.Fatalf("status %d", code)
		}
	}
	testenv.Go(t, "Run", in.Run)
	testenv.Eventually(t, 10*time.Second, "poison dead, others processed", func() bool {
		return testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox WHERE state IN ('dead', 'processed')`) == 3
	})
	for _, id := range ids {
		r, _ := getRow(t, db.Pool, id)
		notes := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM notes WHERE event_id = $1`, id)
		switch {
		case id == poison && (r.State != "dead" || r.Attempts != 2 || !strings.Contains(derefOr(r.LastError), "foreign key")):
			t.Errorf("poison event: %s after %d attempts, last_error %q; want dead after 2 with the FK error", r.State, r.Attempts, derefOr(r.LastError))
		case id != poison && (r.State != "processed" || r.Attempts != 1 || notes != 1):
			t.Errorf("event beside it: %s after %d attempts with %d notes; want processed once", r.State, r.Attempts, notes)
		}
	}
}
