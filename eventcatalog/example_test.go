package eventcatalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// A balance credited with a float amount breaks R7 (money is a decimal string). Given to
// outbox.Writer{Catalog: c}, the same event is refused by Append, and nothing is written.
func ExampleCatalog_CheckEvent() {
	c, err := eventcatalog.New()
	if err != nil {
		panic(err)
	}
	err = c.CheckEvent(outbox.Event{
		PartnerID: "partner_a",
		Type:      "balance.credited",
		Subject:   outbox.Subject{Type: "customer", ID: "cus_8f2k1"},
		Data: json.RawMessage(`{"customer_id":"cus_8f2k1","credit_id":"crd_51x",
			"amount":{"value":50.0,"currency":"USD"},"balance":{"value":"62.40","currency":"USD"}}`),
	})
	var verr *outbox.ValidationError
	if errors.As(err, &verr) && errors.Is(err, outbox.ErrInvalidData) {
		fmt.Println("refused field:", verr.Field)
		fmt.Println(err)
	}
	// Output:
	// refused field: data/amount/value
	// outbox: invalid data: data/amount/value: got number, want string (balance.credited v1, keyword type)
}

// The catalog as GET /v1/event-types publishes it: each type with its newest schema version and
// every version it is published at.
func ExampleTypes() {
	for _, et := range eventcatalog.Types() {
		var versions []string
		for _, v := range et.Versions {
			versions = append(versions, fmt.Sprint(v.SchemaVersion))
		}
		fmt.Printf("%-24s v%d %-11s versions %s\n", et.Type, et.SchemaVersion, et.Category, strings.Join(versions, ","))
	}
	// Output:
	// customer.created         v1 business    versions 1
	// customer.updated         v1 business    versions 1
	// customer.deleted         v1 business    versions 1
	// api_key.created          v1 business    versions 1
	// api_key.status_changed   v1 business    versions 1
	// balance.credited         v1 business    versions 1
	// balance.adjusted         v1 business    versions 1
	// balance.low              v1 business    versions 1
	// budget.threshold_crossed v1 business    versions 1
	// usage.finalized          v2 business    versions 1,2
	// endpoint.failing         v1 operational versions 1
	// endpoint.disabled        v1 operational versions 1
	// endpoint.order_broken    v1 operational versions 1
	// webhook.test             v1 operational versions 1
}

// A platform records a credit and its event in one transaction through a Writer that checks
// the catalog: an event that breaks its published schema fails the Append, nothing is written,
// and the caller decides whether to roll back (R9).
func Example_writer() {
	catalog, err := eventcatalog.New() // once, at start
	if err != nil {
		panic(err)
	}
	w := outbox.Writer{Catalog: catalog}

	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:54329/hookstream")
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// … the platform's own UPDATE of the customer's balance …
		_, err := w.Append(ctx, tx, outbox.Event{
			PartnerID: "partner_a",
			Type:      "balance.credited",
			Subject:   outbox.Subject{Type: "customer", ID: "cus_8f2k1"},
			Data: json.RawMessage(`{"customer_id":"cus_8f2k1","credit_id":"crd_51x",
				"amount":{"value":"50.00","currency":"USD"},"balance":{"value":"62.40","currency":"USD"}}`),
		})
		return err // a *outbox.ValidationError rolls the credit back with it
	})
	if err != nil {
		panic(err)
	}
}
