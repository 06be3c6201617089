package endpoints_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// Disable is the one writer of endpoint.disabled: it disables an active endpoint of the partner
// once (version + 1, disabled_reason, failing_since kept), writes one event in the catalog's
// shape in the same transaction, and leaves a disabled endpoint or another partner's alone.
func TestDisable(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	const (
		healthy = "ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8"
		failing = "ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C9"
	)
	since := time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC)
	at := time.Date(2026, 3, 6, 10, 0, 0, 0, time.UTC)
	if _, err := db.Pool.Exec(ctx, `INSERT INTO partner (id) VALUES ('p1'), ('p2');
		INSERT INTO endpoint (id, partner_id, url, failing_since, version) VALUES
		  ('`+healthy+`', 'p1', 'https://a.example', NULL, 3), ('`+failing+`', 'p1', 'https://b.example', '`+since.Format(time.RFC3339Nano)+`', 7)`); err != nil {
		t.Fatal(err)
	}
	disable := func(d endpoints.Disabling) bool {
		t.Helper()
		var changed bool
		if err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			var err error
			changed, err = endpoints.Disable(ctx, tx, d)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return changed
	}
	type row struct {
		status, reason  string
		version         int64
		failing, update *time.Time
	}
	endpoint := func(id string) row {
		t.Helper()
		var r row
		var reason *string
		if err := db.Pool.QueryRow(ctx, `SELECT status, disabled_reason, version, failing_since, updated_at FROM endpoint WHERE id = $1`, id).
			Scan(&r.status, &reason, &r.version, &r.failing, &r.update); err != nil {
			t.Fatal(err)
		}
		if reason != nil {
			r.reason = *reason
		}
		return r
	}

	if disable(endpoints.Disabling{PartnerID: "p2", EndpointID: healthy, Reason: "not yours"}) {
		t.Fatal("another partner disabled p1's endpoint")
	}
	if !disable(endpoints.Disabling{PartnerID: "p1", EndpointID: healthy, Reason: "maintenance", By: endpoints.ByPartner}) {
		t.Fatal("an active endpoint was not disabled")
	}
	if disable(endpoints.Disabling{PartnerID: "p1", EndpointID: healthy, Reason: "again", By: endpoints.ByOperator}) {
		t.Fatal("a disabled endpoint was disabled again")
	}
	if !disable(endpoints.Disabling{PartnerID: "p1", EndpointID: failing, Reason: "the receiver answered 410 Gone", At: at}) {
		t.Fatal("an active endpoint was not disabled")
	}
	if r := endpoint(healthy); r.status != "disabled" || r.reason != "maintenance" || r.version != 4 || r.failing != nil {
		t.Fatalf("%s after disabling: %+v", healthy, r)
	}
	if r := endpoint(failing); r.status != "disabled" || r.reason != "the receiver answered 410 Gone" || r.version != 8 ||
		r.failing == nil || !r.failing.Equal(since) || r.update == nil || !r.update.Equal(at) {
		t.Fatalf("%s after disabling: %+v", failing, r)
	}

	if err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		_, err := endpoints.Disable(ctx, tx, endpoints.Disabling{PartnerID: "p1", EndpointID: healthy, Reason: "x", By: "robot"})
		return err
	}); err == nil {
		t.Fatal("disabled_by outside the catalog's enum accepted")
	}

	cat, err := eventcatalog.New()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Pool.Query(ctx, `SELECT partner_id, type, subject_type, subject_id, payload FROM outbox_event WHERE partner_id = 'p1' ORDER BY subject_id`)
	if err != nil {
		t.Fatal(err)
	}
	var evs []outbox.Event
	var ev outbox.Event
	if _, err := pgx.ForEachRow(rows, []any{&ev.PartnerID, &ev.Type, &ev.Subject.Type, &ev.Subject.ID, &ev.Data},
		func() error { evs = append(evs, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"endpoint_id":"` + healthy + `","reason":"maintenance","disabled_by":"partner"}`,
		`{"endpoint_id":"` + failing + `","reason":"the receiver answered 410 Gone","failing_since":"2026-03-01T09:30:00.123456Z"}`,
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: %v", len(evs), len(want), evs)
	}
	for i, ev := range evs {
		if ev.PartnerID != "p1" || ev.Type != endpoints.DisabledEventType || ev.Subject.Type != "endpoint" || ev.Subject.ID != []string{healthy, failing}[i] {
			t.Errorf("event %d: %+v", i, ev)
		}
		if !sameJSON(t, ev.Data, []byte(want[i])) {
			t.Errorf("event %d's data %s, want %s", i, ev.Data, want[i])
		}
		if err := cat.CheckEvent(ev); err != nil {
			t.Errorf("event %d does not fit the catalog: %v", i, err)
		}
	}
}

// The operator hears of every disabling (design.md section 8, "Operator events"): one
// operator.endpoint.disabled under the operator's partner in the same transaction, naming the
// partner; a disabled operator endpoint writes that one only, since endpoint.disabled under the
// operator's partner is no event the catalog publishes.
func TestDisableTellsTheOperator(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	const (
		partners = "ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7D0"
		operator = "ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7D1"
	)
	if _, err := db.Pool.Exec(ctx, `INSERT INTO partner (id) VALUES ('p1');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('`+partners+`', 'p1', 'https://a.example'),
		  ('`+operator+`', '`+outbox.OperatorPartnerID+`', 'https://ops.example')`); err != nil {
		t.Fatal(err)
	}
	for _, d := range []endpoints.Disabling{
		{PartnerID: "p1", EndpointID: partners, Reason: "maintenance", By: endpoints.ByOperator},
		{PartnerID: outbox.OperatorPartnerID, EndpointID: operator, Reason: "the receiver answered 410 Gone"},
	} {
		if err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			_, err := endpoints.Disable(ctx, tx, d)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Pool.Query(ctx, `SELECT partner_id, type, subject_type, subject_id, payload FROM outbox_event ORDER BY subject_id, type`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var ev outbox.Event
	if _, err := pgx.ForEachRow(rows, []any{&ev.PartnerID, &ev.Type, &ev.Subject.Type, &ev.Subject.ID, &ev.Data},
		func() error {
			if err := eventcatalog.Published().CheckEvent(ev); err != nil {
				t.Errorf("%s of %s does not fit the catalog: %v", ev.Type, ev.PartnerID, err)
			}
			got = append(got, ev.PartnerID+" "+ev.Type+" "+ev.Subject.ID+" "+canonical(t, ev.Data))
			return nil
		}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`p1 endpoint.disabled ` + partners + ` {"endpoint_id":"` + partners + `","reason":"maintenance","disabled_by":"operator"}`,
		outbox.OperatorPartnerID + ` operator.endpoint.disabled ` + partners + ` {"partner_id":"p1","endpoint_id":"` + partners + `","reason":"maintenance","disabled_by":"operator"}`,
		outbox.OperatorPartnerID + ` operator.endpoint.disabled ` + operator + ` {"partner_id":"` + outbox.OperatorPartnerID + `","endpoint_id":"` + operator + `","reason":"the receiver answered 410 Gone"}`,
	}
	for i, w := range want {
		head, data, _ := strings.Cut(w, " {")
		want[i] = head + " " + canonical(t, []byte("{"+data))
	}
	if !slices.Equal(got, want) {
		t.Errorf("outbox:\n got %q\nwant %q", got, want)
	}
}

// canonical is b with its object keys sorted, as jsonb returns them in another order.
func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// endpoints.Disabled and the catalog's published schema of endpoint.disabled name the same
// fields, the required ones never omitted; the catalog's example reads into the type with nothing
// left over and writes back the same.
func TestDisabledIsTheCatalogShape(t *testing.T) {
	et, ok := eventcatalog.Lookup(endpoints.DisabledEventType)
	if !ok {
		t.Fatal("the catalog has no endpoint.disabled")
	}
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(et.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	keys := func(d endpoints.Disabled) []string {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	now := time.Now()
	if got, want := keys(endpoints.Disabled{FailingSince: &now, DisabledBy: endpoints.ByOperator}), slices.Sorted(maps.Keys(schema.Properties)); !slices.Equal(got, want) {
		t.Fatalf("endpoints.Disabled has the fields %v, the catalog publishes %v", got, want)
	}
	if got, want := keys(endpoints.Disabled{}), slices.Sorted(slices.Values(schema.Required)); !slices.Equal(got, want) {
		t.Fatalf("endpoints.Disabled always has %v, the catalog requires %v", got, want)
	}

	dec := json.NewDecoder(bytes.NewReader(et.Example))
	dec.DisallowUnknownFields()
	var d endpoints.Disabled
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("the catalog's example %s: %v", et.Example, err)
	}
	back, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, back, et.Example) {
		t.Fatalf("the catalog's example %s comes back as %s", et.Example, back)
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
