package retrytopics_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/retrytopics"
)

// R23: an endpoint failing for WarnAfter is warned once per failing period; past DisableAfter it
// is disabled; both through the outbox, in the transaction that changes the endpoint.
func TestFailureWindow(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if _, err := db.Pool.Exec(ctx, `INSERT INTO partner (id) VALUES ('p1')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO endpoint (id, partner_id, url, failing_since) VALUES
		  ('ep_ok', 'p1', 'https://ok.example', NULL),
		  ('ep_new', 'p1', 'https://new.example', $1::timestamptz - interval '1 hour'),
		  ('ep_day', 'p1', 'https://day.example', $1::timestamptz - interval '25 hours'),
		  ('ep_dead', 'p1', 'https://dead.example', $1::timestamptz - interval '6 days')`, now); err != nil {
		t.Fatal(err)
	}
	cfg := retrytopics.DefaultFailureWindowConfig()
	w, err := retrytopics.NewFailureWindow(cfg, db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx, now); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx, now.Add(time.Minute)); err != nil { // nothing new: no second warning
		t.Fatal(err)
	}
	got := outboxEvents(t, db)
	want := []string{"endpoint.failing ep_day", "endpoint.disabled ep_dead", "endpoint.failing ep_dead"}
	if !testenv.SameElements(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	status := func(id string) string {
		var s string
		if err := db.Pool.QueryRow(ctx, `SELECT status FROM endpoint WHERE id = $1`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if status("ep_dead") != "disabled" || status("ep_day") != "active" || status("ep_new") != "active" {
		t.Fatal("wrong endpoints disabled")
	}

	// A success clears failing_since (the recorder does); a new failing period is warned anew.
	if _, err := db.Pool.Exec(ctx, `UPDATE endpoint SET failing_since = $1::timestamptz - interval '30 hours' WHERE id = 'ep_day'`, now.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx, now.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := len(outboxEvents(t, db)); n != 5 { // + ep_day warned again, + ep_new warned
		t.Fatalf("%d events after the second period, want 5: %v", n, outboxEvents(t, db))
	}
}

func outboxEvents(t *testing.T, db *testenv.Database) []string {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(), `SELECT type, subject_id, payload FROM outbox_event WHERE partner_id <> 'hookstream:operator' ORDER BY event_id`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var typ, subject string
	var payload json.RawMessage
	if _, err := pgx.ForEachRow(rows, []any{&typ, &subject, &payload}, func() error {
		var d map[string]any
		if err := json.Unmarshal(payload, &d); err != nil || d["endpoint_id"] != subject {
			t.Errorf("payload %s", payload)
		}
		out = append(out, typ+" "+subject)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
