package admin

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/retrytopics"
)

// hookstream's own emitters write their events without the catalog (their tests use short
// endpoint ids), so this test holds them to it: given endpoints with the ids the admin API
// issues, every operational event they build fits its published schema (R4, R23, R25). A field
// renamed or retyped on one side only fails here.
//
// Emitters covered: admin's disable route (partner and operator) and test event, the failure
// window's endpoint.failing and endpoint.disabled, and the recorder's endpoint.disabled on 410.
func TestEmittersFitCatalog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cat, err := eventcatalog.New()
	if err != nil {
		t.Fatal(err)
	}
	key := e.partner("acme")
	byPartner, byOperator, tested, warned, expired, gone :=
		e.endpoint("acme"), e.endpoint("acme"), e.endpoint("acme"), e.endpoint("acme"), e.endpoint("acme"), e.endpoint("acme")

	// admin: disabling through the API, by the partner and by the operator.
	e.must(200, key, "POST", "/v1/partners/acme/endpoints/"+byPartner.ID+"/disable", map[string]string{"reason": "receiver migration"})
	e.must(200, operatorToken, "POST", "/v1/partners/acme/endpoints/"+byOperator.ID+"/disable", map[string]string{"reason": strings.Repeat("r", maxReasonBytes)})

	// admin: the test event goes straight to the deliveries topic, not through the outbox.
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+tested.ID+"/test", nil)
	for _, d := range e.deliveries(1, 30*time.Second) {
		var env outbox.Envelope
		if err := json.Unmarshal(d.Body, &env); err != nil {
			t.Fatal(err)
		}
		if err := cat.CheckEvent(eventFromEnvelope(env)); err != nil {
			t.Errorf("admin's %s event: %v\n%s", env.Type, err, env.Data)
		}
	}

	// retrytopics: the failure window warns one endpoint and disables another.
	now := time.Now().UTC()
	if _, err := e.DB.Pool.Exec(ctx, `UPDATE endpoint SET failing_since = CASE id WHEN $1 THEN $3::timestamptz - interval '25 hours'
		ELSE $3::timestamptz - interval '6 days' END WHERE id IN ($1, $2)`, warned.ID, expired.ID, now); err != nil {
		t.Fatal(err)
	}
	fcfg := retrytopics.DefaultFailureWindowConfig()
	fcfg.Logger = slog.New(slog.DiscardHandler)
	window, err := retrytopics.NewFailureWindow(fcfg, e.DB.Pool)
	if err != nil {
		t.Fatal(err)
	}
	if err := window.Check(ctx, now); err != nil {
		t.Fatal(err)
	}

	// recorder: the recorder disables an endpoint that answered 410 Gone.
	e.startRecorder()
	e.produceGone(gone.ID, now)

	want := []string{
		"endpoint.disabled " + byPartner.ID, "endpoint.disabled " + byOperator.ID,
		"endpoint.failing " + warned.ID, "endpoint.failing " + expired.ID, "endpoint.disabled " + expired.ID,
		"endpoint.disabled " + gone.ID,
		// The operator hears of every disabling (design.md section 8, "Operator events").
		"operator.endpoint.disabled " + byPartner.ID, "operator.endpoint.disabled " + byOperator.ID,
		"operator.endpoint.disabled " + expired.ID, "operator.endpoint.disabled " + gone.ID,
	}
	slices.Sort(want)
	var got []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		got = got[:0]
		rows, err := e.DB.Pool.Query(ctx, `SELECT partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload FROM outbox_event
			WHERE type <> 'operator.delivery.dead_lettered'`) // the 410's delivery, the recorder's own test
		if err != nil {
			t.Fatal(err)
		}
		var evs []outbox.Event
		var ev outbox.Event
		if _, err := pgx.ForEachRow(rows, []any{&ev.PartnerID, &ev.Type, &ev.Subject.Type, &ev.Subject.ID, &ev.OccurredAt, &ev.SchemaVersion, &ev.Data},
			func() error { evs = append(evs, ev); return nil }); err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			got = append(got, ev.Type+" "+ev.Subject.ID)
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			for _, ev := range evs {
				if err := cat.CheckEvent(ev); err != nil {
					t.Errorf("%s of %s: %v\n%s", ev.Type, ev.Subject.ID, err, ev.Data)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("outbox holds %q after a minute, want %q", got, want)
		}
	}
}

func eventFromEnvelope(env outbox.Envelope) outbox.Event {
	return outbox.Event{PartnerID: env.PartnerID, Type: env.Type, Subject: env.Subject, Data: env.Data,
		OccurredAt: env.OccurredAt, SchemaVersion: env.SchemaVersion, CorrelationID: env.CorrelationID}
}
