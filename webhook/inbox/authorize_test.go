package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook/inbox"
)

// customerMayUpdate is an AuthorizeFunc: the customer named in the event must hold the
// permission now, read in the processing transaction and locked until it commits.
func customerMayUpdate(serviceDown *atomic.Bool) inbox.AuthorizeFunc {
	return func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		if serviceDown.Load() {
			return errors.New("permission service unavailable")
		}
		var data struct {
			CustomerID string `json:"customer_id"`
		}
		env, err := ev.Envelope()
		if err != nil {
			return err
		}
		if err := json.Unmarshal(env.Data, &data); err != nil {
			return fmt.Errorf("%w: data: %v", inbox.ErrRefused, err)
		}
		var allowed bool
		err = tx.QueryRow(ctx, `SELECT may_update FROM customer_permissions WHERE customer_id = $1 FOR SHARE`, data.CustomerID).Scan(&allowed)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !allowed) {
			return fmt.Errorf("customer %s may not update: %w", data.CustomerID, inbox.ErrRefused)
		}
		return err
	}
}

// The authorization hook runs after verification and before the effect; a refused event is
// final (refused, never retried, its copies acknowledged and not processed); an undecidable
// one is retried; a ProcessFunc may refuse too, losing its writes.
func TestAuthorize(t *testing.T) {
	db := newEffectsDatabase(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `CREATE TABLE customer_permissions (customer_id text PRIMARY KEY, may_update bool NOT NULL);
		INSERT INTO customer_permissions VALUES ('cus_ok', true), ('cus_revoked', false)`); err != nil {
		t.Fatal(err)
	}
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.FirstRetryDelay, cfg.MaxRetryDelay = 50*time.Millisecond, 100*time.Millisecond
	var (
		serviceDown atomic.Bool
		mu          sync.Mutex
		authorized  = map[string]int{} // event id → Authorize calls
		processed   = map[string]int{}
	)
	authorize := customerMayUpdate(&serviceDown)
	cfg.Authorize = func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		mu.Lock()
		authorized[ev.ID]++
		mu.Unlock()
		return authorize(ctx, tx, ev)
	}
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		mu.Lock()
		processed[ev.ID]++
		mu.Unlock()
		if err := applyEffect(ctx, tx, ev); err != nil {
			return err
		}
		if strings.Contains(string(ev.Body), `"refuse_in_processing":true`) {
			return fmt.Errorf("order already cancelled: %w", inbox.ErrRefused)
		}
		return nil
	}, cfg)

	event := func(customer string, extra string) (string, []byte) {
		id := outbox.NewEventID()
		return id, envelope(t, id, "customer.updated", `{"customer_id":"`+customer+`","version":1`+extra+`}`)
	}
	okID, okBody := event("cus_ok", "")
	revokedID, revokedBody := event("cus_revoked", "")
	unknownID, unknownBody := event("cus_unknown", "")
	lateID, lateBody := event("cus_ok", `,"refuse_in_processing":true`)
	for id, body := range map[string][]byte{okID: okBody, revokedID: revokedBody, unknownID: unknownBody, lateID: lateBody} {
		if code := hookstream.deliver(in, id, body); code != http.StatusNoContent {
			t.Fatalf("delivery: %d", code)
		}
	}
	stopRun := testenv.Go(t, "Run", in.Run)
	testenv.Eventually(t, 5*time.Second, "every event finished", func() bool {
		return testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox WHERE state IN ('processed', 'refused')`) == 4
	})
	time.Sleep(10 * cfg.MaxRetryDelay) // a refused event must not come back

	for id, want := range map[string]string{okID: "processed", revokedID: "refused", unknownID: "refused", lateID: "refused"} {
		r, _ := getRow(t, db.Pool, id)
		effects := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects WHERE event_id = $1`, id)
		if r.State != want || r.Attempts != 1 || r.NextAttemptAt != nil {
			t.Errorf("%s: %s after %d attempts, want %s after 1 and no next attempt", id, r.State, r.Attempts, want)
		}
		if want == "refused" && (effects != 0 || !strings.Contains(derefOr(r.LastError), "refused")) {
			t.Errorf("refused %s: %d effects, last_error %q; want none and the reason", id, effects, derefOr(r.LastError))
		}
	}
	if r, _ := getRow(t, db.Pool, revokedID); !strings.Contains(derefOr(r.LastError), "customer cus_revoked may not update") {
		t.Errorf("last_error %q does not name the refusal", derefOr(r.LastError))
	}
	mu.Lock()
	if authorized[revokedID] != 1 || processed[revokedID] != 0 || processed[unknownID] != 0 {
		t.Errorf("refused events: authorized %d, processed %d/%d times; want 1, 0, 0", authorized[revokedID], processed[revokedID], processed[unknownID])
	}
	if processed[lateID] != 1 {
		t.Errorf("event refused in processing processed %d times, want 1", processed[lateID])
	}
	mu.Unlock()

	// A copy of a refused event is acknowledged (the sender should stop) and not processed.
	if code := hookstream.deliver(in, revokedID, revokedBody); code != http.StatusNoContent {
		t.Fatalf("copy of a refused event: %d, want 204", code)
	}
	// Granting the permission later does not revive it: refused is final.
	if _, err := db.Pool.Exec(ctx, `UPDATE customer_permissions SET may_update = true WHERE customer_id = 'cus_revoked'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * cfg.PollInterval)
	if r, _ := getRow(t, db.Pool, revokedID); r.State != "refused" {
		t.Fatalf("refused event is now %s", r.State)
	}

	// A decision that cannot be made is a failure, retried until it can.
	serviceDown.Store(true)
	downID, downBody := event("cus_ok", "")
	if code := hookstream.deliver(in, downID, downBody); code != http.StatusNoContent {
		t.Fatalf("delivery: %d", code)
	}
	testenv.Eventually(t, 5*time.Second, "a failed authorization recorded", func() bool {
		r, _ := getRow(t, db.Pool, downID)
		return r.State == "retrying" && strings.Contains(derefOr(r.LastError), "permission service unavailable")
	})
	serviceDown.Store(false)
	testenv.Eventually(t, 5*time.Second, "processed once the service is back", func() bool {
		r, _ := getRow(t, db.Pool, downID)
		return r.State == "processed"
	})
	stopRun()
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects WHERE event_id = $1`, downID); n != 1 {
		t.Fatalf("%d effects for the retried event, want 1", n)
	}
}
