package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// design.md section 12: `hookstream trigger` of every catalog type, against a running `hookstream dev`,
// reaches the partner's receiver as a signed request that verifies with the endpoint's secret,
// carrying the printed event id and data its type's schema accepts; another partner's receiver
// gets none of them.
func TestTriggerDeliversEveryCatalogType(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	var rx, other received
	srv := httptest.NewServer(rx.handler(func(int) int { return http.StatusNoContent }))
	defer srv.Close()
	otherSrv := httptest.NewServer(other.handler(func(int) int { return http.StatusNoContent }))
	defer otherSrv.Close()

	trigger := func(args ...string) string {
		t.Helper()
		status, stdout, stderr := cli(t, append([]string{"trigger"}, append(args, "--database-url", db.URL)...)...)
		id := strings.TrimSpace(stdout)
		if status != 0 || !outbox.ValidEventID(id) {
			t.Fatalf("hookstream trigger %s: status %d, stdout %q\n%s", strings.Join(args, " "), status, stdout, stderr)
		}
		return id
	}
	if status, _, stderr := cli(t, "trigger", "customer.created", "--database-url", db.URL); status != 2 || !strings.Contains(stderr, "no partner yet") {
		t.Errorf("trigger with no partner: status %d\n%s", status, stderr)
	}
	_, secret := dev.createEndpoint(t, "pt", srv.URL+"/hooks", "*")
	time.Sleep(500 * time.Millisecond) // the endpoint records reach the views before the events

	// Every type the outbox carries; webhook.test is hookstream's own (endpoints test).
	var types []eventcatalog.EventType
	for _, et := range eventcatalog.Types() {
		if !slices.Contains(eventcatalog.ReservedTypes(), et.Type) {
			types = append(types, et)
		}
	}
	if status, _, stderr := cli(t, "trigger", eventcatalog.TestEventType, "--database-url", db.URL); status != 2 || !strings.Contains(stderr, "endpoints test") {
		t.Errorf("trigger webhook.test: status %d\n%s", status, stderr)
	}
	sent := map[string]string{}                  // event id → type
	sent[trigger(types[0].Type)] = types[0].Type // the deployment's only partner
	dev.createEndpoint(t, "other", otherSrv.URL+"/hooks", "*")
	time.Sleep(500 * time.Millisecond)
	for _, et := range types[1:] {
		sent[trigger(et.Type, "--partner", "pt")] = et.Type
	}
	if status, _, stderr := cli(t, "trigger", "customer.created", "--database-url", db.URL); status != 2 || !strings.Contains(stderr, "several partners (other, pt)") {
		t.Errorf("trigger without --partner beside two partners: status %d\n%s", status, stderr)
	}
	if status, _, stderr := cli(t, "trigger", "customer.created", "--partner", "nobody", "--database-url", db.URL); status != 2 || !strings.Contains(stderr, `no partner "nobody"`) {
		t.Errorf("trigger --partner nobody: status %d\n%s", status, stderr)
	}

	v, err := webhook.NewVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < len(sent) {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d of the %d triggered events in 60s", len(got), len(sent))
		}
		time.Sleep(100 * time.Millisecond)
		for _, m := range rx.all() {
			id := m.header.Get("webhook-id")
			if got[id] {
				continue
			}
			if err := v.VerifyHeader(m.header, m.body); err != nil {
				t.Fatalf("the request of %s does not verify: %v", id, err)
			}
			var env outbox.Envelope
			if err := json.Unmarshal(m.body, &env); err != nil {
				t.Fatalf("body of %s: %v", id, err)
			}
			if typ, ok := sent[id]; !ok || env.EventID != id || env.Type != typ || env.PartnerID != "pt" {
				t.Fatalf("received %s, a %s of %s; triggered %v", id, env.Type, env.PartnerID, sent)
			}
			if err := eventcatalog.Published().CheckEvent(env.Event()); err != nil {
				t.Fatalf("received %s: its data breaks the schema of %s: %v", id, env.Type, err)
			}
			got[id] = true
		}
	}
	time.Sleep(500 * time.Millisecond) // anything on its way to the other partner arrives
	if n := len(other.all()); n != 0 {
		t.Fatalf("another partner's receiver got %d requests", n)
	}

	status, stdout, stderr := cli(t, "trigger", "invoice.paid", "--partner", "pt", "--database-url", db.URL)
	if status != 2 || stdout != "" || !strings.Contains(stderr, `unknown event type "invoice.paid"`) {
		t.Errorf("trigger invoice.paid: status %d, stdout %q\n%s", status, stdout, stderr)
	}
	for _, et := range types {
		if !strings.Contains(stderr, "\n  "+et.Type+" ") {
			t.Errorf("the refusal of an unknown type does not list %s:\n%s", et.Type, stderr)
		}
	}
}
