package cdc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// R28: cdc publishes an envelope of up to MaxEventBytes and dead-letters a larger one with
// reason too_large, and publishes data of up to outbox.MaxDataBytes (256 KiB, the writer's
// limit) and dead-letters larger data as malformed; either refusal is in the dlq topic and in
// outbox_dead_letter, the table the operator's route lists. The rows are written with raw SQL,
// as a platform writing around the outbox package would: the INSERT check admits data up to
// 896 KiB. With the defaults the data limit comes first: a 900 KiB envelope needs more than
// 256 KiB of data, so the envelope limit is tested at a configured 64 KiB.
func TestEventSizeLimitsAreExact(t *testing.T) {
	t.Parallel()
	if outbox.MaxDataBytes != 256<<10 || cdc.DefaultConfig().MaxEventBytes != 900<<10 {
		t.Fatalf("limits %d and %d; this test was written for 256 KiB of data and 900 KiB envelopes",
			outbox.MaxDataBytes, cdc.DefaultConfig().MaxEventBytes)
	}
	t.Run("envelope", func(t *testing.T) {
		e := newEnv(t)
		cfg := e.config(t)
		cfg.MaxEventBytes = 64 << 10
		start(t, cfg)
		// Every row of insertPadded has the same envelope beside its padding.
		probe := insertPadded(t, e, 10)
		overhead := len(consume(t, e, e.Names.Events, 1, 30*time.Second).records[0].Value) - 10
		at := insertPadded(t, e, cfg.MaxEventBytes-overhead)
		over := insertPadded(t, e, cfg.MaxEventBytes-overhead+1)
		after := insertPadded(t, e, 10)
		events := checkRefused(t, e, []string{probe, at, after}, over, cdc.ReasonTooLarge,
			fmt.Sprintf("envelope is %d bytes, limit %d", cfg.MaxEventBytes+1, cfg.MaxEventBytes))
		if n := len(events[1]); n != cfg.MaxEventBytes {
			t.Fatalf("the envelope at the limit is %d bytes, want %d", n, cfg.MaxEventBytes)
		}
	})
	t.Run("data", func(t *testing.T) {
		e := newEnv(t)
		start(t, e.config(t))
		// The data's size is that of the jsonb's text form, which cdc reads.
		overhead := testenv.QueryInt(t, e.DB.Pool, `SELECT octet_length($1::jsonb::text)`, paddedData(t, 0))
		at := insertPadded(t, e, outbox.MaxDataBytes-overhead)
		over := insertPadded(t, e, outbox.MaxDataBytes-overhead+1)
		after := insertPadded(t, e, 10)
		checkRefused(t, e, []string{at, after}, over, cdc.ReasonMalformed,
			fmt.Sprintf("payload too large: data: %d bytes, limit %d", outbox.MaxDataBytes+1, outbox.MaxDataBytes))
	})
}

// paddedData is valid customer.created data with a "pad" of n bytes.
func paddedData(t *testing.T, n int) json.RawMessage {
	return testenv.CatalogData(t, "customer.created", map[string]any{"pad": strings.Repeat("x", n)})
}

// insertPadded commits a customer.created row of paddedData(pad) and returns its event id.
func insertPadded(t *testing.T, e *env, pad int) string {
	t.Helper()
	id := outbox.NewEventID()
	if _, err := e.DB.Pool.Exec(context.Background(), `INSERT INTO outbox_event
		(event_id, partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload)
		VALUES ($1, 'p1', 'customer.created', 'customer', 'cus_1', date_trunc('second', now()), 1, $2)`, id, paddedData(t, pad)); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkRefused asserts the events topic holds exactly the published rows, in commit order, and
// the refused row is dead-lettered once with reason and detail; it returns the envelopes.
func checkRefused(t *testing.T, e *env, published []string, refused, reason, detail string) [][]byte {
	t.Helper()
	events := settle(t, e, e.Names.Events, len(published), 30*time.Second)
	if fmt.Sprint(events.keys()) != fmt.Sprint(published) {
		t.Fatalf("events %v, want %v", events.keys(), published)
	}
	dlq := settle(t, e, e.Names.DLQ, 1, 30*time.Second)
	var dl records.DeadLetter
	if err := json.Unmarshal(dlq.records[0].Value, &dl); err != nil {
		t.Fatal(err)
	}
	if len(dlq.records) != 1 || dl.Source != "cdc" || dl.EventID != refused || !strings.HasPrefix(dl.Reason, reason+": ") || !strings.Contains(dl.Reason, detail) {
		t.Fatalf("%d dead letters, the first %s/%s %q; want one, cdc's, of %s, %s: …%s", len(dlq.records), dl.Source, dl.EventID, dl.Reason, refused, reason, detail)
	}
	rows := deadLetterRows(t, e)
	if len(rows) != 1 || rows[0].eventID != refused || rows[0].reason != reason || !strings.Contains(rows[0].detail, detail) {
		t.Fatalf("outbox_dead_letter %+v; want one row of %s, %s: …%s", rows, refused, reason, detail)
	}
	out := make([][]byte, len(events.records))
	for i, r := range events.records {
		out[i] = r.Value
	}
	return out
}
