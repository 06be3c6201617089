package recorder_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/recorder"
)

// Design section 7, strict order: the hold an ordered endpoint's attempts state is kept in
// endpoint_health; the attempt that breaks a strict endpoint's order is marked in the history
// and announced to the partner as endpoint.order_broken, once however often it is recorded.
func TestRecorderKeepsTheHoldAndAnnouncesAnOrderBreak(t *testing.T) {
	t.Parallel()
	const ep = "ep_01JSTR1CT0RDER0000000000AB"
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1')`)
	sqlExec(t, e, `INSERT INTO endpoint (id, partner_id, url, event_types, ordered, strict_order)
		VALUES ($1, 'p1', 'https://h.example', '{customer.*}', true, true)`, ep)
	reg := startRecorder(t, e)
	ctx := context.Background()
	hold := func() (held *int, since *time.Time) {
		t.Helper()
		if err := e.DB.Pool.QueryRow(ctx, `SELECT order_held, order_head_since FROM endpoint_health WHERE endpoint_id = $1`,
			ep).Scan(&held, &since); err != nil {
			t.Fatal(err)
		}
		return
	}
	announced := func() []string {
		t.Helper()
		return testenv.QueryStrings(t, e.DB.Pool, `SELECT payload::text FROM outbox_event WHERE type = $1`, recorder.OrderBrokenType)
	}

	evt := outbox.NewEventID()
	first := attempt(evt, ep, "p1", 1, records.OutcomeRetrying, 503, records.CategoryHTTPStatus)
	headSince := first.StartedAt
	first.Order = &records.OrderHold{Held: 5, HeadSince: &headSince, At: first.StartedAt.Add(time.Second)}
	produceAttempts(t, e, first)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 1, time.Minute)
	if n, s := hold(); n == nil || *n != 5 || s == nil || !s.Equal(headSince) {
		t.Fatalf("health while the head is held: %v records since %v, want 5 since %s", n, s, headSince)
	}
	if got := announced(); len(got) != 0 {
		t.Fatalf("announced before any break: %v", got)
	}

	final := attempt(evt, ep, "p1", 3, records.OutcomeFailed, 503, records.CategoryHTTPStatus)
	final.OrderBroken = true
	final.Order = &records.OrderHold{Held: 7, At: final.StartedAt.Add(time.Second)}
	produceAttempts(t, e, final, final) // twice, as a redelivered batch would
	produceAttempts(t, e, final)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 4, time.Minute)
	if n, s := hold(); n == nil || *n != 7 || s != nil {
		t.Fatalf("health after the break: %v records since %v, want 7 and no head held", n, s)
	}
	// A statement older than the newest recorded late does not undo it.
	late := attempt(outbox.NewEventID(), ep, "p1", 1, records.OutcomeRetrying, 503, records.CategoryHTTPStatus)
	late.Order = &records.OrderHold{Held: 1, HeadSince: &headSince, At: first.StartedAt.Add(2 * time.Second)}
	produceAttempts(t, e, late)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 5, time.Minute)
	if n, s := hold(); *n != 7 || s != nil {
		t.Fatalf("health after an older statement: %v records since %v", *n, s)
	}

	var broken []bool
	rows := testenv.QueryStrings(t, e.DB.Pool, `SELECT attempt_no || ':' || order_broken FROM delivery_attempt
		WHERE delivery_id = $1 ORDER BY attempt_no`, final.DeliveryID)
	for _, r := range rows {
		broken = append(broken, r[len(r)-4:] == "true")
	}
	if len(rows) != 2 || broken[0] || !broken[1] {
		t.Fatalf("history of the head: %v, want attempt 3 marked order_broken", rows)
	}
	got := announced()
	if len(got) != 1 {
		t.Fatalf("%d announcements of one break: %v", len(got), got)
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(got[0]), &data); err != nil {
		t.Fatal(err)
	}
	if data["endpoint_id"] != ep || data["delivery_id"] != final.DeliveryID || data["event_id"] != evt ||
		data["event_type"] != "customer.created" || data["attempts"] != 3.0 || data["failed_at"] != final.StartedAt.Format(time.RFC3339) {
		t.Fatalf("endpoint.order_broken data %v", data)
	}
}
