package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/replay"
)

// wantQuota checks r is the refusal of quota name at limit with usage: the status, the code,
// error.quota, a message naming the quota, and Retry-After as wanted ("" for none).
func wantQuota(t *testing.T, r response, status int, code, name string, limit, usage int, retryAfter string) {
	t.Helper()
	var eb errorBody
	r.json(t, &eb)
	q := eb.Quota
	if r.Status != status || eb.Code != code || q == nil || q.Name != name || q.Limit != limit || q.Usage != usage ||
		!strings.Contains(eb.Detail, name) {
		t.Fatalf("got %s, want %d %s with quota {%s %d %d}", r, status, code, name, limit, usage)
	}
	if got := r.Header.Get("Retry-After"); got != retryAfter {
		t.Fatalf("Retry-After %q, want %q (%s)", got, retryAfter, r)
	}
}

func createEndpointAs(e *env, token, pid string) response {
	return e.do(token, "POST", "/v1/partners/"+pid+"/endpoints", map[string]any{
		"url": "https://hooks.example.com/" + pid, "event_types": []string{"*"},
	})
}

// TestEndpointQuota: a partner reaches its endpoint limit whoever creates them (its key or the
// operator), the refusal writes nothing, another partner's endpoints never count, and a
// deletion makes room again.
func TestEndpointQuota(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Limits.Endpoints = 3 })
	key := e.partner("acme")
	otherKey := e.partner("globex")
	for _, token := range []string{key, key, operatorToken} {
		if r := createEndpointAs(e, token, "acme"); r.Status != 201 {
			t.Fatalf("endpoint within the limit: %s", r)
		}
	}
	wantQuota(t, createEndpointAs(e, key, "acme"), 429, CodeQuotaExceeded, quotaEndpoints, 3, 3, "")
	wantQuota(t, createEndpointAs(e, operatorToken, "acme"), 429, CodeQuotaExceeded, quotaEndpoints, 3, 3, "")
	if n := testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM endpoint WHERE partner_id = 'acme'`); n != 3 {
		t.Fatalf("acme has %d endpoints after the refusals, want 3", n)
	}

	// globex has a quota of its own.
	var last createdEndpoint
	for i := 0; i < 3; i++ {
		r := createEndpointAs(e, otherKey, "globex")
		if r.Status != 201 {
			t.Fatalf("globex endpoint %d beside acme's full quota: %s", i+1, r)
		}
		r.json(t, &last)
	}
	wantQuota(t, createEndpointAs(e, otherKey, "globex"), 429, CodeQuotaExceeded, quotaEndpoints, 3, 3, "")

	e.must(204, otherKey, "DELETE", "/v1/partners/globex/endpoints/"+last.ID, nil)
	if r := createEndpointAs(e, otherKey, "globex"); r.Status != 201 {
		t.Fatalf("endpoint after a deletion made room: %s", r)
	}
}

// TestConcurrentCreatesKeepQuotas fires creations at once: never more endpoints or open replay
// jobs than the limits, every other answer a 429.
func TestConcurrentCreatesKeepQuotas(t *testing.T) {
	t.Parallel()
	const endpoints, jobs, callers = 4, 2, 16
	e := newEnv(t, func(c *Config) { c.Limits.Endpoints, c.Limits.ReplayJobs = endpoints, jobs })
	key := e.partner("acme")

	burst := func(call func() response) map[int]int {
		var (
			mu       sync.Mutex
			wg       sync.WaitGroup
			statuses = map[int]int{}
			start    = make(chan struct{})
		)
		for i := 0; i < callers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := call()
				mu.Lock()
				statuses[r.Status]++
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		return statuses
	}

	got := burst(func() response { return createEndpointAs(e, key, "acme") })
	if got[201] != endpoints || got[429] != callers-endpoints {
		t.Fatalf("%d concurrent creations with room for %d: statuses %v", callers, endpoints, got)
	}
	if n := testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM endpoint WHERE partner_id = 'acme'`); n != endpoints {
		t.Fatalf("%d endpoints, limit %d", n, endpoints)
	}

	// No runner runs: every accepted job stays queued.
	var eid string
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT id FROM endpoint WHERE partner_id = 'acme' LIMIT 1`).Scan(&eid); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	got = burst(func() response {
		return e.do(key, "POST", "/v1/partners/acme/endpoints/"+eid+"/replay", map[string]string{"since": since, "source": "log"})
	})
	if got[202] != jobs || got[429] != callers-jobs {
		t.Fatalf("%d concurrent replay jobs with room for %d: statuses %v", callers, jobs, got)
	}
	if n := testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM replay_job WHERE partner_id = 'acme'`); n != jobs {
		t.Fatalf("%d replay jobs, limit %d", n, jobs)
	}
}

// TestReplayJobQuota: queued and running jobs count, finished ones do not, the operator's jobs
// count for the partner, and another partner's never do.
func TestReplayJobQuota(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Limits.ReplayJobs = 2 })
	key := e.partner("acme")
	otherKey := e.partner("globex")
	ep, other := e.endpoint("acme"), e.endpoint("globex")
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	replay := func(token, pid, eid string) response {
		return e.do(token, "POST", "/v1/partners/"+pid+"/endpoints/"+eid+"/replay", map[string]string{"since": since})
	}

	var first jobAccepted
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/replay", map[string]string{"since": since}).json(t, &first)
	if r := replay(operatorToken, "acme", ep.ID); r.Status != 202 {
		t.Fatalf("second job: %s", r)
	}
	// One of them running (claimed by a process) still counts.
	if _, err := e.DB.Pool.Exec(context.Background(), `UPDATE replay_job SET state = 'running', lease_owner = 'admin-other',
		lease_until = now() + interval '1 minute' WHERE id = $1`, first.JobID); err != nil {
		t.Fatal(err)
	}
	wantQuota(t, replay(key, "acme", ep.ID), 429, CodeQuotaExceeded, quotaReplayJobs, 2, 2, "")
	wantQuota(t, replay(operatorToken, "acme", ep.ID), 429, CodeQuotaExceeded, quotaReplayJobs, 2, 2, "")
	if n := testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM replay_job WHERE partner_id = 'acme'`); n != 2 {
		t.Fatalf("%d jobs after the refusals, want 2", n)
	}

	for i := 0; i < 2; i++ {
		if r := replay(otherKey, "globex", other.ID); r.Status != 202 {
			t.Fatalf("globex job %d beside acme's full quota: %s", i+1, r)
		}
	}

	if _, err := e.DB.Pool.Exec(context.Background(), `UPDATE replay_job SET state = 'succeeded', lease_owner = NULL,
		lease_until = NULL, finished_at = now() WHERE id = $1`, first.JobID); err != nil {
		t.Fatal(err)
	}
	if r := replay(key, "acme", ep.ID); r.Status != 202 {
		t.Fatalf("job after one finished: %s", r)
	}
}

// TestReplaySizeLimit: a history replay selecting more deliveries than the limit is refused
// with 422 and the selection's size, and queues nothing; one within it runs.
func TestReplaySizeLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Limits.ReplayDeliveries = 50 })
	key := e.partner("acme")
	ep := e.endpoint("acme")
	base := time.Now().Add(-time.Hour)
	created := make([]time.Time, 60)
	for i := range created {
		created[i] = base.Add(time.Duration(i) * time.Millisecond)
	}
	failed := e.seedOutbox("acme", "customer.created", 40)
	succeeded := e.seedOutbox("acme", "customer.created", 20)
	e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 2, failed, created[:40])
	e.seedDeliveries("acme", ep.ID, "customer.created", "succeeded", 1, succeeded, created[40:])
	since := base.Add(-time.Second).UTC().Format(time.RFC3339Nano)

	r := e.do(key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/replay", map[string]string{"since": since})
	wantQuota(t, r, 422, CodeReplayTooLarge, quotaReplayDeliveries, 50, 60, "")
	r = e.do(operatorToken, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/replay", map[string]string{"since": since})
	wantQuota(t, r, 422, CodeReplayTooLarge, quotaReplayDeliveries, 50, 60, "")
	if n := testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM replay_job`); n != 0 {
		t.Fatalf("%d jobs queued by refused replays", n)
	}

	run(t, e.api)
	var job jobAccepted
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/replay", map[string]string{"since": since, "state": "failed"}).json(t, &job)
	if v := e.waitJob("acme", job.JobID, time.Minute, nil); v.State != replay.JobSucceeded || v.Total != 40 || v.Done != 40 {
		t.Fatalf("replay within the limit: %+v", v)
	}
}

// TestLogReplayStopsAtLimit: a log replay, whose size is known only as it reads, goes through
// the limit and no further, and says where to resume.
func TestLogReplayStopsAtLimit(t *testing.T) {
	t.Parallel()
	const limit, events = 10, 30
	e := newEnv(t, func(c *Config) { c.Limits.ReplayDeliveries, c.ReplayBatch = limit, 4 })
	key := e.partner("acme")
	ep := e.endpoint("acme", "customer.*")
	parts := e.Kafka.TopicConfig().Partitions
	base := time.Now().Add(-10 * time.Second).UTC()
	var recs []*kgo.Record
	var commits []time.Time
	for i := 0; i < events; i++ {
		commit := base.Add(time.Duration(i) * 10 * time.Millisecond)
		recs = append(recs, envelopeRecord(e.Names.Events, parts, testEnvelope("acme", "customer.created", i), records.LSN(1000+i), commit))
		commits = append(commits, commit)
	}
	e.produceEvents(recs)

	run(t, e.api)
	var job jobAccepted
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/replay", map[string]string{
		"since": base.Add(-time.Second).Format(time.RFC3339Nano), "source": "log",
	}).json(t, &job)
	v := e.waitJob("acme", job.JobID, time.Minute, nil)
	resume := "since=" + commits[limit-1].Format(time.RFC3339Nano)
	if v.State != replay.JobFailed || v.Total != limit || v.Done != limit || !strings.Contains(v.Error, fmt.Sprintf("limit of %d", limit)) ||
		!strings.Contains(v.Error, resume) {
		t.Fatalf("log replay over the limit: %+v, want failed after %d with %q", v, limit, resume)
	}
	if got := e.deliveries(limit, time.Minute); len(got) != limit {
		t.Fatalf("%d records produced, want the limit %d", len(got), limit)
	}
}

// TestTestEventRate: the test-event quota is a sliding minute per partner, whoever sends; the
// refusal says when to retry, and the retry at that time succeeds.
func TestTestEventRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Limits.TestEventsPerMinute = 3 })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	e.api.testEvents.now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }

	key := e.partner("acme")
	otherKey := e.partner("globex")
	ep, other := e.endpoint("acme"), e.endpoint("globex")
	send := func(token, pid, eid string) response {
		return e.do(token, "POST", "/v1/partners/"+pid+"/endpoints/"+eid+"/test", nil)
	}
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/test", nil)
	advance(20 * time.Second)
	e.must(202, operatorToken, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/test", nil)
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/test", nil)
	produced := e.endOffsets(e.Names.Deliveries)

	// The oldest of the three leaves the window 40 s from now.
	wantQuota(t, send(key, "acme", ep.ID), 429, CodeQuotaExceeded, quotaTestEvents, 3, 3, "40")
	wantQuota(t, send(operatorToken, "acme", ep.ID), 429, CodeQuotaExceeded, quotaTestEvents, 3, 3, "40")
	if n := e.endOffsets(e.Names.Deliveries); n != produced {
		t.Fatalf("refused test events produced %d records", n-produced)
	}
	e.must(202, otherKey, "POST", "/v1/partners/globex/endpoints/"+other.ID+"/test", nil)

	advance(39 * time.Second)
	wantQuota(t, send(key, "acme", ep.ID), 429, CodeQuotaExceeded, quotaTestEvents, 3, 3, "1")
	advance(time.Second)
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/test", nil)
	// The two sent at 20 s and the one just sent are in the window.
	wantQuota(t, send(key, "acme", ep.ID), 429, CodeQuotaExceeded, quotaTestEvents, 3, 3, "20")

	var l limitsView
	e.must(200, key, "GET", "/v1/limits", nil).json(t, &l)
	if u := l.Quotas.TestEventsPerMinute.Usage; u == nil || *u != 3 {
		t.Fatalf("acme's test-event usage: %+v", l.Quotas.TestEventsPerMinute)
	}
	e.must(200, otherKey, "GET", "/v1/limits", nil).json(t, &l)
	if u := l.Quotas.TestEventsPerMinute.Usage; u == nil || *u != 1 {
		t.Fatalf("globex's test-event usage: %+v", l.Quotas.TestEventsPerMinute)
	}
}

// TestLimitsRouteShowsUsage: a partner key sees its own limits and usage and never another
// partner's; the operator sees the limits, or a partner's usage on request.
func TestLimitsRouteShowsUsage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) {
		c.Limits = Limits{Endpoints: 5, ReplayJobs: 3, TestEventsPerMinute: 7, ReplaysPerMinute: 9, ReplayDeliveries: 1000,
			DeliveriesInFlight: 40, DeliveriesPerSec: 250}
	})
	key := e.partner("acme")
	otherKey := e.partner("globex")
	ep := e.endpoint("acme")
	e.endpoint("acme")
	e.endpoint("globex")
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/replay",
		map[string]string{"since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "source": "log"})
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/test", nil)

	type usage struct{ endpoints, jobs, tests int }
	check := func(name string, r response, pid string, want *usage) {
		t.Helper()
		var l limitsView
		r.json(t, &l)
		q := l.Quotas
		if r.Status != 200 || l.PartnerID != pid || q.Endpoints.Limit != 5 || q.ReplayJobs.Limit != 3 ||
			q.TestEventsPerMinute.Limit != 7 || q.ReplayDeliveries.Limit != 1000 || q.ReplayDeliveries.Usage != nil ||
			q.DeliveriesInFlight.Limit != 40 || q.DeliveriesPerSec.Limit != 250 || q.DeliveriesInFlight.Usage != nil || q.DeliveriesPerSec.Usage != nil {
			t.Fatalf("%s: %s", name, r)
		}
		if want == nil {
			if q.Endpoints.Usage != nil || q.ReplayJobs.Usage != nil || q.TestEventsPerMinute.Usage != nil || strings.Contains(string(r.Body), `"usage"`) {
				t.Fatalf("%s shows usage: %s", name, r)
			}
			return
		}
		got := func(p *int) int {
			if p == nil {
				return -1
			}
			return *p
		}
		if g := (usage{got(q.Endpoints.Usage), got(q.ReplayJobs.Usage), got(q.TestEventsPerMinute.Usage)}); g != *want {
			t.Fatalf("%s: usage %+v, want %+v (%s)", name, g, *want, r)
		}
	}
	check("acme's key", e.do(key, "GET", "/v1/limits", nil), "acme", &usage{2, 1, 1})
	check("acme's key naming acme", e.do(key, "GET", "/v1/limits?partner_id=acme", nil), "acme", &usage{2, 1, 1})
	check("globex's key", e.do(otherKey, "GET", "/v1/limits", nil), "globex", &usage{1, 0, 0})
	check("operator", e.do(operatorToken, "GET", "/v1/limits", nil), "", nil)
	check("operator for acme", e.do(operatorToken, "GET", "/v1/limits?partner_id=acme", nil), "acme", &usage{2, 1, 1})
	check("operator for globex", e.do(operatorToken, "GET", "/v1/limits?partner_id=globex", nil), "globex", &usage{1, 0, 0})

	// Another partner's usage answers as a partner that does not exist.
	for _, r := range []response{
		e.do(otherKey, "GET", "/v1/limits?partner_id=acme", nil),
		e.do(operatorToken, "GET", "/v1/limits?partner_id=nobody", nil),
		e.do(operatorToken, "GET", "/v1/limits?partner_id=not%20an%20id", nil),
	} {
		var eb errorBody
		r.json(t, &eb)
		if r.Status != 404 || eb.Code != CodeNotFound || strings.Contains(string(r.Body), "usage") {
			t.Fatalf("usage of another or no partner: %s", r)
		}
	}
}

// TestSingleReplayRate: single-delivery replays are rated per partner like test events, whoever
// asks (its key or the operator): past the limit 429 quota_exceeded with Retry-After and nothing
// produced; another partner has its own count; GET /v1/limits shows the usage.
func TestSingleReplayRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Limits.ReplaysPerMinute = 3 })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	e.api.replaysRate.now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }

	key := e.partner("acme")
	otherKey := e.partner("globex")
	ep, other := e.endpoint("acme"), e.endpoint("globex")
	ev := e.appendEvent("acme", "customer.created", `{"customer_id":"cus_1"}`)
	otherEv := e.appendEvent("globex", "customer.created", `{"customer_id":"cus_2"}`)
	did := e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 1, []string{ev}, []time.Time{time.Now()})[0]
	otherDid := e.seedDeliveries("globex", other.ID, "customer.created", "failed", 1, []string{otherEv}, []time.Time{time.Now()})[0]
	replay := func(token, pid, did string) response {
		return e.do(token, "POST", "/v1/partners/"+pid+"/deliveries/"+did+"/replay", nil)
	}
	e.must(202, key, "POST", "/v1/partners/acme/deliveries/"+did+"/replay", nil)
	advance(20 * time.Second)
	e.must(202, operatorToken, "POST", "/v1/partners/acme/deliveries/"+did+"/replay", nil)
	e.must(202, key, "POST", "/v1/partners/acme/deliveries/"+did+"/replay", nil)
	produced := e.endOffsets(e.Names.Deliveries)

	// The oldest of the three leaves the window 40 s from now.
	wantQuota(t, replay(key, "acme", did), 429, CodeQuotaExceeded, quotaReplays, 3, 3, "40")
	wantQuota(t, replay(operatorToken, "acme", did), 429, CodeQuotaExceeded, quotaReplays, 3, 3, "40")
	if n := e.endOffsets(e.Names.Deliveries); n != produced {
		t.Fatalf("refused replays produced %d records", n-produced)
	}
	e.must(202, otherKey, "POST", "/v1/partners/globex/deliveries/"+otherDid+"/replay", nil)

	var l limitsView
	e.must(200, key, "GET", "/v1/limits", nil).json(t, &l)
	if q := l.Quotas.ReplaysPerMinute; q.Limit != 3 || q.Usage == nil || *q.Usage != 3 {
		t.Fatalf("acme's replay quota: %+v", q)
	}
	advance(40 * time.Second)
	e.must(202, key, "POST", "/v1/partners/acme/deliveries/"+did+"/replay", nil)
}

// TestRateLimitHeaders: every answer of a route bound by a per-minute quota states it
// (RateLimit-Limit, -Remaining, -Reset), its 202s, its 429 (Reset equal to Retry-After), its
// other refusals and an idempotent repeat, on the partner's and the operator's routes alike;
// a caller not let through to the partner learns nothing of it.
func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Limits.TestEventsPerMinute, c.Limits.ReplaysPerMinute = 2, 3 })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	moved := func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	e.api.testEvents.now, e.api.replaysRate.now = moved, moved
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }

	key := e.partner("acme")
	otherKey := e.partner("globex")
	ep := e.endpoint("acme")
	var opEP createdEndpoint
	e.must(201, operatorToken, "POST", "/v1/operator/endpoints", map[string]any{
		"url": "https://hooks.example.com/ops", "event_types": []string{"operator.*"}}).json(t, &opEP)
	ev := e.appendEvent("acme", "customer.created", `{"customer_id":"cus_1"}`)
	did := e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 1, []string{ev}, []time.Time{time.Now()})[0]

	want := func(what string, r response, status int, limit, remaining int, reset string) {
		t.Helper()
		h := r.Header
		if r.Status != status || h.Get(RateLimitLimitHeader) != fmt.Sprint(limit) ||
			h.Get(RateLimitRemainingHeader) != fmt.Sprint(remaining) || h.Get(RateLimitResetHeader) != reset {
			t.Errorf("%s: %d with RateLimit %q/%q/%q, want %d with %d/%d/%s", what, r.Status, h.Get(RateLimitLimitHeader),
				h.Get(RateLimitRemainingHeader), h.Get(RateLimitResetHeader), status, limit, remaining, reset)
		}
		if status == 429 && h.Get("Retry-After") != reset {
			t.Errorf("%s: Retry-After %q, RateLimit-Reset %q", what, h.Get("Retry-After"), reset)
		}
	}
	test := "/v1/partners/acme/endpoints/" + ep.ID + "/test"
	want("a test event to no endpoint", e.do(key, "POST", "/v1/partners/acme/endpoints/ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8/test", nil), 404, 2, 2, "0")
	want("the first test event", e.doWith(idem("t-1"), key, "POST", test, ""), 202, 2, 1, "60")
	advance(15 * time.Second)
	want("its idempotent repeat", e.doWith(idem("t-1"), key, "POST", test, ""), 202, 2, 1, "45")
	want("the second", e.do(operatorToken, "POST", test, nil), 202, 2, 0, "45")
	want("the third", e.do(key, "POST", test, nil), 429, 2, 0, "45")
	want("a body refused", e.do(key, "POST", test, `{"x":1}`), 400, 2, 0, "45")
	if r := e.do(otherKey, "POST", test, nil); r.Status != 404 || r.Header.Get(RateLimitLimitHeader) != "" {
		t.Errorf("another partner's key: %d with RateLimit-Limit %q, want 404 without", r.Status, r.Header.Get(RateLimitLimitHeader))
	}
	want("the operator's own test event", e.do(operatorToken, "POST", "/v1/operator/endpoints/"+opEP.ID+"/test", nil), 202, 2, 1, "60")

	replay := "/v1/partners/acme/deliveries/" + did + "/replay"
	want("a replay", e.do(key, "POST", replay, nil), 202, 3, 2, "60")
	advance(time.Minute)
	want("a replay a minute later", e.do(key, "POST", replay, nil), 202, 3, 2, "60")
	want("a test event a minute later", e.do(key, "POST", test, nil), 202, 2, 1, "60")
	want("the operator's replay of no delivery", e.do(operatorToken, "POST", "/v1/operator/deliveries/dlv_nothere/replay", nil), 404, 3, 3, "0")

	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Ref     string                     `json:"$ref"`
				Headers map[string]json.RawMessage `json:"headers"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	for pattern := range e.api.rated {
		if !slices.ContainsFunc(e.api.routes, func(rt route) bool { return rt.pattern() == pattern }) {
			t.Errorf("rated route %s is not a route", pattern)
		}
		method, path, _ := strings.Cut(pattern, " ")
		res := doc.Paths[path][strings.ToLower(method)].Responses
		for _, h := range []string{RateLimitLimitHeader, RateLimitRemainingHeader, RateLimitResetHeader} {
			if res["202"].Headers[h] == nil || res["429"].Ref != "#/components/responses/RateLimited" {
				t.Errorf("openapi.json: %s does not declare %s on its 202 and 429", pattern, h)
			}
		}
	}
}
