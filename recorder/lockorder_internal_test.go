package recorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/retrytopics"
)

// Writers of the history take their row locks in one order (the lock order, recorder.go), so
// they never deadlock: two recorder instances storing overlapping batches, each listing its
// attempts in the opposite order of the other and moving the same endpoints' failing_since
// the other way, a third storing other deliveries of the same endpoints, and the pending writer
// inserting the first ones, all at once and many times over. PostgreSQL would abort one of two
// transactions waiting on each other with SQLSTATE 40P01; none may be.
//
// The instances store their batches as the recorder does, through writeShard, and none may be
// left unstored. A deadlock here is rare: it needs three writers meeting inside one row's insert
// (TestFirstWritesOfADeliveryNeverDeadlock below sets that up many times a second).
func TestHistoryWritersNeverDeadlock(t *testing.T) {
	t.Parallel()
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	const endpointsN, eventsN = 12, 12
	db.Exec(t, `INSERT INTO partner (id) VALUES ('p1')`)
	var eps []string
	for i := range endpointsN {
		ep := fmt.Sprintf("ep%02d", i)
		eps = append(eps, ep)
		db.Exec(t, `INSERT INTO endpoint (id, partner_id, url) VALUES ($1, 'p1', 'https://x.example')`, ep)
	}
	r := &Recorder{pool: db.Pool, log: slog.New(slog.DiscardHandler)}

	deadline := time.Now().Add(15 * time.Second)
	rounds, deadlocks := 0, 0
	for ; rounds < 40 && time.Now().Before(deadline) && deadlocks == 0; rounds++ {
		// Every round writes new deliveries: two instances each hold all of them, one reporting
		// failures (failing_since set) and the other successes (cleared), in opposite orders.
		var failing, succeeding, others []records.Attempt
		var pending []pendingRow
		started := time.Now().UTC()
		for range eventsN {
			evt := outbox.NewEventID()
			for _, ep := range eps {
				a := records.Attempt{V: records.AttemptVersion, DeliveryID: records.DeliveryID(evt, ep), EventID: evt,
					EndpointID: ep, PartnerID: "p1", EventType: "customer.created", AttemptNo: 1,
					Trigger: records.TriggerInitial, StartedAt: started, Outcome: records.OutcomeRetrying,
					Status: 503, ErrorCategory: records.CategoryHTTPStatus}
				next := started.Add(time.Minute)
				a.NextAttemptAt = &next
				failing = append(failing, a)
				b := a
				b.AttemptNo, b.Trigger, b.StartedAt = 2, records.TriggerRetry, started.Add(time.Second)
				b.Outcome, b.Status, b.ErrorCategory, b.NextAttemptAt = records.OutcomeDelivered, 200, "", nil
				succeeding = append(succeeding, b)
				pending = append(pending, pendingRow{a.DeliveryID, evt, ep, "p1", a.EventType, started})
				o := a
				o.EventID = evt + "-other"
				o.DeliveryID = records.DeliveryID(o.EventID, ep)
				others = append(others, o)
			}
		}
		slices.Reverse(others)
		slices.Reverse(succeeding)
		slices.Reverse(pending)

		var writes []func() error
		for _, batch := range [][]records.Attempt{failing, succeeding, others} {
			writes = append(writes, func() error { return writeBatch(ctx, r, batch) })
		}
		writes = append(writes, func() error { _, _, err := r.writePending(ctx, pending); return err })
		deadlocks += writeAtOnce(t, rounds, writes)
	}
	if deadlocks > 0 {
		t.Fatalf("%d deadlocks (SQLSTATE 40P01) in %d rounds of concurrent history writers", deadlocks, rounds)
	}
	// Every round stored all its rows.
	if n, want := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM delivery`), 2*rounds*endpointsN*eventsN; n != want {
		t.Fatalf("%d deliveries after %d rounds, want %d", n, rounds, want)
	}
	t.Logf("%d rounds, no deadlock", rounds)
}

// writeAtOnce runs writes all at once, each on a goroutine of its own released together, and
// returns how many were aborted as deadlocked (SQLSTATE 40P01); any other error fails t.
func writeAtOnce(t *testing.T, round int, writes []func() error) (deadlocks int) {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		start = make(chan struct{})
	)
	for _, write := range writes {
		wg.Go(func() {
			<-start
			if err := write(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "40P01" {
			deadlocks++
			t.Logf("round %d: %v", round, err)
			continue
		}
		t.Fatalf("round %d: %v", round, err)
	}
	return deadlocks
}

// writeBatch stores attempts as one shard of a recorder's batch.
func writeBatch(ctx context.Context, r *Recorder, attempts []records.Attempt) error {
	shard := make([]decoded, len(attempts))
	for i, a := range attempts {
		shard[i] = decoded{&kgo.Record{Key: []byte(a.DeliveryID)}, a}
	}
	_, unstorable, err := r.writeShard(ctx, shard)
	if err == nil && len(unstorable) > 0 {
		err = fmt.Errorf("%d attempts not stored: %s", len(unstorable), unstorable[0].detail)
	}
	return err
}

// The failure window (retrytopics, R23) writes the endpoint rows the recorder locks last: it
// warns about and disables endpoints failing for long while the recorder clears their
// failing_since on a success, so it takes them in the lock order too. The test sets the two
// against each other where a writer locking rows in the order it reads them would lose: the rows
// lie in the table in the opposite of the lock order (created from the last id to the first, as
// updates can leave them), and a third transaction holds ep001 until both wait, the recorder
// holding ep000 and the failure window in its statements. Once it lets go, one must wait on the
// other, never each on the other.
func TestFailureWindowBesideHistoryWritersNeverDeadlocks(t *testing.T) {
	t.Parallel()
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	const endpointsN = 40
	now := time.Now().UTC()
	db.Exec(t, `INSERT INTO partner (id) VALUES ('p1')`)
	for i := endpointsN - 1; i >= 0; i-- {
		// Failing for a day and a half, to be warned; every third one for six days, to be disabled.
		since := now.Add(-36 * time.Hour)
		if i%3 == 0 {
			since = now.Add(-6 * 24 * time.Hour)
		}
		db.Exec(t, `INSERT INTO endpoint (id, partner_id, url, failing_since) VALUES ($1, 'p1', 'https://x.example', $2)`,
			fmt.Sprintf("ep%03d", i), since)
	}
	cfg := retrytopics.DefaultFailureWindowConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	w, err := retrytopics.NewFailureWindow(cfg, db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	// A success for every endpoint: the recorder clears failing_since on all of them.
	var successes []records.Attempt
	evt := outbox.NewEventID()
	for i := range endpointsN {
		ep := fmt.Sprintf("ep%03d", i)
		successes = append(successes, records.Attempt{V: records.AttemptVersion, DeliveryID: records.DeliveryID(evt, ep),
			EventID: evt, EndpointID: ep, PartnerID: "p1", EventType: "customer.created", AttemptNo: 1,
			Trigger: records.TriggerInitial, StartedAt: now, Outcome: records.OutcomeDelivered, Status: 200})
	}

	holder, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, `SELECT 1 FROM endpoint WHERE id = 'ep001' FOR NO KEY UPDATE`); err != nil {
		t.Fatal(err)
	}
	waiting := func(n int) func() bool {
		return func() bool {
			return testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`) >= n
		}
	}
	errs := make(chan error, 2)
	go func() { _, err := storeAttempts(ctx, db.Pool, successes); errs <- err }()
	testenv.Eventually(t, 10*time.Second, "the recorder waiting on ep001", waiting(1))
	go func() { errs <- w.Check(ctx, now) }()
	testenv.Eventually(t, 10*time.Second, "the failure window waiting", waiting(2))
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "40P01" {
				t.Fatalf("the failure window and the recorder deadlocked (SQLSTATE 40P01): %v", err)
			}
			t.Fatal(err)
		}
	}
	// Whichever went first, the recorder's successes hold: no endpoint is failing.
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM endpoint WHERE failing_since IS NOT NULL`); n != 0 {
		t.Fatalf("%d endpoints still failing after their successes were recorded", n)
	}
}

// Three writers of one new delivery meeting at its first insert never deadlock: the pending
// writer, and two recorder instances holding its first and its second attempt. The deadlock this
// guards against needs no second row, only an unlucky interleaving inside one: an upsert that
// checked for the row before the pending writer inserted it goes on to insert its own, then waits
// on the pending writer for the second unique key (event_id, endpoint_id) while its insert is
// still undecided; the other instance, once the pending row is committed, updates it, and waits
// on that undecided insert for the delivery_id; the first then waits on the updater. So every
// round runs many small cells at once, each three writers of one delivery, to meet that
// interleaving as often as the machine allows.
func TestFirstWritesOfADeliveryNeverDeadlock(t *testing.T) {
	t.Parallel()
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	const cells = 12
	db.Exec(t, `INSERT INTO partner (id) VALUES ('p1')`)
	db.Exec(t, `INSERT INTO endpoint (id, partner_id, url) VALUES ('ep', 'p1', 'https://x.example')`)
	cfg := db.Pool.Config()
	cfg.MaxConns, cfg.MinConns = 3*cells, 3*cells // every writer on a connection of its own, at once
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	r := &Recorder{pool: pool, log: slog.New(slog.DiscardHandler)}

	deadline := time.Now().Add(8 * time.Second)
	rounds, deadlocks := 0, 0
	for ; time.Now().Before(deadline) && deadlocks == 0; rounds++ {
		var writes []func() error
		started := time.Now().UTC()
		for range cells {
			evt := outbox.NewEventID()
			first := records.Attempt{V: records.AttemptVersion, DeliveryID: records.DeliveryID(evt, "ep"), EventID: evt,
				EndpointID: "ep", PartnerID: "p1", EventType: "customer.created", AttemptNo: 1,
				Trigger: records.TriggerInitial, StartedAt: started, Outcome: records.OutcomeRetrying,
				Status: 503, ErrorCategory: records.CategoryHTTPStatus}
			next := started.Add(time.Minute)
			first.NextAttemptAt = &next
			second := first
			second.AttemptNo, second.Trigger, second.StartedAt = 2, records.TriggerRetry, started.Add(time.Second)
			second.Outcome, second.Status, second.ErrorCategory, second.NextAttemptAt = records.OutcomeDelivered, 200, "", nil
			row := pendingRow{first.DeliveryID, evt, "ep", "p1", first.EventType, started}
			writes = append(writes,
				func() error { _, _, err := r.writePending(ctx, []pendingRow{row}); return err },
				func() error { return writeBatch(ctx, r, []records.Attempt{first}) },
				func() error { return writeBatch(ctx, r, []records.Attempt{second}) })
		}
		deadlocks += writeAtOnce(t, rounds, writes)
	}
	if deadlocks > 0 {
		t.Fatalf("%d deadlocks (SQLSTATE 40P01) in %d rounds of %d deliveries written by three writers at once", deadlocks, rounds, cells)
	}
	// Every delivery and both its attempts are stored, and the success holds.
	if n, want := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM delivery WHERE state = 'succeeded' AND attempt_count = 2`),
		rounds*cells; n != want {
		t.Fatalf("%d succeeded deliveries after %d rounds, want %d", n, rounds, want)
	}
	if n, want := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM delivery_attempt`), 2*rounds*cells; n != want {
		t.Fatalf("%d attempts after %d rounds, want %d", n, rounds, want)
	}
	t.Logf("%d rounds of %d deliveries, no deadlock", rounds, cells)
}
