package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// verify-ledger against a real database: an event nobody received fails with status 1 and says
// which; once delivered, recorded and received it holds.
func TestVerifyLedger(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	created := time.Now().Add(-time.Hour).UTC()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`INSERT INTO partner (id) VALUES ('pa')`)
	exec(`INSERT INTO endpoint (id, partner_id, url, event_types, created_at, updated_at) VALUES ('ep_1', 'pa', 'https://x', '{*}', $1, $1)`, created)
	exec(`INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ('evt_00000000000000000000000001', 'pa', 'customer.created', 'customer', 'c1', $1, '{}')`, created.Add(time.Minute))
	out, err := runCLI(t, "verify-ledger", "-database-url", db.URL)
	if !errors.Is(err, errLedgerFailed) || !strings.Contains(out, "evt_00000000000000000000000001 → ep_1 (delivery state none)") {
		t.Fatalf("an undelivered event: %v\n%s", err, out)
	}
	id := records.DeliveryID("evt_00000000000000000000000001", "ep_1")
	at := created.Add(time.Minute + time.Second)
	exec(`INSERT INTO delivery (delivery_id, event_id, endpoint_id, partner_id, state, attempt_count)
		VALUES ($1, 'evt_00000000000000000000000001', 'ep_1', 'pa', 'succeeded', 1)`, id)
	exec(`INSERT INTO delivery_attempt (delivery_id, attempt_no, trigger, started_at, status, latency_ms)
		VALUES ($1, 1, 'initial', $2, 204, 3)`, id, at)
	receipts := filepath.Join(t.TempDir(), "receipts.jsonl")
	line := `{"event_id":"evt_00000000000000000000000001","endpoint_id":"ep_1","partner_id":"pa","webhook_id":"evt_00000000000000000000000001","received_at":"` +
		at.Add(time.Millisecond).Format(time.RFC3339Nano) + `","verified":true,"status":204}` + "\n"
	if err := os.WriteFile(receipts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(t, "verify-ledger", "-database-url", db.URL, "-receipts", receipts, "-max-unrecorded", "0", "-until", "1m")
	if err != nil || !strings.Contains(out, "the ledger holds") {
		t.Fatalf("a delivered event: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "verify-ledger", "-database-url", db.URL, "-since", "yesterday"); err == nil || !strings.Contains(err.Error(), "-since") {
		t.Fatalf("a bad -since: %v", err)
	}
}
