package eventcatalog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// The platform's path against a real PostgreSQL (R4, R9): a Writer with the catalog refuses a
// nonconforming event (R6's forbidden fields included) with a *outbox.ValidationError and
// writes nothing, and the transaction stays usable: a conforming event appended next in it
// commits, alone.
func TestWriterRefusesNonconformingEvent(t *testing.T) {
	db := testenv.NewDatabase(t)
	db.Partners(t, "partner_a")
	ctx := context.Background()
	w := outbox.Writer{Catalog: newCatalog(t)}
	et, _ := eventcatalog.Lookup("balance.credited")
	bad := eventOf(et, []byte(`{"customer_id":"cus_8f2k1","credit_id":"crd_51x","amount":{"value":50.0,"currency":"USD"},"balance":{"value":"62.40","currency":"USD"}}`))
	good := eventOf(et, et.Example)

	count := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) int {
		t.Helper()
		var n int
		if err := q.QueryRow(ctx, `SELECT count(*) FROM outbox_event`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var goodID string
	err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		id, err := w.Append(ctx, tx, bad)
		var verr *outbox.ValidationError
		if !errors.As(err, &verr) || !errors.Is(err, outbox.ErrInvalidData) || verr.Field != "data/amount/value" || id != "" {
			t.Fatalf("Append of a float amount: id %q, err %v; want a ValidationError on data/amount/value", id, err)
		}
		if n := count(tx); n != 0 {
			t.Fatalf("the refused event left %d rows", n)
		}
		// R6: a forbidden field anywhere in data, though no schema declares it.
		leak := eventOf(et, []byte(`{"customer_id":"cus_8f2k1","credit_id":"crd_51x","amount":{"value":"50.00","currency":"USD"},"balance":{"value":"62.40","currency":"USD"},"provider":[{"credentials":{"id":"x"}}]}`))
		if _, err := w.Append(ctx, tx, leak); !errors.As(err, &verr) || verr.Field != "data/provider/0/credentials" {
			t.Fatalf("Append of a nested credentials field: %v", err)
		}
		if _, err := w.Append(ctx, tx, outbox.Event{PartnerID: "partner_a", Type: "customer.exploded",
			Subject: outbox.Subject{Type: "customer", ID: "cus_8f2k1"}}); !errors.Is(err, outbox.ErrInvalidType) {
			t.Fatalf("Append of an unknown type: %v", err)
		}
		goodID, err = w.Append(ctx, tx, good) // the transaction is not aborted
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(db.Pool); n != 1 {
		t.Fatalf("outbox holds %d rows after commit, want the valid event alone", n)
	}
	var typ string
	var payload []byte
	if err := db.Pool.QueryRow(ctx, `SELECT type, payload FROM outbox_event WHERE event_id = $1`, goodID).Scan(&typ, &payload); err != nil || typ != et.Type {
		t.Fatalf("committed row: %q %v", typ, err)
	}
	// What PostgreSQL hands back (jsonb reorders members) still fits the schema.
	if err := w.Catalog.CheckEvent(eventOf(et, payload)); err != nil {
		t.Fatalf("stored payload %s: %v", payload, err)
	}
}
