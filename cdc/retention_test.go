package cdc_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// Rows and endpoints committed before cdc ever ran are published from the slot's snapshot.
func TestSnapshotPublishesExistingRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.DB.Pool.Exec(ctx, `INSERT INTO partner (id) VALUES ('p1') ON CONFLICT (id) DO NOTHING;
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep_1', 'p1', 'https://example.com/a'), ('ep_2', 'p1', 'https://example.com/b');
		INSERT INTO endpoint_secret (endpoint_id, id, secret_ciphertext) VALUES ('ep_1', 's1', '\x00');
		DELETE FROM endpoint WHERE id = 'ep_2'`); err != nil {
		t.Fatal(err)
	}
	ids := appendEvents(t, e, "p1", 10)
	start(t, e.config(t))

	events := settle(t, e, e.Names.Events, 10, time.Minute)
	if !testenv.SameElements(events.keys(), ids) || len(events.records) != 10 {
		t.Fatalf("events %v, want %v", events.keys(), ids)
	}
	eps := settle(t, e, e.Names.Endpoints, 1, time.Minute)
	if len(eps.records) != 1 || string(eps.records[0].Key) != "ep_1" {
		t.Fatalf("endpoint records %v, want only ep_1", eps.keys())
	}
	var v struct {
		Secrets []json.RawMessage `json:"secrets"`
	}
	if err := json.Unmarshal(eps.records[0].Value, &v); err != nil || len(v.Secrets) != 1 {
		t.Fatalf("ep_1 record %s (%v)", eps.records[0].Value, err)
	}
}

// Expired day partitions are dropped only after their rows are in Kafka (R10, design.md
// section 4), and their event ids with them; the operator's rows of refused outbox rows expire
// after the same retention.
func TestExpiredPartitionsDroppedAfterPublishing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	old := time.Date(2020, 2, 3, 12, 0, 0, 0, time.UTC)
	if _, err := outbox.CreatePartitions(ctx, e.DB.Pool, old.AddDate(0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	// A row of 2020 stands for one committed long ago: the outbox's checks of today (migration
	// 0021) refuse such an occurred_at.
	var id string
	e.DB.WithoutOutboxChecks(t, func() {
		id = e.DB.AppendEvent(ctx, t, outbox.Event{PartnerID: "p1", Type: "usage.finalized",
			Subject: outbox.Subject{Type: "usage", ID: "2020-02-03"}, OccurredAt: old, Data: testenv.CatalogData(t, "usage.finalized", nil)})
	})
	if _, err := e.DB.Pool.Exec(ctx, `INSERT INTO outbox_dead_letter
		(event_id, occurred_at, partner_id, type, schema_version, subject_type, subject_id, reason, detail, commit_lsn, created_at)
		VALUES ('evt_old', $1, 'p1', 'invoice.paid', 1, 'invoice', 'inv_1', 'unknown_type', 'old', '0/1', $1),
		       ('evt_new', now(), 'p1', 'invoice.paid', 1, 'invoice', 'inv_2', 'unknown_type', 'new', '0/2', now())`, old); err != nil {
		t.Fatal(err)
	}
	cfg := e.config(t)
	cfg.OutboxRetention = 24 * time.Hour
	cfg.MaintenanceInterval = 100 * time.Millisecond
	cfg.HeartbeatInterval = 100 * time.Millisecond
	start(t, cfg)

	exists := func(name string) bool {
		var ok bool
		if err := e.DB.Pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	testenv.Eventually(t, time.Minute, "the expired partition outbox_event_20200203 to be dropped", func() bool {
		return !exists("outbox_event_20200203")
	})
	// The event's id went with its partition, in the same maintenance step (migration 0008).
	var claims int
	if err := e.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM outbox_event_id WHERE event_id = $1`, id).Scan(&claims); err != nil {
		t.Fatal(err)
	}
	if claims != 0 {
		t.Fatalf("the id of the dropped event %s is still claimed", id)
	}
	got := settle(t, e, e.Names.Events, 1, 30*time.Second)
	if len(got.records) != 1 || string(got.records[0].Key) != id {
		t.Fatalf("events %v, want the old event %s published before its partition went", got.keys(), id)
	}
	today := "outbox_event_" + time.Now().UTC().Format("20060102")
	if !exists(today) {
		t.Fatalf("current partition %s was dropped", today)
	}
	if l := deadLetterRows(t, e); len(l) != 1 || l[0].eventID != "evt_new" {
		t.Fatalf("outbox_dead_letter after expiry %+v, want only evt_new", l)
	}
}
