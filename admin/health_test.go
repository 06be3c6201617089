package admin

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/replay"
)

// design.md section 10: the endpoint resource shows its health (circuit, next probe, last success, failing
// since), and a delivery's next_attempt_at is right in every state: none once finished or while
// the endpoint is disabled, the next probe while the circuit is open, its creation for a pending
// delivery the sender has not reached.
func TestEndpointHealthAndNextAttempt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	ep := e.endpoint("acme")
	path := "/v1/partners/acme/endpoints/" + ep.ID
	var v endpointView
	e.must(200, operatorToken, "GET", path, nil).json(t, &v)
	if v.Health.Circuit != circuitUnknown || v.Health.NextProbeAt != nil || v.Health.LastSuccessAt != nil {
		t.Fatalf("health before any attempt: %+v", v.Health)
	}

	now := time.Now().UTC().Truncate(time.Microsecond)
	probe, success, failing := now.Add(time.Hour), now.Add(-2*time.Hour), now.Add(-time.Hour)
	e.DB.Exec(t, `INSERT INTO endpoint_health (endpoint_id, circuit_state, circuit_probe_at, circuit_at, last_success_at, last_attempt_at)
		VALUES ($1, 'open', $2, $3, $4, $3)`, ep.ID, probe, now, success)
	e.DB.Exec(t, `UPDATE endpoint SET failing_since = $2 WHERE id = $1`, ep.ID, failing)
	e.must(200, operatorToken, "GET", path, nil).json(t, &v)
	h := v.Health
	if h.Circuit != "open" || h.NextProbeAt == nil || !h.NextProbeAt.Equal(probe) || h.LastSuccessAt == nil || !h.LastSuccessAt.Equal(success) ||
		h.FailingSince == nil || !h.FailingSince.Equal(failing) || h.LastAttemptAt == nil {
		t.Fatalf("health of an open circuit: %+v", h)
	}
	var page list[endpointView]
	e.must(200, operatorToken, "GET", "/v1/partners/acme/endpoints", nil).json(t, &page)
	if len(page.Data) != 1 || page.Data[0].Health.Circuit != "open" {
		t.Fatalf("the list shows health %+v", page.Data)
	}

	// One delivery per state; retrying is due before the probe, a second one after it.
	soon, later := now.Add(time.Minute), now.Add(2*time.Hour)
	ids := map[string]string{}
	for _, c := range []struct {
		name, state string
		next        *time.Time
	}{{"pending", "pending", nil}, {"retrying-soon", "retrying", &soon}, {"retrying-later", "retrying", &later},
		{"succeeded", "succeeded", nil}, {"failed", "failed", nil}} {
		ev := outbox.NewEventID()
		ids[c.name] = e.seedDeliveries("acme", ep.ID, "customer.created", c.state, 1, []string{ev}, []time.Time{now.Add(-time.Minute)})[0]
		e.DB.Exec(t, `UPDATE delivery SET next_attempt_at = $2 WHERE delivery_id = $1`, ids[c.name], c.next)
	}
	next := func(name string) *time.Time {
		t.Helper()
		var d deliveryView
		e.must(200, operatorToken, "GET", "/v1/partners/acme/deliveries/"+ids[name], nil).json(t, &d)
		if d.NextAttemptAt == nil {
			return nil
		}
		return &d.NextAttemptAt.Time
	}
	want := func(circuit string, cases map[string]*time.Time) {
		t.Helper()
		for name, w := range cases {
			got := next(name)
			if (got == nil) != (w == nil) || got != nil && !got.Equal(*w) {
				t.Errorf("circuit %s: %s delivery next_attempt_at %v, want %v", circuit, name, got, w)
			}
		}
	}
	created := now.Add(-time.Minute)
	want("open", map[string]*time.Time{"pending": &probe, "retrying-soon": &probe, "retrying-later": &later, "succeeded": nil, "failed": nil})

	e.DB.Exec(t, `UPDATE endpoint_health SET circuit_state = 'closed', circuit_probe_at = NULL WHERE endpoint_id = $1`, ep.ID)
	want("closed", map[string]*time.Time{"pending": &created, "retrying-soon": &soon, "retrying-later": &later, "succeeded": nil})

	// An open circuit whose probe time has passed is half open: the next delivery is its probe.
	past := now.Add(-time.Second)
	e.DB.Exec(t, `UPDATE endpoint_health SET circuit_state = 'open', circuit_probe_at = $2 WHERE endpoint_id = $1`, ep.ID, past)
	e.must(200, operatorToken, "GET", path, nil).json(t, &v)
	if v.Health.Circuit != "half_open" || v.Health.NextProbeAt != nil {
		t.Fatalf("health past the probe time: %+v", v.Health)
	}
	want("half open", map[string]*time.Time{"retrying-soon": &soon})

	// Disabled: nothing will be attempted.
	e.must(200, operatorToken, "POST", path+"/disable", map[string]string{"reason": "maintenance"})
	want("any, endpoint disabled", map[string]*time.Time{"pending": nil, "retrying-soon": nil, "retrying-later": nil})

	// The list shows the same times as the single delivery.
	var dl list[deliveryView]
	e.must(200, operatorToken, "GET", path+"/deliveries", nil).json(t, &dl)
	for _, d := range dl.Data {
		if d.NextAttemptAt != nil {
			t.Errorf("listed %s (%s) next_attempt_at %v while disabled", d.DeliveryID, d.State, d.NextAttemptAt)
		}
	}
}

// R18: "did partner X get event Y?" — the partner-wide search by event id, endpoint,
// state, error category, HTTP status and time range, cursor-paged, the partner's own only.
func TestSearchDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acmeKey := e.partner("acme")
	e.partner("globex")
	a1, a2, g := e.endpoint("acme"), e.endpoint("acme"), e.endpoint("globex")
	ctx := context.Background()
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	shared := outbox.NewEventID() // one event to both acme endpoints and, forged, to globex's
	var evs []string
	var at []time.Time
	for i := range 6 {
		evs, at = append(evs, outbox.NewEventID()), append(at, base.Add(time.Duration(i)*time.Minute))
	}
	// a1: 6 failed (500, http_status) over 6 minutes, and the shared event succeeded.
	e.seedDeliveries("acme", a1.ID, "customer.created", "failed", 2, evs, at)
	e.seedDeliveries("acme", a1.ID, "customer.created", "succeeded", 1, []string{shared}, []time.Time{base.Add(10 * time.Minute)})
	e.seedDeliveries("acme", a2.ID, "balance.low", "retrying", 1, []string{shared}, []time.Time{base.Add(11 * time.Minute)})
	e.seedDeliveries("globex", g.ID, "customer.created", "failed", 1, []string{shared}, []time.Time{base})
	if _, err := e.DB.Pool.Exec(ctx, `UPDATE delivery SET last_status = CASE WHEN state = 'succeeded' THEN 200 ELSE 500 END,
		last_error_category = CASE WHEN state = 'succeeded' THEN NULL ELSE 'http_status' END`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DB.Pool.Exec(ctx, `UPDATE delivery SET last_status = NULL, last_error_category = 'timeout' WHERE endpoint_id = $1`, a2.ID); err != nil {
		t.Fatal(err)
	}
	search := func(token, query string) list[deliveryView] {
		t.Helper()
		var out list[deliveryView]
		e.must(200, token, "GET", "/v1/partners/acme/deliveries?"+query, nil).json(t, &out)
		return out
	}
	for _, c := range []struct {
		query string
		want  int
	}{
		{"", 8},
		{"event_id=" + shared, 2},
		{"event_id=" + shared + "&endpoint_id=" + a2.ID, 1},
		{"endpoint_id=" + a1.ID, 7},
		{"state=failed", 6},
		{"error_category=timeout", 1},
		{"error_category=http_status&status=500", 6},
		{"status=200", 1},
		{"since=" + url.QueryEscape(base.Add(2*time.Minute).Format(time.RFC3339)) + "&until=" + url.QueryEscape(base.Add(4*time.Minute).Format(time.RFC3339)), 2},
		{"type=balance.*", 1},
	} {
		got := search(operatorToken, c.query)
		if len(got.Data) != c.want {
			t.Errorf("search %q: %d deliveries, want %d", c.query, len(got.Data), c.want)
		}
		for _, d := range got.Data {
			if d.PartnerID != "acme" {
				t.Errorf("search %q found %s of %s", c.query, d.DeliveryID, d.PartnerID)
			}
		}
	}
	// The partner's key searches its own; the event's delivery to globex is never among them.
	if got := search(acmeKey, "event_id="+shared); len(got.Data) != 2 {
		t.Fatalf("acme's key finds %d deliveries of the shared event, want 2", len(got.Data))
	}
	if r := e.do(acmeKey, "GET", "/v1/partners/globex/deliveries", nil); r.Status != 404 {
		t.Fatalf("acme's key on globex's search: %s", r)
	}
	// Pages of 3, newest first, with no gap and no repeat.
	seen := map[string]bool{}
	var last time.Time
	cursor := ""
	for pages := 0; ; pages++ {
		q := "limit=3"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		p := search(operatorToken, q)
		for _, d := range p.Data {
			if seen[d.DeliveryID] || (!last.IsZero() && d.CreatedAt.After(last)) {
				t.Fatalf("page %d: %s repeated or out of order", pages, d.DeliveryID)
			}
			seen[d.DeliveryID], last = true, d.CreatedAt.Time
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if len(seen) != 8 {
		t.Fatalf("paging found %d deliveries, want 8", len(seen))
	}
	for _, bad := range []struct{ query, field string }{
		{"event_id=nope", "event_id"}, {"endpoint_id=ep_x", "endpoint_id"}, {"state=lost", "state"},
		{"error_category=oops", "error_category"}, {"status=99", "status"}, {"status=abc", "status"},
		{"since=yesterday", "since"}, {"cursor=" + encodeCursor("deliveries", deliveryCursor{}), ""},
	} {
		r := e.do(operatorToken, "GET", "/v1/partners/acme/deliveries?"+bad.query, nil)
		var p errorBody
		r.json(t, &p)
		if r.Status != 400 || p.Field != bad.field {
			t.Errorf("search %q: %s, want 400 naming %q", bad.query, r, bad.field)
		}
	}
}

// R24: replay jobs are listed (newest first, by endpoint and state) and cancelled; a
// running job's runner stops at its next step.
func TestReplayJobsListAndCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Limits.ReplayJobs = 10 })
	e.partner("acme")
	globexKey := e.partner("globex")
	a1, a2 := e.endpoint("acme"), e.endpoint("acme")
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	var jobs []string
	for _, ep := range []string{a1.ID, a2.ID, a1.ID} {
		var acc jobAccepted
		e.must(202, operatorToken, "POST", "/v1/partners/acme/endpoints/"+ep+"/replay", map[string]string{"since": since}).json(t, &acc)
		jobs = append(jobs, acc.JobID)
	}
	var page list[jobView]
	e.must(200, operatorToken, "GET", "/v1/partners/acme/replay-jobs", nil).json(t, &page)
	if len(page.Data) != 3 || page.Data[0].ID != jobs[2] || page.Data[2].ID != jobs[0] {
		t.Fatalf("jobs %+v, want the three newest first", page.Data)
	}
	e.must(200, operatorToken, "GET", "/v1/partners/acme/replay-jobs?endpoint_id="+a1.ID+"&limit=1", nil).json(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != jobs[2] || page.NextCursor == "" {
		t.Fatalf("first page of a1's jobs: %+v", page)
	}
	e.must(200, operatorToken, "GET", "/v1/partners/acme/replay-jobs?endpoint_id="+a1.ID+"&limit=1&cursor="+page.NextCursor, nil).json(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != jobs[0] {
		t.Fatalf("second page of a1's jobs: %+v", page)
	}
	if r := e.do(globexKey, "GET", "/v1/partners/acme/replay-jobs", nil); r.Status != 404 {
		t.Fatalf("another partner's key lists acme's jobs: %s", r)
	}

	// A queued job is canceled at once; again changes nothing.
	cancel := "/v1/partners/acme/replay-jobs/" + jobs[1] + "/cancel"
	var v jobView
	e.must(200, operatorToken, "POST", cancel, nil).json(t, &v)
	if v.State != replay.JobCanceled || v.FinishedAt == nil {
		t.Fatalf("canceled job %+v", v)
	}
	e.must(200, operatorToken, "POST", cancel, nil).json(t, &v)
	if v.State != replay.JobCanceled {
		t.Fatalf("canceled twice: %+v", v)
	}
	e.must(200, operatorToken, "GET", "/v1/partners/acme/replay-jobs?state=canceled", nil).json(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != jobs[1] {
		t.Fatalf("canceled jobs %+v", page.Data)
	}
	if r := e.do(globexKey, "POST", cancel, nil); r.Status != 404 {
		t.Fatalf("another partner's key cancels: %s", r)
	}

	// A running job, leased by a runner: canceled too (the runner stops at its next step,
	// replay's TestCancelStopsTheRunner).
	ctx := context.Background()
	if _, err := e.DB.Pool.Exec(ctx, `UPDATE replay_job SET state = 'running', lease_owner = 'admin-other',
		lease_until = now() + interval '1 minute', started_at = now() WHERE id = $1`, jobs[0]); err != nil {
		t.Fatal(err)
	}
	e.must(200, operatorToken, "POST", "/v1/partners/acme/replay-jobs/"+jobs[0]+"/cancel", nil)
	e.must(200, operatorToken, "GET", "/v1/partners/acme/replay-jobs/"+jobs[0], nil).json(t, &v)
	if v.State != replay.JobCanceled || v.FinishedAt == nil {
		t.Fatalf("canceled running job: %+v", v)
	}

	// A finished job cannot be canceled.
	if _, err := e.DB.Pool.Exec(ctx, `UPDATE replay_job SET state = 'succeeded' WHERE id = $1`, jobs[2]); err != nil {
		t.Fatal(err)
	}
	if r := e.do(operatorToken, "POST", "/v1/partners/acme/replay-jobs/"+jobs[2]+"/cancel", nil); r.Status != 409 {
		t.Fatalf("canceling a succeeded job: %s", r)
	}
	if r := e.do(operatorToken, "POST", fmt.Sprintf("/v1/partners/acme/replay-jobs/%s/cancel", "rpl_nope"), nil); r.Status != 404 {
		t.Fatalf("canceling no job: %s", r)
	}
}
