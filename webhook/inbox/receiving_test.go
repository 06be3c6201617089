package inbox_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook/inbox"
)

// The failure cases of the receiving boundary (R29, R37), each against real PostgreSQL.

// The same event posted 50 times at once, spread over 3 instances (each its own pool, handler,
// registry and Run loop on one database), is stored once, processed once, and every copy is
// acknowledged.
func TestSameEventPostedConcurrentlyToThreeInstances(t *testing.T) {
	const (
		posts     = 50
		instances = 3
	)
	db := newEffectsDatabase(t)
	hookstream := newPartner(t)
	var (
		receivers []*inbox.Inbox
		registers []*prometheus.Registry
	)
	for n := range instances {
		pool := testenv.NewPool(t, db.URL)
		cfg := testConfig(t)
		reg := prometheus.NewRegistry()
		cfg.Registerer = reg
		in := newInbox(t, pool, hookstream.verifier(t), applyEffect, cfg)
		receivers, registers = append(receivers, in), append(registers, reg)
		testenv.Go(t, fmt.Sprintf("Run of instance %d", n), in.Run)
	}

	id := outbox.NewEventID()
	body := customerUpdated(t, id, 1)
	start := make(chan struct{})
	codes := make(chan int, posts)
	var wg sync.WaitGroup
	for n := range posts {
		req := hookstream.request(id, body, time.Now())
		wg.Go(func() {
			<-start
			codes <- serve(receivers[n%instances], req).Code
		})
	}
	close(start)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusNoContent {
			t.Fatalf("a copy was answered %d, want 204", code)
		}
	}
	testenv.Eventually(t, 10*time.Second, "the event processed", func() bool {
		r, _ := getRow(t, db.Pool, id)
		return r.State == "processed"
	})
	time.Sleep(300 * time.Millisecond) // room for a wrong second processing to show
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects WHERE event_id = $1`, id); n != 1 {
		t.Fatalf("%d effects, want 1", n)
	}
	if r, _ := getRow(t, db.Pool, id); r.Attempts != 1 {
		t.Fatalf("processed after %d attempts, want 1", r.Attempts)
	}
	var stored, duplicates float64
	for _, reg := range registers {
		stored += testenv.Counter(t, reg, "hookstream_inbox_received_total")
		duplicates += testenv.Counter(t, reg, "hookstream_inbox_duplicates_total")
	}
	if stored != 1 || duplicates != posts-1 {
		t.Fatalf("instances counted %v stored and %v duplicates, want 1 and %d", stored, duplicates, posts-1)
	}
}

// An instance that dies after storing an event (204 sent) and before processing it loses
// nothing: another instance processes it once, and the sender's retry is a duplicate.
func TestCrashBetweenStoringAndProcessing(t *testing.T) {
	db := newEffectsDatabase(t)
	hookstream := newPartner(t)

	dying, err := pgxpool.New(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	first := newInbox(t, dying, hookstream.verifier(t), applyEffect, testConfig(t))
	id := outbox.NewEventID()
	body := customerUpdated(t, id, 1)
	if code := hookstream.deliver(first, id, body); code != http.StatusNoContent {
		t.Fatalf("delivery: %d", code)
	}
	dying.Close() // the process is gone before its Run loop took the event

	other := newInbox(t, db.Pool, hookstream.verifier(t), applyEffect, testConfig(t))
	testenv.Go(t, "Run of the surviving instance", other.Run)
	testenv.Eventually(t, 5*time.Second, "processed by the other instance", func() bool {
		r, _ := getRow(t, db.Pool, id)
		return r.State == "processed"
	})
	if code := hookstream.deliver(other, id, body); code != http.StatusNoContent {
		t.Fatalf("the sender's retry: %d, want 204", code)
	}
	time.Sleep(200 * time.Millisecond)
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects WHERE event_id = $1`, id); n != 1 {
		t.Fatalf("%d effects, want 1", n)
	}
}

// An instance that dies while processing (its connections cut, as when the process is killed:
// the server rolls its transaction back) leaves no effect behind and no lock: another instance
// processes the event once.
func TestCrashDuringProcessing(t *testing.T) {
	db := newEffectsDatabase(t)
	hookstream := newPartner(t)

	proxy, url := db.ThroughProxy(t)
	dying := testenv.NewPool(t, url)
	started := make(chan struct{})
	release := make(chan struct{}) // the dead process's goroutine, freed when the test ends
	var once sync.Once
	first := newInbox(t, dying, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		if err := applyEffect(ctx, tx, ev); err != nil {
			return err
		}
		once.Do(func() { close(started) })
		<-release // hangs like a killed process: never returns, never commits
		return nil
	}, testConfig(t))
	testenv.Go(t, "Run of the dying instance", first.Run)
	t.Cleanup(func() { close(release) })

	id := hookstream.deliverPickedUp(t, first, started)
	other := newInbox(t, db.Pool, hookstream.verifier(t), applyEffect, testConfig(t))
	testenv.Go(t, "Run of the surviving instance", other.Run)
	time.Sleep(200 * time.Millisecond)
	if r, _ := getRow(t, db.Pool, id); r.State != "received" {
		t.Fatalf("while the first instance holds it the row is %s, want received", r.State)
	}

	proxy.Cut() // the first instance dies
	testenv.Eventually(t, 10*time.Second, "processed by the other instance", func() bool {
		r, _ := getRow(t, db.Pool, id)
		return r.State == "processed"
	})
	time.Sleep(200 * time.Millisecond)
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects WHERE event_id = $1`, id); n != 1 {
		t.Fatalf("%d effects, want 1: the dead instance's write must be rolled back", n)
	}
	if r, _ := getRow(t, db.Pool, id); r.Attempts != 1 {
		t.Fatalf("processed after %d counted attempts, want 1", r.Attempts)
	}
}
