package records

import (
	"strings"
	"testing"
	"time"
)

// A record NewDelivery makes is valid; each fault alone makes it invalid, with the field named.
func TestDeliveryValidate(t *testing.T) {
	good := func() Delivery {
		return NewDelivery("evt_1", "ep_1", "p_1", "customer.created", TriggerInitial, []byte(`{}`), time.Now().UTC())
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("NewDelivery's record: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func(*Delivery)
		want   string
	}{
		{"version", func(d *Delivery) { d.V = 9 }, "version 9"},
		{"no ids", func(d *Delivery) { d.DeliveryID, d.EndpointID = "", "" }, "lacks delivery_id, endpoint_id"},
		{"no type", func(d *Delivery) { d.EventType = "" }, "lacks event_type"},
		{"no body", func(d *Delivery) { d.Body = nil }, "lacks body"},
		{"nul in partner", func(d *Delivery) { d.PartnerID = "p\x00" }, "partner id"},
		{"long event id", func(d *Delivery) { d.EventID = strings.Repeat("e", MaxIDBytes+1) }, "event id"},
		{"invalid utf-8 in type", func(d *Delivery) { d.EventType = "a.\xff" }, "event type"},
		{"attempt 0", func(d *Delivery) { d.AttemptNo = 0 }, "attempt_no 0"},
		{"trigger", func(d *Delivery) { d.Trigger = "manual" }, `unknown trigger "manual"`},
		{"forged delivery id", func(d *Delivery) { d.DeliveryID = DeliveryID("evt_1", "ep_2") }, "delivery_id is not"},
	} {
		d := good()
		c.change(&d)
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestAttemptValidate(t *testing.T) {
	good := func() Attempt {
		return Attempt{V: AttemptVersion, DeliveryID: DeliveryID("evt_1", "ep_1"), EventID: "evt_1", EndpointID: "ep_1",
			PartnerID: "p_1", EventType: "customer.created", AttemptNo: 1, Trigger: TriggerRetry, Status: 503,
			Outcome: OutcomeRetrying, ErrorCategory: CategoryHTTPStatus, StartedAt: time.Now().UTC()}
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("a good attempt: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func(*Attempt)
		want   string
	}{
		{"version", func(a *Attempt) { a.V = 99 }, "attempt record version 99"},
		{"no partner", func(a *Attempt) { a.PartnerID = "" }, "ids are required"},
		{"nul in endpoint", func(a *Attempt) { a.EndpointID = "ep\x00"; a.DeliveryID = DeliveryID(a.EventID, a.EndpointID) }, "endpoint id"},
		{"forged delivery id", func(a *Attempt) { a.DeliveryID = "dlv_x" }, "delivery id"},
		{"attempt number", func(a *Attempt) { a.AttemptNo = 1 << 40 }, "attempt number"},
		{"status", func(a *Attempt) { a.Status = 42 }, "HTTP status 42"},
		{"trigger", func(a *Attempt) { a.Trigger = "" }, "unknown trigger"},
		{"category", func(a *Attempt) { a.ErrorCategory = "bad_luck" }, "unknown error category"},
		{"outcome", func(a *Attempt) { a.Outcome = "maybe" }, "unknown outcome"},
		{"no start", func(a *Attempt) { a.StartedAt = time.Time{} }, "started_at is required"},
	} {
		a := good()
		c.change(&a)
		err := a.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	// Text only PostgreSQL can judge is left to it.
	a := good()
	a.EventType, a.ResponseExcerpt = "customer.\x00created", "a\x00b"
	if err := a.Validate(); err != nil {
		t.Errorf("NUL in the event type or excerpt: %v, want it left to PostgreSQL", err)
	}
}
