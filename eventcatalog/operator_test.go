package eventcatalog_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// The operator's catalog (design.md section 8, "Operator events"): every type named operator.*,
// well formed, its example fitting its schema under the operator's partner, no secret or float
// in it (R6, R7), and none of it in the partners' catalog.
func TestOperatorCatalog(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	var names []string
	for _, et := range eventcatalog.OperatorTypes() {
		names = append(names, et.Type)
		if !outbox.ValidType(et.Type) || !eventcatalog.IsOperatorType(et.Type) || et.Category != eventcatalog.CategoryOperator {
			t.Errorf("%s: not an operator type (category %q)", et.Type, et.Category)
		}
		if et.SchemaVersion != 1 || et.Description == "" {
			t.Errorf("%s: incomplete entry", et.Type)
		}
		if got, ok := eventcatalog.Lookup(et.Type); !ok || got.Type != et.Type {
			t.Errorf("Lookup(%s) = %v, %v", et.Type, got.Type, ok)
		}
		ev := eventOf(et, et.Example)
		ev.PartnerID = outbox.OperatorPartnerID
		if err := c.CheckEvent(ev); err != nil {
			t.Errorf("%s: example refused under the operator's partner: %v", et.Type, err)
		}
		for _, p := range catalogProblems(decode(t, et.Schema)) {
			t.Errorf("%s: %s", et.Type, p)
		}
		for _, field := range decode(t, et.Schema)["required"].([]any) {
			data := decode(t, et.Example)
			delete(data, field.(string))
			ev.Data = encode(t, data)
			if err := c.CheckEvent(ev); err == nil {
				t.Errorf("%s: example without %s accepted", et.Type, field)
			}
		}
	}
	want := []string{eventcatalog.OperatorEndpointDisabled, eventcatalog.OperatorDeliveryDeadLettered,
		eventcatalog.OperatorReplayJobSucceeded, eventcatalog.OperatorReplayJobFailed,
		eventcatalog.OperatorQuotaRefused, eventcatalog.OperatorOutboxRowDeadLettered}
	if !slices.Equal(names, want) {
		t.Errorf("operator types %v, want %v", names, want)
	}
	for _, et := range eventcatalog.Types() {
		if eventcatalog.IsOperatorType(et.Type) || et.Category == eventcatalog.CategoryOperator {
			t.Errorf("the partners' catalog lists %s", et.Type)
		}
	}
}

// Never to a partner: an operator type under a real partner is refused (cdc dead-letters it),
// and so is a partner type under the operator's partner, so neither audience gets the other's.
func TestOperatorAudience(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	op, _ := eventcatalog.Lookup(eventcatalog.OperatorQuotaRefused)
	partnerType, _ := eventcatalog.Lookup("customer.created")
	cases := []struct {
		name    string
		ev      outbox.Event
		refused string
	}{
		{"operator type, real partner", eventOf(op, op.Example), "operator event type"},
		{"partner type, operator partner", func() outbox.Event {
			ev := eventOf(partnerType, partnerType.Example)
			ev.PartnerID = outbox.OperatorPartnerID
			return ev
		}(), "receives only operator event types"},
		{"unknown operator.* type, real partner", outbox.Event{PartnerID: "acme", Type: "operator.made.up",
			Subject: outbox.Subject{Type: "x", ID: "1"}, Data: []byte(`{}`)}, "operator event type"},
	}
	for _, tc := range cases {
		err := c.CheckEvent(tc.ev)
		var verr *outbox.ValidationError
		if !errors.As(err, &verr) || !errors.Is(err, outbox.ErrInvalidType) || verr.Field != "type" || !strings.Contains(verr.Reason, tc.refused) {
			t.Errorf("%s: %v, want a type refusal saying %q", tc.name, err, tc.refused)
		}
	}
	// The writer refuses them too, before anything is written.
	w := outbox.Writer{Catalog: c}
	if _, err := w.Append(t.Context(), nil, eventOf(op, op.Example)); !errors.Is(err, outbox.ErrInvalidType) {
		t.Errorf("Writer.Append of an operator type for a partner: %v", err)
	}
}
