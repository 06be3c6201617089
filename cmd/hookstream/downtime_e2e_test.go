package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
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

// R37 "timeout after durable receipt": a receiver built on webhook/inbox stores the event and
// answers only after the sender's request timeout. The sender records a timeout and retries;
// the receiver gets the same webhook-id again, answers it as a copy of a stored event, and the
// application applies the event once.
func TestTimeoutAfterDurableReceipt(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db, "--request-timeout", "1s", "--retry-schedule", "1s,1s,1s")
	ctx := context.Background()

	partnerDB := testenv.NewEmptyDatabase(t)
	if err := inbox.Migrate(ctx, partnerDB.Pool); err != nil {
		t.Fatal(err)
	}
	if _, err := partnerDB.Pool.Exec(ctx, `CREATE TABLE applied (event_id text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var receiver atomic.Pointer[inbox.Inbox]
	var requests atomic.Int32
	ids := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in := receiver.Load()
		if in == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		ids <- r.Header.Get("webhook-id")
		if requests.Add(1) > 1 {
			in.ServeHTTP(w, r)
			return
		}
		// The first request: stored and committed, then the answer comes too late.
		stored := httptest.NewRecorder()
		in.ServeHTTP(stored, r)
		if stored.Code != http.StatusNoContent {
			t.Errorf("the inbox answered the first request %d, want 204 (stored)", stored.Code)
		}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		w.WriteHeader(stored.Code)
	}))
	defer srv.Close()
	epID, secret := dev.createEndpoint(t, "pt", srv.URL+"/hooks", "customer.*")
	verifier, err := webhook.NewVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	cfg := inbox.DefaultConfig()
	cfg.PollInterval = 100 * time.Millisecond
	in, err := inbox.New(partnerDB.Pool, verifier, func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		_, err := tx.Exec(ctx, `INSERT INTO applied (event_id) VALUES ($1)`, ev.ID)
		return err
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	receiver.Store(in)
	testenv.Go(t, "inbox.Run", in.Run)
	time.Sleep(500 * time.Millisecond) // the endpoint record reaches the views before the event
	eventID := appendEvent(t, db, "pt", "customer.created")

	// The history: the first attempt timed out, the second succeeded.
	did := records.DeliveryID(eventID, epID)
	deadline := time.Now().Add(60 * time.Second)
	for {
		detail, err := dev.api.GetDeliveryWithResponse(ctx, "pt", did)
		if err == nil && detail.JSON200 != nil && detail.JSON200.State == adminclient.DeliveryDetailStateSucceeded {
			as := detail.JSON200.Attempts
			if len(as) != 2 || as[0].ErrorCategory == nil || *as[0].ErrorCategory != records.CategoryTimeout ||
				as[1].Status == nil || *as[1].Status != http.StatusNoContent {
				t.Fatalf("attempts %s; want a timeout, then 204", detail.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s not succeeded within 60s", did)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("the receiver got %d requests, want 2", n)
	}
	for range 2 {
		if id := <-ids; id != eventID {
			t.Fatalf("webhook-id %q, want %s on both requests", id, eventID)
		}
	}
	time.Sleep(3 * cfg.PollInterval) // time for a second application, which must not come
	var applied, stored, processed int
	if err := partnerDB.Pool.QueryRow(ctx, `SELECT count(*) FROM applied`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if err := partnerDB.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state = 'processed') FROM webhook_inbox`).Scan(&stored, &processed); err != nil {
		t.Fatal(err)
	}
	if applied != 1 || stored != 1 || processed != 1 {
		t.Fatalf("applied %d times, %d stored, %d processed; want the event once", applied, stored, processed)
	}
}

// R37 "prolonged downtime", R22, R23, on the real number of attempts (ten, nine delays) of a
// compressed schedule and a compressed failure window. A receiver down long enough for its
// circuit to open gets every event once, once it is back. A receiver that stays down is
// disabled when the failure window ends: its deliveries end failed with the reason, within
// the schedule's attempts, and nothing is sent to it after it was disabled.
func TestProlongedDowntime(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db, "--retry-schedule", "500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms",
		"--failing-warn-after", "5s", "--failing-disable-after", "20s")
	ctx := context.Background()

	// Down for its first five requests (the circuit opens for 10 s, within the failure window),
	// then back.
	const downFor = 5
	var recovering, down received
	recoveringSrv := httptest.NewServer(recovering.handler(func(n int) int {
		if n <= downFor {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}))
	defer recoveringSrv.Close()
	downSrv := httptest.NewServer(down.handler(func(int) int { return http.StatusServiceUnavailable }))
	defer downSrv.Close()
	recoveringID, _ := dev.createEndpoint(t, "pd", recoveringSrv.URL+"/hooks", "customer.*")
	downID, _ := dev.createEndpoint(t, "pd", downSrv.URL+"/hooks", "customer.*")
	time.Sleep(500 * time.Millisecond)
	events := []string{appendEvent(t, db, "pd", "customer.created"), appendEvent(t, db, "pd", "customer.updated"),
		appendEvent(t, db, "pd", "customer.deleted")}

	endpointStatus := func(endpointID string) adminclient.EndpointStatus {
		t.Helper()
		ep, err := dev.api.GetEndpointWithResponse(ctx, "pd", endpointID)
		must(t, "get endpoint", ep, err)
		return ep.JSON200.Status
	}
	waitStates := func(endpointID string, want adminclient.DeliveryState) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			list, err := dev.api.ListDeliveriesWithResponse(ctx, "pd", endpointID, nil)
			must(t, "list deliveries", list, err)
			got := map[string]adminclient.DeliveryState{}
			for _, d := range list.JSON200.Data {
				got[d.EventID] = d.State
			}
			n := 0
			for _, id := range events {
				if got[id] == want {
					n++
				}
			}
			if n == len(events) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries to %s: %v; want all %s", endpointID, got, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// Back: every event arrives once among the answered requests.
	waitStates(recoveringID, adminclient.DeliveryStateSucceeded)
	accepted := map[string]int{}
	for _, m := range recovering.all()[downFor:] {
		accepted[m.header.Get("webhook-id")]++
	}
	for _, id := range events {
		if accepted[id] != 1 {
			t.Errorf("event %s accepted %d times after the receiver came back, want once (%v)", id, accepted[id], accepted)
		}
	}
	if s := endpointStatus(recoveringID); s != adminclient.EndpointStatusActive {
		t.Errorf("the recovered endpoint is %s, want active", s)
	}

	// Still down: disabled by the failure window, its deliveries failed.
	deadline := time.Now().Add(60 * time.Second)
	for endpointStatus(downID) != adminclient.EndpointStatusDisabled {
		if time.Now().After(deadline) {
			t.Fatalf("the down endpoint is %s after 60s, want disabled", endpointStatus(downID))
		}
		time.Sleep(200 * time.Millisecond)
	}
	requestsWhenDisabled := len(down.all())
	waitStates(downID, adminclient.DeliveryStateFailed)
	for _, id := range events {
		detail, err := dev.api.GetDeliveryWithResponse(ctx, "pd", records.DeliveryID(id, downID))
		must(t, "get delivery", detail, err)
		as := detail.JSON200.Attempts
		if len(as) == 0 || len(as) > 10 {
			t.Fatalf("history of %s at the down endpoint: %d attempts, want 1 to 10", id, len(as))
		}
		if last := as[len(as)-1]; last.Status != nil && *last.Status != http.StatusServiceUnavailable ||
			last.Status == nil && (last.ResponseExcerpt == nil || !strings.Contains(*last.ResponseExcerpt, "disabled")) {
			t.Errorf("the last attempt of %s is %s; want a 503, or not sent because the endpoint is disabled", id, detail.Body)
		}
	}
	time.Sleep(2 * time.Second)
	if n := len(down.all()); n > requestsWhenDisabled+1 { // one may have been in flight
		t.Errorf("the down endpoint got %d requests after it was disabled", n-requestsWhenDisabled)
	}
}
