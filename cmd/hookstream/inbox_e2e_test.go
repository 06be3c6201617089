package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/webhook"
	"github.com/hookstream/hookstream/webhook/inbox"
)

// One product, both ends (R29, R11, R24): the quick start delivers into a partner service built
// on the receiver library, and a replay of a delivered event carries the same webhook-id, so the
// partner's application applies every event exactly once.
func TestDevDeliversIntoInbox(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	ctx := context.Background()

	// The partner's side: its own database, the inbox table and the application's table.
	partnerDB := testenv.NewEmptyDatabase(t)
	if err := inbox.Migrate(ctx, partnerDB.Pool); err != nil {
		t.Fatal(err)
	}
	if _, err := partnerDB.Pool.Exec(ctx, `CREATE TABLE applied (event_id text NOT NULL, type text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	// The endpoint's secret is shown when it is created, so the receiver starts afterwards.
	var receiver atomic.Pointer[inbox.Inbox]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if in := receiver.Load(); in != nil {
			in.ServeHTTP(w, r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	epID, secret := dev.createEndpoint(t, "pc", srv.URL+"/hooks", "customer.*")
	verifier, err := webhook.NewVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	apply := func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		_, err := tx.Exec(ctx, `INSERT INTO applied (event_id, type) VALUES ($1, $2)`, ev.ID, ev.Type)
		return err
	}
	cfg := inbox.DefaultConfig()
	cfg.PollInterval = 200 * time.Millisecond
	in, err := inbox.New(partnerDB.Pool, verifier, apply, cfg)
	if err != nil {
		t.Fatal(err)
	}
	receiver.Store(in)
	testenv.Go(t, "inbox.Run", in.Run)
	time.Sleep(500 * time.Millisecond) // the endpoint record reaches the views before the events

	events := []string{appendEvent(t, db, "pc", "customer.created"), appendEvent(t, db, "pc", "customer.updated"),
		appendEvent(t, db, "pc", "customer.deleted")}
	waitApplied := func(what string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			var rows, distinct int
			if err := partnerDB.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT event_id) FROM applied`).Scan(&rows, &distinct); err != nil {
				t.Fatal(err)
			}
			if rows > len(events) {
				t.Fatalf("%s: %d applications of %d events", what, rows, len(events))
			}
			if rows == len(events) && distinct == len(events) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d of %d events applied after 60s", what, rows, len(events))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitApplied("first deliveries")

	// A replay reaches the receiver again, with the same id: stored once, applied once. It needs
	// the delivery in the history, which the recorder writes a little after the receiver answered.
	did := records.DeliveryID(events[0], epID)
	for deadline := time.Now().Add(30 * time.Second); ; {
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery WHERE delivery_id = $1`, did).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recorder did not write delivery %s within 30s", did)
		}
		time.Sleep(50 * time.Millisecond)
	}
	replay, err := dev.api.ReplayDeliveryWithResponse(ctx, "pc", did, adminclient.Empty{})
	must(t, "replay", replay, err)
	if replay.JSON202 == nil || replay.JSON202.EventID != events[0] {
		t.Fatalf("replay answered %s", replay.Body)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var attempts int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery_attempt WHERE delivery_id = $1 AND trigger = 'replay' AND status = 204`,
			did).Scan(&attempts); err != nil {
			t.Fatal(err)
		}
		if attempts == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replay was not delivered within 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(cfg.PollInterval * 3) // time for a second application, which must not come
	waitApplied("after the replay")
	var stored, processed int
	if err := partnerDB.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state = 'processed') FROM webhook_inbox`).Scan(&stored, &processed); err != nil {
		t.Fatal(err)
	}
	if stored != len(events) || processed != len(events) {
		t.Fatalf("inbox holds %d events, %d processed; want %d and %d", stored, processed, len(events), len(events))
	}
}
