package inbox_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// The package example's ProcessFunc against real deliveries (R30): a replay is dropped by the
// inbox, a stale event by the version check, and the newest version wins whatever the order.
func TestExampleNewerVersionWins(t *testing.T) {
	db := newDatabase(t)
	if _, err := db.Pool.Exec(context.Background(), customersTable); err != nil {
		t.Fatal(err)
	}
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.ValidatePayload = requireCustomerVersion
	in := newInbox(t, db.Pool, hookstream.verifier(t), applyCustomerEvent, cfg)
	testenv.Go(t, "Run", in.Run)

	v7, v5, v8, v6 := outbox.NewEventID(), outbox.NewEventID(), outbox.NewEventID(), outbox.NewEventID()
	steps := []struct {
		name        string
		id          string
		version     int
		wantVersion int64
		wantEvent   string
	}{
		{"first change", v7, 7, 7, v7},
		{"older change arriving late", v5, 5, 7, v7},
		{"replay of the first change", v7, 7, 7, v7},
		{"newer change", v8, 8, 8, v8},
		{"stale change after it", v6, 6, 8, v8},
	}
	for _, s := range steps {
		if code := hookstream.deliver(in, s.id, customerUpdated(t, s.id, s.version)); code != http.StatusNoContent {
			t.Fatalf("%s: status %d", s.name, code)
		}
		testenv.Eventually(t, 5*time.Second, s.name+" processed", func() bool {
			r, _ := getRow(t, db.Pool, s.id)
			return r.State == "processed"
		})
		var (
			version int64
			eventID string
		)
		if err := db.Pool.QueryRow(context.Background(), `SELECT version, event_id FROM customers WHERE id = 'cus_8f2k1'`).
			Scan(&version, &eventID); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if version != s.wantVersion || eventID != s.wantEvent {
			t.Fatalf("%s: customer at version %d from %s, want %d from %s", s.name, version, eventID, s.wantVersion, s.wantEvent)
		}
	}
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox`); n != 4 {
		t.Fatalf("%d inbox rows, want 4: the replay is the same event", n)
	}

	// A customer.updated without a version is refused at the door (400), not retried.
	id := outbox.NewEventID()
	body := envelope(t, id, "customer.updated", `{"customer_id":"cus_8f2k1","changed":["status"]}`)
	if code := hookstream.deliver(in, id, body); code != http.StatusBadRequest {
		t.Fatalf("event without a version: status %d, want 400", code)
	}
}
