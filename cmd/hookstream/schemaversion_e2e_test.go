package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// R14 end to end, through `hookstream dev` (cdc, fanout, the sender; real PostgreSQL, testenv
// Kafka): usage.finalized committed at version 2 reaches an endpoint pinned to 1 as version 1
// and one pinned to 2 as version 2, each body signed as received and valid against its
// version's schema; after a PATCH of both pins the next event arrives in the other versions;
// an event a platform still writes at version 1 reaches an endpoint pinned to 2 as version 2.
func TestDevSchemaVersionPinning(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	ctx := context.Background()
	catalog := eventcatalog.Published()

	var rxOld, rxNew received
	always200 := func(int) int { return 200 }
	srvOld := httptest.NewServer(rxOld.handler(always200))
	defer srvOld.Close()
	srvNew := httptest.NewServer(rxNew.handler(always200))
	defer srvNew.Close()

	created, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "pv"})
	must(t, "create partner", created, err)
	create := func(url string, pin *adminclient.EndpointCreateSchemaVersion) (id, secret string, version int) {
		t.Helper()
		res, err := dev.api.CreateEndpointWithResponse(ctx, "pv", adminclient.EndpointCreate{URL: url, EventTypes: []string{"usage.*"}, SchemaVersion: pin})
		must(t, "create endpoint", res, err)
		return res.JSON201.ID, res.JSON201.Secret, res.JSON201.SchemaVersion
	}
	v1 := adminclient.EndpointCreateSchemaVersionN1
	epOld, secretOld, pinOld := create(srvOld.URL+"/hooks", &v1)
	epNew, secretNew, pinNew := create(srvNew.URL+"/hooks", nil) // the default: the newest
	if pinOld != 1 || pinNew != 2 {
		t.Fatalf("pins %d and %d, want 1 and the default 2", pinOld, pinNew)
	}
	time.Sleep(500 * time.Millisecond) // the endpoint records reach the views before the event

	commit := func(version int) string {
		t.Helper()
		var id string
		w := outbox.Writer{Catalog: catalog} // as a platform writes: checked against the catalog
		if err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			var err error
			id, err = w.Append(ctx, tx, outbox.Event{PartnerID: "pv", Type: "usage.finalized", SchemaVersion: version,
				Subject: outbox.Subject{Type: "usage", ID: "use_9a"}, Data: testenv.CatalogVersionData(t, "usage.finalized", version, nil)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// expect checks the n-th request a receiver got: event id, signature over exactly the body
	// received, the schema version, data valid against that version and the cost in its shape.
	expect := func(rx *received, n int, secret, eventID string, version int) {
		t.Helper()
		m := rx.waitFor(t, n, 60*time.Second)[n-1]
		v, err := webhook.NewVerifier([]string{secret})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.VerifyHeader(m.header, m.body); err != nil {
			t.Fatalf("request %d does not verify over the body received: %v", n, err)
		}
		var env outbox.Envelope
		if err := json.Unmarshal(m.body, &env); err != nil || env.EventID != eventID || m.header.Get("webhook-id") != eventID {
			t.Fatalf("request %d: %s (%v), want event %s", n, m.body, err, eventID)
		}
		if env.SchemaVersion != version {
			t.Fatalf("request %d: schema version %d, want %d: %s", n, env.SchemaVersion, version, m.body)
		}
		if err := catalog.CheckEvent(env.Event()); err != nil {
			t.Fatalf("request %d: not valid against usage.finalized v%d: %v", n, version, err)
		}
		var data struct {
			Cost map[string]any `json:"cost"`
		}
		if err := json.Unmarshal(env.Data, &data); err != nil {
			t.Fatal(err)
		}
		want := map[int]string{1: `map[currency:USD value:3.418200]`, 2: `map[amount_micros:3.4182e+06 currency:USD]`}[version]
		if got := fmt.Sprint(data.Cost); got != want {
			t.Fatalf("request %d: cost %s, want %s", n, got, want)
		}
	}

	first := commit(2)
	expect(&rxOld, 1, secretOld, first, 1)
	expect(&rxNew, 1, secretNew, first, 2)

	// Move both pins: what each receives next changes.
	two, one := 2, 1
	patched, err := dev.api.UpdateEndpointWithResponse(ctx, "pv", epOld, adminclient.EndpointPatch{SchemaVersion: &two})
	must(t, "patch "+epOld, patched, err)
	patched, err = dev.api.UpdateEndpointWithResponse(ctx, "pv", epNew, adminclient.EndpointPatch{SchemaVersion: &one})
	must(t, "patch "+epNew, patched, err)
	if patched.JSON200 == nil || patched.JSON200.SchemaVersion != 1 {
		t.Fatalf("patched endpoint %s", patched.Body)
	}
	second := commit(2)
	expect(&rxOld, 2, secretOld, second, 2)
	expect(&rxNew, 2, secretNew, second, 1)

	// A platform still writing version 1: the endpoint pinned to 2 gets it converted up, the
	// one pinned to 1 gets it as written.
	third := commit(1)
	expect(&rxOld, 3, secretOld, third, 2)
	expect(&rxNew, 3, secretNew, third, 1)
	if n, m := len(rxOld.all()), len(rxNew.all()); n != 3 || m != 3 {
		t.Fatalf("receivers got %d and %d requests, want 3 each", n, m)
	}
}
