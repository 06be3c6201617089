package outbox

import (
	"encoding/json"
	"testing"
	"time"
)

func TestValidType(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"api_key.status_changed": true,
		"customer.created":       true,
		"balance.low.crossed":    true,
		"budget.threshold_80":    true,
		"webhook.test":           true,
		"created":                false,
		"Customer.created":       false,
		"customer..created":      false,
		".customer":              false,
		"customer.":              false,
		"customer.created!":      false,
		"9lives.created":         false,
		"customer.9created":      false,
		"customer-created.x":     false,
		"":                       false,
	}
	for name, want := range cases {
		if got := ValidType(name); got != want {
			t.Errorf("ValidType(%q) = %v, want %v", name, got, want)
		}
	}
}

// R8: the envelope carries every field, in a fixed order, with data kept as given.
func TestEnvelopeShape(t *testing.T) {
	t.Parallel()
	env := Envelope{
		EventID:       "evt_01J0000000000000000000000A",
		Type:          "customer.created",
		OccurredAt:    time.Date(2026, 11, 30, 1, 2, 3, 456000, time.UTC),
		PartnerID:     "p1",
		Subject:       Subject{Type: "customer", ID: "cus_1"},
		SchemaVersion: 1,
		CorrelationID: "req_1",
		Data:          json.RawMessage(`{"customer_id":"cus_1"}`),
	}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event_id":"evt_01J0000000000000000000000A","type":"customer.created","occurred_at":"2026-11-30T01:02:03.000456Z","partner_id":"p1","subject":{"type":"customer","id":"cus_1"},"schema_version":1,"correlation_id":"req_1","data":{"customer_id":"cus_1"}}`
	if string(b) != want {
		t.Fatalf("envelope =\n%s\nwant\n%s", b, want)
	}
}

// TestEventIDsAreUniqueAndSorted is not parallel: ulid.Make's monotonic entropy is the process's,
// and ids made by other tests in the same millisecond may reset it.
func TestEventIDsAreUniqueAndSorted(t *testing.T) {
	prev := ""
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		id := NewEventID()
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		if id <= prev {
			t.Fatalf("id %s does not sort after %s", id, prev)
		}
		prev = id
	}
}

func FuzzValidate(f *testing.F) {
	f.Add("p1", "customer.created", "customer", "c1", `{"a":1}`)
	f.Add("", "x", "", "", `[`)
	f.Fuzz(func(t *testing.T, partner, typ, st, sid, data string) {
		ev := Event{PartnerID: partner, Type: typ, Subject: Subject{st, sid}, Data: json.RawMessage(data)}
		got, err := ev.validate()
		if err != nil {
			return
		}
		if !json.Valid(got.Data) || !ValidType(got.Type) || got.PartnerID == "" || got.SchemaVersion != 1 {
			t.Fatalf("accepted an invalid event: %+v", got)
		}
	})
}

func TestEnvelopeValidate(t *testing.T) {
	t.Parallel()
	good := Envelope{
		EventID: NewEventID(), Type: "customer.created", OccurredAt: time.Now(), PartnerID: "p1",
		Subject: Subject{"customer", "c1"}, SchemaVersion: 1, Data: json.RawMessage(`{}`),
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*Envelope){
		func(e *Envelope) { e.EventID = "evt_nope" },
		func(e *Envelope) { e.EventID = "01J00000000000000000000000" },
		func(e *Envelope) { e.Type = "Bad Type" },
		func(e *Envelope) { e.PartnerID = "" },
		func(e *Envelope) { e.Subject.ID = "" },
		func(e *Envelope) { e.SchemaVersion = 0 },
		func(e *Envelope) { e.Data = json.RawMessage(`"str"`) },
		func(e *Envelope) { e.OccurredAt = time.Time{} },
	}
	for i, edit := range bad {
		e := good
		edit(&e)
		if e.Validate() == nil {
			t.Errorf("case %d accepted: %+v", i, e)
		}
	}
}
