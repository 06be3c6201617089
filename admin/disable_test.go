package admin

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/retrytopics"
)

// Whoever disables an endpoint (the operator through this API, the recorder on a 410 Gone, the
// failure window), it goes through endpoints.Disable: the endpoint.disabled events of the three
// have one shape, the catalog's, and differ in their reason. Each trigger disables once (version
// + 1, disabled_reason set, failing_since kept) and, repeated, writes nothing more.
//
// disabled_by is the one field that tells the triggers apart: the catalog publishes it as
// "operator" or "partner", so only a disabling through the API carries it.
func TestEndpointDisabledHasOneShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.partner("acme")
	byOperator, gone, expired := e.endpoint("acme"), e.endpoint("acme"), e.endpoint("acme")
	ids := []string{byOperator.ID, gone.ID, expired.ID}
	now := time.Now().UTC()
	since := now.Add(-6 * 24 * time.Hour).Truncate(time.Microsecond)
	if _, err := e.DB.Pool.Exec(ctx, `UPDATE endpoint SET failing_since = $2 WHERE id = ANY($1)`, ids, since); err != nil {
		t.Fatal(err)
	}
	versions := map[string]int64{}
	for _, id := range ids {
		versions[id] = endpointRow(t, e, id).version
	}

	// The operator, through the API.
	disable := func() {
		e.must(200, operatorToken, "POST", "/v1/partners/acme/endpoints/"+byOperator.ID+"/disable", map[string]string{"reason": "receiver migration"})
	}
	disable()

	// The recorder, on a 410 Gone.
	e.startRecorder()
	answer410 := func() {
		t.Helper()
		id := e.produceGone(gone.ID, time.Now().UTC())
		testenv.Eventually(t, time.Minute, "the recorder to record the 410", func() bool {
			return testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM delivery_attempt WHERE delivery_id = $1`, id) > 0
		})
	}
	answer410()

	// The failure window.
	fcfg := retrytopics.DefaultFailureWindowConfig()
	fcfg.Logger = slog.New(slog.DiscardHandler)
	window, err := retrytopics.NewFailureWindow(fcfg, e.DB.Pool)
	if err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		if err := window.Check(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	check()

	cat, err := eventcatalog.New()
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{
		byOperator.ID: "receiver migration",
		gone.ID:       "the receiver answered 410 Gone",
		expired.ID:    "failing with no success for 120h0m0s",
	}
	assertOnce := func() {
		t.Helper()
		events := disabledEvents(t, e)
		if got := slices.Sorted(maps.Keys(events)); !slices.Equal(got, slices.Sorted(slices.Values(ids))) {
			t.Fatalf("endpoint.disabled events for %v, want one each for %v", got, ids)
		}
		var shape []string
		for _, id := range ids {
			evs := events[id]
			if len(evs) != 1 {
				t.Fatalf("%d endpoint.disabled events for %s, want 1", len(evs), id)
			}
			ev := evs[0]
			if err := cat.CheckEvent(ev); err != nil {
				t.Errorf("%s: %v\n%s", id, err, ev.Data)
			}
			var data map[string]any
			if err := json.Unmarshal(ev.Data, &data); err != nil {
				t.Fatal(err)
			}
			if data["endpoint_id"] != id || data["reason"] != reasons[id] || data["failing_since"] != since.Format(time.RFC3339Nano) {
				t.Errorf("%s's endpoint.disabled: %s", id, ev.Data)
			}
			by, ok := data["disabled_by"]
			if (id == byOperator.ID) != ok || ok && by != "operator" {
				t.Errorf("%s's endpoint.disabled has disabled_by %v (present %v)", id, by, ok)
			}
			delete(data, "disabled_by")
			keys := slices.Sorted(maps.Keys(data))
			if shape == nil {
				shape = keys
			} else if !slices.Equal(keys, shape) {
				t.Errorf("%s's endpoint.disabled has the fields %v, %s's %v", id, keys, ids[0], shape)
			}

			r := endpointRow(t, e, id)
			if r.status != "disabled" || r.reason != reasons[id] || r.version != versions[id]+1 || r.failing == nil || !r.failing.Equal(since) {
				t.Errorf("%s after disabling: %+v (version before %d, failing since %s)", id, r, versions[id], since)
			}
		}
	}
	assertOnce()

	// Again: each trigger finds the endpoint disabled and writes nothing.
	disable()
	answer410()
	check()
	assertOnce()
}

type endpointState struct {
	status, reason string
	version        int64
	failing        *time.Time
}

func endpointRow(t *testing.T, e *env, id string) endpointState {
	t.Helper()
	var r endpointState
	var reason *string
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT status, disabled_reason, version, failing_since FROM endpoint WHERE id = $1`, id).
		Scan(&r.status, &reason, &r.version, &r.failing); err != nil {
		t.Fatal(err)
	}
	if reason != nil {
		r.reason = *reason
	}
	return r
}

// disabledEvents returns the outbox's endpoint.disabled events by endpoint.
func disabledEvents(t *testing.T, e *env) map[string][]outbox.Event {
	t.Helper()
	rows, err := e.DB.Pool.Query(context.Background(), `SELECT partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload
		FROM outbox_event WHERE type = 'endpoint.disabled'`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]outbox.Event{}
	var ev outbox.Event
	if _, err := pgx.ForEachRow(rows, []any{&ev.PartnerID, &ev.Type, &ev.Subject.Type, &ev.Subject.ID, &ev.OccurredAt, &ev.SchemaVersion, &ev.Data},
		func() error { out[ev.Subject.ID] = append(out[ev.Subject.ID], ev); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}
