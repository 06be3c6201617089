package sender_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/webhook"
)

// R15, R17: a receiver that knows only the secret shown at creation verifies real deliveries
// over the raw body, both with the webhook package and with a hand-written HMAC that shares no
// code with the signer; during a rotation both signatures are sent and each secret alone
// verifies, and an expired secret signs nothing.
func TestDeliveriesVerifyWithTheSecretShown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now().UTC()
	oldSecret, _ := webhook.NewSecret()
	newSecret, _ := webhook.NewSecret()
	expiredSecret, _ := webhook.NewSecret()
	soon, past := now.Add(time.Hour), now.Add(-time.Minute)
	e.endpoint("ep_rot", "p_a", func(ep *records.Endpoint) {
		ep.Secrets = []records.Secret{
			e.seal(ep.ID, "sec_expired", expiredSecret, now.Add(-48*time.Hour), &past),
			e.seal(ep.ID, "sec_old", oldSecret, now.Add(-24*time.Hour), &soon),
			e.seal(ep.ID, "sec_new", newSecret, now, nil),
		}
	})
	single := e.endpoint("ep_single", "p_a")

	cfg := e.config()
	cfg.UserAgent = "hookstream/1.2.3"
	e.start(cfg)
	d1, d2 := delivery("p_a", "ep_rot", "customer.created"), delivery("p_a", "ep_single", "customer.updated")
	e.deliver(0, d1)
	e.deliver(1, d2)
	for _, d := range []records.Delivery{d1, d2} {
		if a := e.waitAttempt(d); a.Outcome != records.OutcomeDelivered || a.Status != 200 || a.ErrorCategory != "" {
			t.Fatalf("attempt %+v, want delivered 200", a)
		}
	}

	rot := e.rcv.got("ep_rot")
	if len(rot) != 1 {
		t.Fatalf("ep_rot received %d requests", len(rot))
	}
	r := rot[0]
	if !bytes.Equal(r.body, d1.Body) {
		t.Fatalf("body changed on the way:\n%s\n%s", r.body, d1.Body)
	}
	if got := r.header.Get("webhook-id"); got != d1.EventID {
		t.Fatalf("webhook-id %q, want the event id %q (R1)", got, d1.EventID)
	}
	if r.header.Get("Content-Type") != "application/json" || r.header.Get("User-Agent") != "hookstream/1.2.3" {
		t.Fatalf("headers %v", r.header)
	}
	if sigs := strings.Fields(r.header.Get("webhook-signature")); len(sigs) != 2 {
		t.Fatalf("signature header %q: want one signature per active secret", r.header.Get("webhook-signature"))
	}
	for name, secret := range map[string]string{"old": oldSecret, "new": newSecret} {
		v, err := webhook.NewVerifier([]string{secret})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.VerifyHeader(r.header, r.body); err != nil {
			t.Fatalf("the %s secret alone does not verify: %v", name, err)
		}
		if !handVerify(secret, r.header, r.body) {
			t.Fatalf("the %s secret does not verify by hand", name)
		}
	}
	if err := webhook.Verify(expiredSecret, r.header, r.body); err == nil || handVerify(expiredSecret, r.header, r.body) {
		t.Fatal("an expired secret still signs")
	}

	s := e.rcv.got("ep_single")
	if len(s) != 1 || !handVerify(single, s[0].header, s[0].body) || len(strings.Fields(s[0].header.Get("webhook-signature"))) != 1 {
		t.Fatalf("ep_single: %d requests, header %v", len(s), s)
	}
	ts := s[0].header.Get("webhook-timestamp")
	if at := e.attempts.of(d2.DeliveryID)[0].StartedAt.Unix(); ts != strconv.FormatInt(at, 10) {
		t.Fatalf("webhook-timestamp %s is not the attempt time %d", ts, at)
	}
}

// handVerify checks a Standard Webhooks signature the way a third party would, from the spec:
// base64(HMAC-SHA256(base64decode(secret without whsec_), id + "." + timestamp + "." + body)).
func handVerify(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return slices.Contains(strings.Fields(h.Get("webhook-signature")), want)
}

// R13: a delivery record naming another partner's endpoint, or carrying another partner's
// event, or naming no endpoint at all, is never sent and is recorded as tenant_mismatch.
func TestForgedDeliveryIsNeverSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_a", "p_a")
	e.endpoint("ep_b", "p_b", func(ep *records.Endpoint) { ep.MaxInFlight = 1 })
	e.start(e.config())

	forged := delivery("p_a", "ep_b", "customer.created") // partner A's event at B's endpoint
	foreignBody := delivery("p_b", "ep_b", "customer.created")
	foreignBody.Body = delivery("p_a", "ep_b", "customer.created").Body // B's record, A's event
	foreignBody.EventID = eventIDOf(t, foreignBody.Body)
	foreignBody.DeliveryID = records.DeliveryID(foreignBody.EventID, "ep_b")
	unknown := delivery("p_a", "ep_missing", "customer.created")
	legit := delivery("p_b", "ep_b", "customer.created")
	e.deliver(0, forged, foreignBody, unknown, legit)

	for _, d := range []records.Delivery{forged, foreignBody, unknown} {
		a := e.waitAttempt(d)
		if a.ErrorCategory != records.CategoryTenantMismatch || a.Outcome != records.OutcomeFailed || a.Status != 0 {
			t.Fatalf("attempt %+v, want failed tenant_mismatch", a)
		}
		if a.PartnerID != d.PartnerID || !strings.HasPrefix(a.ResponseExcerpt, "not sent") {
			t.Fatalf("attempt %+v", a)
		}
	}
	if a := e.waitAttempt(legit); a.Outcome != records.OutcomeDelivered {
		t.Fatalf("legit delivery: %+v", a)
	}
	if got := e.rcv.eventIDs("ep_b"); !slices.Equal(got, []string{legit.EventID}) {
		t.Fatalf("ep_b received %v, want only %s", got, legit.EventID)
	}
	if e.rcv.total() != 1 {
		t.Fatalf("the receiver got %d requests, want 1", e.rcv.total())
	}
	if n := len(e.retrier.scheduled("ep_b")) + len(e.retrier.scheduled("ep_missing")); n != 0 {
		t.Fatalf("refusals were scheduled for retry %d times", n)
	}
}

// A disabled endpoint and one no longer subscribed get nothing; each refusal is visible in
// the history as a failed attempt with the reason (a disabled endpoint's as endpoint_disabled,
// never internal, which means hookstream's own fault), and is not retried. A test delivery skips
// only the subscription check (R25).
func TestRefusedDeliveriesAreRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_off", "p_a", func(ep *records.Endpoint) { ep.Status = "disabled"; ep.DisabledReason = "receiver answered 410" })
	e.endpoint("ep_narrow", "p_a", func(ep *records.Endpoint) { ep.EventTypes = []string{"api_key.created"} })
	cfg, reg := e.meteredConfig()
	e.start(cfg)

	disabled := delivery("p_a", "ep_off", "customer.created")
	unsubscribed := delivery("p_a", "ep_narrow", "customer.created")
	test := delivery("p_a", "ep_narrow", "webhook.test")
	test.Trigger = records.TriggerTest
	disabledTest := delivery("p_a", "ep_off", "webhook.test")
	disabledTest.Trigger = records.TriggerTest
	e.deliver(0, disabled, unsubscribed, test, disabledTest)

	for d, want := range map[*records.Delivery]struct{ category, reason string }{
		&disabled:     {records.CategoryEndpointDisabled, "endpoint is disabled (receiver answered 410)"},
		&unsubscribed: {records.CategoryInternal, "not subscribed to customer.created"},
		&disabledTest: {records.CategoryEndpointDisabled, "endpoint is disabled"},
	} {
		a := e.waitAttempt(*d)
		if a.Outcome != records.OutcomeFailed || a.ErrorCategory != want.category || !strings.Contains(a.ResponseExcerpt, want.reason) {
			t.Fatalf("attempt %+v, want failed %s with %q", a, want.category, want.reason)
		}
	}
	if a := e.waitAttempt(test); a.Outcome != records.OutcomeDelivered {
		t.Fatalf("test delivery: %+v", a)
	}
	if got := e.rcv.eventIDs("ep_narrow"); !slices.Equal(got, []string{test.EventID}) || len(e.rcv.got("ep_off")) != 0 {
		t.Fatalf("ep_narrow got %v, ep_off got %d", got, len(e.rcv.got("ep_off")))
	}
	if s, d := e.retrier.counts(); s+d != 0 {
		t.Fatal("a refusal was handed to the retrier")
	}
	// The counter moves once the record is acknowledged, which may be just after it is read.
	waitFor(t, 10*time.Second, "attempts_total{failed,endpoint_disabled} = 2, {failed,internal} = 1", func() bool {
		return testenv.Value(t, reg, "hookstream_sender_attempts_total", "outcome", "failed", "category", "endpoint_disabled") == 2 &&
			testenv.Value(t, reg, "hookstream_sender_attempts_total", "outcome", "failed", "category", "internal") == 1
	})
}

// R20, R27: Retry-After reaches the retrier, a 410 is a final failure with status 410, a
// redirect (to a private address or anywhere) is recorded and not followed, and a retrier
// that reports exhaustion makes the attempt final.
func TestResponsePolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, id := range []string{"ep_429", "ep_410", "ep_302", "ep_302local", "ep_500", "ep_trap"} {
		e.endpoint(id, "p_a")
	}
	e.rcv.handle("ep_429", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(429)
	})
	e.rcv.handle("ep_410", func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(410) })
	e.rcv.handle("ep_302", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Location", "http://10.0.0.1/internal")
		w.WriteHeader(302)
	})
	e.rcv.handle("ep_302local", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Location", e.rcv.url("ep_trap"))
		w.WriteHeader(302)
	})
	e.rcv.handle("ep_500", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.WriteHeader(500)
		_, _ = w.Write([]byte("db down; token=abc123secret"))
	})
	e.retrier.isFinal = func(d records.Delivery) bool { return d.EndpointID == "ep_500" }
	e.start(e.config())

	d429, d410 := delivery("p_a", "ep_429", "customer.created"), delivery("p_a", "ep_410", "customer.created")
	d302, d302l := delivery("p_a", "ep_302", "customer.created"), delivery("p_a", "ep_302local", "customer.created")
	d500 := delivery("p_a", "ep_500", "customer.created")
	e.deliver(0, d429, d410, d302, d302l, d500)

	a := e.waitAttempt(d429)
	calls := e.retrier.scheduled("ep_429")
	if len(calls) != 1 || calls[0].retryAfter != 2*time.Second || calls[0].a.Status != 429 {
		t.Fatalf("Schedule calls for the 429: %+v", calls)
	}
	if a.Outcome != records.OutcomeRetrying || a.NextAttemptAt == nil || !a.NextAttemptAt.Equal(calls[0].next) ||
		a.Status != 429 || a.ErrorCategory != records.CategoryHTTPStatus {
		t.Fatalf("429 attempt %+v", a)
	}
	if a := e.waitAttempt(d410); a.Outcome != records.OutcomeFailed || a.Status != 410 || a.NextAttemptAt != nil {
		t.Fatalf("410 attempt %+v", a)
	}
	if n := len(e.retrier.scheduled("ep_410")); n != 0 {
		t.Fatalf("a 410 was scheduled for retry %d times", n)
	}
	for _, d := range []records.Delivery{d302, d302l} {
		if a := e.waitAttempt(d); a.ErrorCategory != records.CategoryRedirect || a.Status != 302 || a.Outcome != records.OutcomeRetrying {
			t.Fatalf("302 attempt %+v", a)
		}
	}
	if n := len(e.rcv.got("ep_trap")); n != 0 {
		t.Fatalf("a redirect was followed (R27): the target got %d requests", n)
	}
	a = e.waitAttempt(d500)
	if a.Outcome != records.OutcomeFailed || a.NextAttemptAt != nil || a.Status != 500 {
		t.Fatalf("exhausted 500 attempt %+v", a)
	}
	if !strings.Contains(a.ResponseExcerpt, "db down") || strings.Contains(a.ResponseExcerpt, "abc123secret") {
		t.Fatalf("excerpt %q", a.ResponseExcerpt)
	}
	if a.StartedAt.IsZero() || a.AttemptNo != 1 || a.Trigger != records.TriggerInitial {
		t.Fatalf("evidence %+v", a)
	}
	// The latency in microseconds, and in whole milliseconds for older readers: a receiver on
	// this host answers in well under a millisecond, which latency_ms alone shows as 0.
	if a.LatencyUS <= 0 || a.LatencyMS != a.LatencyUS/1000 {
		t.Fatalf("latency %d µs, %d ms", a.LatencyUS, a.LatencyMS)
	}
}

// R21: an endpoint that hangs does not hold back healthy endpoints of the same partition, never
// gets more than max_in_flight requests at once, and what does not fit its queue is deferred
// to the retry tiers without counting an attempt.
func TestHangingEndpointDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	e.endpoint("ep_hang", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 2 })
	e.rcv.handle("ep_hang", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	healthy := []string{"ep_h1", "ep_h2", "ep_h3", "ep_h4", "ep_h5"}
	for _, id := range healthy {
		e.endpoint(id, "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 3 })
		e.rcv.handle(id, func(w http.ResponseWriter, _ *http.Request, _ []byte) { time.Sleep(5 * time.Millisecond) })
	}
	cfg := e.config()
	cfg.QueueSize = 8
	cfg.Egress.RequestTimeout = time.Minute // the hanging requests stay in flight for the whole test
	cfg.ShutdownGrace = time.Second
	e.start(cfg)

	// 10 rounds of the hanging endpoint first, then every healthy one; the last round has 4
	// more for the hanging endpoint. Its 14 records: 2 in flight, 8 queued, and 4 deferred,
	// which would otherwise hold back the healthy records behind them on the partition. A
	// healthy endpoint's 10 always fit its 3 workers and queue of 8.
	var all []records.Delivery
	for i := 0; i < 10; i++ {
		all = append(all, delivery("p_a", "ep_hang", "customer.created"))
		if i == 9 {
			for j := 0; j < 4; j++ {
				all = append(all, delivery("p_a", "ep_hang", "customer.created"))
			}
		}
		for _, id := range healthy {
			all = append(all, delivery("p_a", id, "customer.created"))
		}
	}
	e.deliver(0, all...)

	waitFor(t, 30*time.Second, "every healthy delivery", func() bool {
		n := e.attempts.count(func(a records.Attempt) bool {
			return a.EndpointID != "ep_hang" && a.Outcome == records.OutcomeDelivered
		})
		return n == 50
	})
	inFlight, peak := e.rcv.concurrency("ep_hang")
	if inFlight != 2 || peak != 2 {
		t.Fatalf("hanging endpoint: %d in flight, peak %d; want exactly its max_in_flight 2", inFlight, peak)
	}
	for _, id := range healthy {
		if _, peak := e.rcv.concurrency(id); peak > 3 {
			t.Fatalf("%s saw %d concurrent requests, max_in_flight is 3", id, peak)
		}
	}
	// 2 in flight + 8 queued; the other 4 were deferred without an attempt.
	waitFor(t, 10*time.Second, "deferrals of the overflow", func() bool { return len(e.retrier.deferred("ep_hang")) == 4 })
	for _, c := range e.retrier.deferred("ep_hang") {
		if c.after != cfg.DeferDelay || c.d.AttemptNo != 1 || c.d.Deferrals != 1 {
			t.Fatalf("deferral %+v", c)
		}
	}
	if n := e.attempts.count(func(a records.Attempt) bool { return a.EndpointID == "ep_hang" }); n != 0 {
		t.Fatalf("%d attempts of the hanging endpoint reported while all hang", n)
	}

	close(release)
	waitFor(t, 30*time.Second, "the hanging endpoint's queued deliveries", func() bool {
		return e.attempts.count(func(a records.Attempt) bool {
			return a.EndpointID == "ep_hang" && a.Outcome == records.OutcomeDelivered
		}) == 10
	})
	if _, peak := e.rcv.concurrency("ep_hang"); peak != 2 {
		t.Fatalf("hanging endpoint peaked at %d concurrent requests", peak)
	}
}

// R21: rate_limit_per_sec spaces the requests of an endpoint; counted over the whole run, so
// a slow machine can only make the test pass more easily.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rate := 10.0
	e.endpoint("ep_rate", "p_a", func(ep *records.Endpoint) { ep.RateLimitPerSec = &rate })
	e.start(e.config())
	ds := deliveries(15, "p_a", "ep_rate", "customer.created")
	e.deliver(0, ds...)
	waitFor(t, 30*time.Second, "all rate-limited deliveries", func() bool { return len(e.rcv.got("ep_rate")) == 15 })
	got := e.rcv.got("ep_rate")
	// 15 requests at 10/s with a burst of one span at least 14 intervals of 100 ms.
	if span := got[14].at.Sub(got[0].at); span < 1300*time.Millisecond {
		t.Fatalf("15 requests took %s; the rate limit of 10/s allows no less than 1.4s", span)
	}
	for i := range got {
		// No window of one second starting at a request holds more than rate + burst.
		n := 0
		for j := i; j < len(got) && got[j].at.Sub(got[i].at) < time.Second; j++ {
			n++
		}
		if n > 11 {
			t.Fatalf("%d requests within one second", n)
		}
	}
}

// R21: a run of failures opens the circuit; further work is deferred without an attempt; after
// the cooldown a single probe goes out, a failed probe reopens it and a successful one closes it.
func TestCircuitBreaker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_cb", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 1 })
	var mu sync.Mutex
	status := 503
	e.rcv.handle("ep_cb", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
	})
	reg := prometheus.NewRegistry()
	cfg := e.config()
	cfg.BreakerFailures = 3
	cfg.BreakerCooldown = 500 * time.Millisecond
	cfg.Registerer = reg
	e.start(cfg)
	batch := func(n int) []records.Delivery {
		ds := deliveries(n, "p_a", "ep_cb", "customer.created")
		e.deliver(0, ds...)
		return ds
	}
	handedOver := func() int { return len(e.retrier.scheduled("ep_cb")) + len(e.retrier.deferred("ep_cb")) }

	// 10 records: 3 failed attempts open the circuit, the other 7 are deferred.
	batch(10)
	waitFor(t, 30*time.Second, "10 hand-offs", func() bool { return handedOver() == 10 })
	if s, d := len(e.retrier.scheduled("ep_cb")), len(e.retrier.deferred("ep_cb")); s != 3 || d != 7 || len(e.rcv.got("ep_cb")) != 3 {
		t.Fatalf("%d scheduled, %d deferred, %d requests; want 3, 7, 3", s, d, len(e.rcv.got("ep_cb")))
	}
	for _, c := range e.retrier.deferred("ep_cb") {
		if c.after <= 0 || c.after > cfg.BreakerCooldown+time.Second {
			t.Fatalf("deferred for %s", c.after)
		}
	}
	waitFor(t, 10*time.Second, "3 attempt records", func() bool {
		return e.attempts.count(func(a records.Attempt) bool { return a.EndpointID == "ep_cb" }) == 3
	})
	if v := testenv.Value(t, reg, "hookstream_sender_circuits_open"); v != 1 {
		t.Fatalf("circuits_open = %v", v)
	}
	// The attempt records state the circuit (the admin API shows it, design.md section 10): closed after
	// the first two failures, open after the third, with the end of its cooldown.
	closed := e.attempts.count(func(a records.Attempt) bool {
		return a.EndpointID == "ep_cb" && a.Circuit == records.CircuitClosed && a.CircuitProbeAt == nil
	})
	opened := e.attempts.count(func(a records.Attempt) bool {
		return a.EndpointID == "ep_cb" && a.Circuit == records.CircuitOpen && a.CircuitProbeAt != nil &&
			a.CircuitProbeAt.Sub(a.StartedAt) > 0 && a.CircuitProbeAt.Sub(a.StartedAt) <= cfg.BreakerCooldown+5*time.Second
	})
	if closed != 2 || opened != 1 {
		t.Fatalf("attempt records state the circuit closed %d times, open (with its probe time) %d times; want 2 and 1", closed, opened)
	}

	// After the cooldown, still failing: one probe, then open again.
	time.Sleep(cfg.BreakerCooldown + 100*time.Millisecond)
	batch(3)
	waitFor(t, 30*time.Second, "13 hand-offs", func() bool { return handedOver() == 13 })
	if n := len(e.rcv.got("ep_cb")); n != 4 {
		t.Fatalf("half-open circuit let %d requests through, want 1 probe", n-3)
	}

	// The receiver recovers: the next probe closes the circuit and the rest flows.
	mu.Lock()
	status = 200
	mu.Unlock()
	time.Sleep(cfg.BreakerCooldown + 100*time.Millisecond)
	ds := batch(4)
	e.waitDelivered(ds...)
	if v := testenv.Value(t, reg, "hookstream_sender_circuits_open"); v != 0 {
		t.Fatalf("circuits_open = %v after recovery", v)
	}
	for _, d := range ds {
		if as := e.attempts.of(d.DeliveryID); len(as) != 1 || as[0].Circuit != records.CircuitClosed {
			t.Fatalf("after recovery the attempt records state the circuit %+v, want closed", as)
		}
	}
	waitFor(t, 10*time.Second, "deferrals_total{circuit_open} = 9", func() bool {
		return testenv.Value(t, reg, "hookstream_sender_deferrals_total", "reason", "circuit_open") == 9
	})
	// An open circuit's deferrals are not counted in the record: a full queue met later backs
	// off from DeferDelay, not from a delay doubled for every round the circuit was open.
	for _, c := range e.retrier.deferred("ep_cb") {
		if c.d.Deferrals != 0 {
			t.Fatalf("circuit-open deferral counted in the record: %+v", c.d)
		}
	}
}

// Design section 7: an ordered endpoint gets one request at a time in offset order, and a
// failing event holds back the later ones instead of being overtaken; meanwhile another
// endpoint of the same partition is served.
func TestOrderedEndpointKeepsOrderUnderFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_ord", "p_a", func(ep *records.Endpoint) { ep.Ordered = true; ep.MaxInFlight = 8 })
	e.endpoint("ep_other", "p_a")
	ds := deliveries(6, "p_a", "ep_ord", "customer.created")
	var mu sync.Mutex
	failures := 0
	e.rcv.handle("ep_ord", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		time.Sleep(5 * time.Millisecond) // room for a second request to overlap if allowed
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("webhook-id") == ds[2].EventID && failures < 2 {
			failures++
			w.WriteHeader(503)
			return
		}
	})
	cfg := e.config()
	cfg.OrderedBackoff = 50 * time.Millisecond
	e.start(cfg)
	other := delivery("p_a", "ep_other", "customer.created")
	e.deliver(0, append(ds[:3:3], other)...)
	e.deliver(0, ds[3:]...)

	waitFor(t, 30*time.Second, "all ordered deliveries", func() bool {
		return e.attempts.count(func(a records.Attempt) bool {
			return a.EndpointID == "ep_ord" && a.Outcome == records.OutcomeDelivered
		}) == 6
	})
	want := []string{ds[0].EventID, ds[1].EventID, ds[2].EventID, ds[2].EventID, ds[2].EventID, ds[3].EventID, ds[4].EventID, ds[5].EventID}
	if got := e.rcv.eventIDs("ep_ord"); !slices.Equal(got, want) {
		t.Fatalf("ordered endpoint received\n%v\nwant\n%v", got, want)
	}
	if _, peak := e.rcv.concurrency("ep_ord"); peak != 1 {
		t.Fatalf("ordered endpoint saw %d concurrent requests", peak)
	}
	as := e.attempts.of(ds[2].DeliveryID)
	if len(as) != 3 || as[0].Outcome != records.OutcomeRetrying || as[0].NextAttemptAt == nil || as[1].AttemptNo != 2 ||
		as[1].Trigger != records.TriggerRetry || as[2].Outcome != records.OutcomeDelivered || as[2].AttemptNo != 3 {
		t.Fatalf("attempts of the failing event: %+v", as)
	}
	if n := len(e.retrier.scheduled("ep_ord")) + len(e.retrier.deferred("ep_ord")); n != 0 {
		t.Fatalf("the ordered endpoint's failure left the lane %d times", n)
	}
	if a := e.waitAttempt(other); a.Outcome != records.OutcomeDelivered {
		t.Fatalf("other endpoint: %+v", a)
	}
}

// Offsets (R21, at least once): the committed offset never passes an unfinished record; after
// a restart, a record whose attempt was never reported is delivered again.
func TestRestartRedeliversUnfinishedWork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_ok", "p_a")
	e.endpoint("ep_stuck", "p_a")
	release := make(chan struct{})
	var mu sync.Mutex
	stuck := true
	e.rcv.handle("ep_stuck", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		mu.Lock()
		s := stuck
		mu.Unlock()
		if s {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	defer close(release)
	cfg := e.config()
	cfg.ShutdownGrace = 300 * time.Millisecond
	cfg.Egress.RequestTimeout = time.Minute
	stop := e.start(cfg)

	ok1, ok2 := delivery("p_a", "ep_ok", "customer.created"), delivery("p_a", "ep_ok", "customer.created")
	st := delivery("p_a", "ep_stuck", "customer.created")
	ok3, ok4 := delivery("p_a", "ep_ok", "customer.created"), delivery("p_a", "ep_ok", "customer.created")
	offsets := e.deliver(0, ok1, ok2, st, ok3, ok4)
	for _, d := range []records.Delivery{ok1, ok2, ok3, ok4} {
		e.waitAttempt(d)
	}
	waitFor(t, 10*time.Second, "the stuck request", func() bool { n, _ := e.rcv.concurrency("ep_stuck"); return n == 1 })
	waitFor(t, 10*time.Second, "a commit up to the stuck record", func() bool { return e.committed(cfg, 0) == offsets[2] })
	time.Sleep(3 * cfg.CommitInterval) // more commit rounds: none may pass the stuck record
	if c := e.committed(cfg, 0); c != offsets[2] {
		t.Fatalf("committed %d while offset %d is unfinished", c, offsets[2])
	}
	stop() // the stuck request is abandoned after the grace: no attempt, no commit past it
	if c := e.committed(cfg, 0); c != offsets[2] {
		t.Fatalf("committed %d after shutdown, want %d", c, offsets[2])
	}
	if n := len(e.attempts.of(st.DeliveryID)); n != 0 {
		t.Fatalf("the abandoned request was reported %d times", n)
	}

	mu.Lock()
	stuck = false
	mu.Unlock()
	e.start(cfg)
	if a := e.waitAttempt(st); a.Outcome != records.OutcomeDelivered || a.AttemptNo != 1 {
		t.Fatalf("after restart: %+v", a)
	}
	if got := e.rcv.eventIDs("ep_stuck"); len(got) != 2 || got[0] != st.EventID || got[1] != st.EventID {
		t.Fatalf("ep_stuck received %v; want the same event twice (at least once)", got)
	}
	waitFor(t, 10*time.Second, "the commit of everything", func() bool { return e.committed(cfg, 0) == offsets[4]+1 })
	// What finished above the stuck record is not sent again: the commit carried it as finished
	// (finished.go), so the restart re-sent what was in flight and nothing else.
	if got := e.rcv.eventIDs("ep_ok"); len(got) != 4 {
		t.Fatalf("ep_ok received %d requests, want its 4 events once each: %v", len(got), got)
	}
}

// Records that cannot be sent now or ever do not block the partition: malformed ones go to
// the dlq topic with the reason, not-yet-due ones are deferred, and the commit passes both.
func TestUndeliverableRecordsDoNotBlock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_a", "p_a")
	cfg, reg := e.meteredConfig()
	e.start(cfg)

	badVersion := delivery("p_a", "ep_a", "customer.created")
	badVersion.V = 99
	badID := delivery("p_a", "ep_a", "customer.created")
	badID.DeliveryID = "dlv_forged"
	later := delivery("p_a", "ep_a", "customer.created")
	later.DueAt = time.Now().Add(time.Hour)
	good := delivery("p_a", "ep_a", "customer.created")
	first := e.produceRaw(rawRecord(e, "ep_a", []byte("{not json")))[0]
	e.deliver(0, badVersion, badID, later, good)

	if a := e.waitAttempt(good); a.Outcome != records.OutcomeDelivered {
		t.Fatalf("good record: %+v", a)
	}
	waitFor(t, 10*time.Second, "the not-due deferral", func() bool { return len(e.retrier.deferred("ep_a")) == 1 })
	if c := e.retrier.deferred("ep_a")[0]; c.d.DeliveryID != later.DeliveryID || c.after < 59*time.Minute || c.after > time.Hour {
		t.Fatalf("deferral %+v", c)
	}
	letters := readDeadLetters(t, e, 3)
	for _, dl := range letters {
		if dl.Source != "sender" || dl.Reason == "" || len(dl.Original) == 0 {
			t.Fatalf("dead letter %+v", dl)
		}
	}
	waitFor(t, 10*time.Second, "a commit past every record", func() bool { return e.committed(cfg, 0) == first+5 })
	if v := testenv.Value(t, reg, "hookstream_sender_bad_records_total"); v != 3 {
		t.Fatalf("bad_records_total = %v", v)
	}
	if len(e.rcv.got("ep_a")) != 1 {
		t.Fatalf("ep_a received %d requests", len(e.rcv.got("ep_a")))
	}
}

// Rebalancing: a second sender joins while the first has work in flight, then the first one
// leaves with work in flight; every delivery is made at least once and the group ends
// committed at the end of every partition.
func TestRebalanceLosesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := []string{"ep_r0", "ep_r1", "ep_r2", "ep_r3", "ep_r4", "ep_r5"}
	for _, id := range ids {
		e.endpoint(id, "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 1 })
		e.rcv.handle(id, func(w http.ResponseWriter, _ *http.Request, _ []byte) { time.Sleep(30 * time.Millisecond) })
	}
	var ds []records.Delivery
	ends := map[int32]int64{}
	produce := func(n int) {
		byPartition := map[int32][]records.Delivery{}
		for i := 0; i < n; i++ {
			d := delivery("p_a", ids[len(ds)%len(ids)], "customer.created")
			ds = append(ds, d)
			p := int32(len(ds) % 3)
			byPartition[p] = append(byPartition[p], d)
		}
		for p, batch := range byPartition {
			offsets := e.deliver(p, batch...)
			ends[p] = offsets[len(offsets)-1] + 1
		}
	}
	first, second := e.config(), e.config()
	reg1, reg2 := prometheus.NewRegistry(), prometheus.NewRegistry()
	first.Registerer, second.Registerer = reg1, reg2
	stopFirst := e.start(first)
	produce(120) // 20 per endpoint, one at a time: more than a second of work
	waitFor(t, 30*time.Second, "some deliveries", func() bool { return e.rcv.total() >= 10 })

	e.start(second) // the group rebalances; partitions move while the first has them in flight
	waitFor(t, 30*time.Second, "the second sender's assignment", func() bool {
		return testenv.Value(t, reg2, "hookstream_sender_partitions_assigned") > 0
	})
	produce(60)
	waitFor(t, 30*time.Second, "the second sender to deliver", func() bool {
		return testenv.Value(t, reg2, "hookstream_sender_attempts_total") > 0
	})
	stopFirst() // with work in flight; its partitions move to the second
	produce(30)
	e.waitDelivered(ds...)
	if v := testenv.Value(t, reg2, "hookstream_sender_partitions_assigned"); v != 3 {
		t.Fatalf("the remaining sender owns %v partitions, want 3", v)
	}
	for p, end := range ends {
		waitFor(t, 30*time.Second, "commits at the end", func() bool { return e.committed(second, p) == end })
	}
}

// Memory stays bounded: at the buffered-record cap fetching pauses, however many records wait
// in Kafka, and resumes as work finishes.
func TestBufferedRecordsAreCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_slow", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 50 })
	release := make(chan struct{})
	e.rcv.handle("ep_slow", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	reg := prometheus.NewRegistry()
	cfg := e.config()
	cfg.MaxBuffered = 5
	cfg.QueueSize = 100
	cfg.Egress.RequestTimeout = time.Minute
	cfg.Registerer = reg
	e.start(cfg)
	ds := deliveries(20, "p_a", "ep_slow", "customer.created")
	e.deliver(0, ds...)

	waitFor(t, 30*time.Second, "5 requests in flight", func() bool { n, _ := e.rcv.concurrency("ep_slow"); return n == 5 })
	waitFor(t, 10*time.Second, "fetching paused", func() bool {
		return testenv.Value(t, reg, "hookstream_sender_fetch_paused") == 1
	})
	time.Sleep(500 * time.Millisecond) // time for more fetches, which must not come
	if n, peak := e.rcv.concurrency("ep_slow"); n != 5 || peak != 5 {
		t.Fatalf("%d requests in flight (peak %d) with a cap of 5 buffered records", n, peak)
	}
	if v := testenv.Value(t, reg, "hookstream_sender_buffered_records"); v != 5 {
		t.Fatalf("buffered_records = %v", v)
	}
	close(release)
	e.waitDelivered(ds...)
	if _, peak := e.rcv.concurrency("ep_slow"); peak > 5 {
		t.Fatalf("peak of %d requests in flight with a cap of 5", peak)
	}
}

// R21, flow control: a burst to an endpoint that answers fast flows at its pace, with no record
// deferred, while a hanging endpoint in the same partition has its overflow deferred; what the
// sender holds stays bounded throughout, and the fast endpoint's concurrency rises above the
// initial 8 (its max_in_flight is the default ceiling).
func TestBurstToFastEndpointFlowsBesideHangingOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_fast", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 64 })
	e.rcv.handle("ep_fast", func(w http.ResponseWriter, _ *http.Request, _ []byte) { time.Sleep(2 * time.Millisecond) })
	e.endpoint("ep_hang", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 2 })
	e.rcv.handle("ep_hang", func(w http.ResponseWriter, r *http.Request, _ []byte) { <-r.Context().Done() })
	reg := prometheus.NewRegistry()
	cfg := e.config()
	cfg.MaxBuffered = 1000
	cfg.QueueSize = 32                      // far below the burst: the fast endpoint's queue is full most of the time
	cfg.Egress.RequestTimeout = time.Minute // the hanging requests stay in flight for the whole test
	cfg.ShutdownGrace = time.Second
	// "Fast" is relative to the machine: under the race detector on a busy 2-core CI machine a
	// 2 ms receiver can take tens of milliseconds a request, which the default 20 ms slot wait
	// would rightly call slow. The hanging endpoint is caught by the stall rule all the same.
	cfg.MaxSlotWait = 200 * time.Millisecond
	cfg.StallAfter = time.Second
	cfg.Registerer = reg
	e.start(cfg)

	const fast, every = 10000, 50
	var all []records.Delivery
	for i := 0; i < fast; i++ {
		all = append(all, delivery("p_a", "ep_fast", "customer.created"))
		if i%every == 0 {
			all = append(all, delivery("p_a", "ep_hang", "customer.created"))
		}
	}
	hanging := len(all) - fast
	peakBuffered := 0.0
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(5 * time.Millisecond):
			}
			peakBuffered = max(peakBuffered, testenv.Value(t, reg, "hookstream_sender_buffered_records"))
		}
	}()
	for i := 0; i < len(all); i += 1000 {
		e.deliver(0, all[i:min(i+1000, len(all))]...)
	}

	waitFor(t, 120*time.Second, "every fast delivery", func() bool {
		if d := e.retrier.deferred("ep_fast"); len(d) != 0 {
			t.Fatalf("%d deliveries to the fast endpoint deferred, want none", len(d))
		}
		return e.attempts.count(func(a records.Attempt) bool {
			return a.EndpointID == "ep_fast" && a.Outcome == records.OutcomeDelivered
		}) >= fast
	})
	close(stopSampling)
	<-sampled
	if ids := e.rcv.eventIDs("ep_fast"); len(ids) != fast {
		t.Fatalf("fast endpoint received %d requests, want %d", len(ids), fast)
	}
	if d := e.retrier.deferred("ep_fast"); len(d) != 0 {
		t.Fatalf("%d deliveries to the fast endpoint deferred, want none", len(d))
	}
	// The hanging endpoint holds 2 in flight and 32 queued; the rest of its records were deferred.
	waitFor(t, 30*time.Second, "the hanging endpoint's overflow deferred", func() bool {
		return len(e.retrier.deferred("ep_hang")) == hanging-2-cfg.QueueSize
	})
	if peakBuffered > float64(cfg.MaxBuffered) {
		t.Fatalf("%v records buffered at the peak, cap %d", peakBuffered, cfg.MaxBuffered)
	}
	if _, peak := e.rcv.concurrency("ep_fast"); peak <= cfg.InitialInFlight {
		t.Fatalf("fast endpoint peaked at %d requests in flight; the adaptive limit should rise above %d", peak, cfg.InitialInFlight)
	}
	if _, peak := e.rcv.concurrency("ep_hang"); peak != 2 {
		t.Fatalf("hanging endpoint peaked at %d requests in flight, max_in_flight is 2", peak)
	}
}

// A full lane holds back only its own partition: while one endpoint's queue is full and its
// requests are out (it keeps up, so its records wait rather than being deferred), another
// endpoint's records on another partition are still taken and sent. Before each partition had a
// feeder of its own, intake itself waited for room in the full lane and the other endpoint got
// nothing until the first one's requests ended: here they end only once the other endpoint has
// received everything, so that version stalls until the 20 s escape below, and fails.
func TestFullLaneHoldsBackOnlyItsPartition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const busy, other = 200, 50
	e.endpoint("ep_busy", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 2 })
	e.endpoint("ep_other", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 2 })
	escape := time.Now().Add(20 * time.Second)
	e.rcv.handle("ep_busy", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		for len(e.rcv.got("ep_other")) < other && time.Now().Before(escape) {
			time.Sleep(5 * time.Millisecond)
		}
	})
	cfg, reg := e.meteredConfig()
	cfg.QueueSize = 4
	cfg.InitialInFlight = 2
	// ep_busy counts as keeping up for the whole test: its records wait for room, none is deferred.
	cfg.MaxSlotWait, cfg.StallAfter, cfg.MaxIntakeWait = time.Minute, time.Minute, time.Minute
	cfg.Egress.RequestTimeout = time.Minute
	e.start(cfg)

	ds := deliveries(busy, "p_a", "ep_busy", "customer.created")
	e.deliver(0, ds...)
	waitFor(t, 30*time.Second, "ep_busy's lane full, its requests out", func() bool {
		now, _ := e.rcv.concurrency("ep_busy")
		return now == 2
	})
	ds = deliveries(other, "p_a", "ep_other", "customer.created")
	began := time.Now()
	e.deliver(1, ds...)
	waitFor(t, 15*time.Second, "every ep_other delivery beside the full lane", func() bool {
		return len(e.rcv.got("ep_other")) == other
	})
	t.Logf("ep_other received its %d deliveries %v after they were produced", other, time.Since(began).Round(time.Millisecond))
	waitFor(t, 60*time.Second, "every ep_busy delivery", func() bool {
		return e.attempts.count(func(a records.Attempt) bool {
			return a.EndpointID == "ep_busy" && a.Outcome == records.OutcomeDelivered
		}) == busy
	})
	if _, defers := e.retrier.counts(); defers != 0 {
		t.Fatalf("%d deliveries deferred, want none", defers)
	}
	if got := testenv.Value(t, reg, "hookstream_sender_deferrals_total", "reason", "queue_full"); got != 0 {
		t.Fatalf("queue_full deferrals = %v, want 0", got)
	}
}

// A full lane's overflow is deferred only to spare another endpoint's records of its partition.
// An endpoint alone on its partition, however slow (here 20 ms a request, one at a time: a slot
// frees every 20 ms, slower than the 5 ms slot wait), has its burst wait for room: a deferral
// would only send it through a retry tier, where it comes back later and no one has gained. The
// same endpoint with another endpoint's records behind it on the partition does have its
// overflow deferred, so the other's flow on.
func TestLoneSlowEndpointWaitsRatherThanDefers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const burst = 60
	e.endpoint("ep_slow", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 1 })
	e.rcv.handle("ep_slow", func(w http.ResponseWriter, _ *http.Request, _ []byte) { time.Sleep(20 * time.Millisecond) })
	e.endpoint("ep_other", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 4 })
	cfg, reg := e.meteredConfig()
	cfg.QueueSize = 4
	cfg.InitialInFlight = 1
	cfg.MaxSlotWait, cfg.MaxIntakeWait = 5*time.Millisecond, 200*time.Millisecond
	e.start(cfg)

	ds := deliveries(burst, "p_a", "ep_slow", "customer.created")
	e.deliver(0, ds...)
	waitFor(t, 60*time.Second, "the lone slow endpoint's burst", func() bool {
		return e.attempts.count(func(a records.Attempt) bool {
			return a.EndpointID == "ep_slow" && a.Outcome == records.OutcomeDelivered
		}) == burst
	})
	if got := testenv.Value(t, reg, "hookstream_sender_deferrals_total", "reason", "queue_full"); got != 0 {
		t.Fatalf("queue_full deferrals of an endpoint alone on its partition = %v, want 0", got)
	}

	// Now the same burst with another endpoint's records behind it on the partition.
	ds = deliveries(burst, "p_a", "ep_slow", "customer.created")
	const other = 20
	ds = append(ds, deliveries(other, "p_a", "ep_other", "customer.created")...)
	e.deliver(0, ds...)
	waitFor(t, 30*time.Second, "the other endpoint's records behind the slow burst", func() bool {
		return len(e.rcv.got("ep_other")) == other
	})
	if got := testenv.Value(t, reg, "hookstream_sender_deferrals_total", "reason", "queue_full"); got == 0 {
		t.Fatal("no queue_full deferral: the slow endpoint's burst held back the other endpoint's records")
	}
}

// A hanging endpoint alone on its partition has its overflow deferred all the same (a stalled
// lane defers even with no neighbour behind it), so another endpoint's records on another
// partition are still read and delivered. Without that rule the hanging endpoint's partition
// took the whole buffer (its fetching paused at half of it, but the client hands out what it had
// fetched already), intake stopped at the cap, and the other endpoint got nothing until the
// hanging requests timed out (make bench e in dev: the hot endpoint stalled for 10 s).
func TestLoneHangingEndpointDoesNotTakeTheBuffer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_hang", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 2 })
	e.rcv.handle("ep_hang", func(w http.ResponseWriter, r *http.Request, _ []byte) { <-r.Context().Done() })
	e.endpoint("ep_other", "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 4 })
	cfg, reg := e.meteredConfig()
	cfg.MaxBuffered = 400
	cfg.QueueSize = 16
	// The hanging requests stay in flight for the whole test: without the rule, the other
	// endpoint's records would wait for their timeout, past the test's wait below.
	cfg.Egress.RequestTimeout = 3 * time.Minute
	cfg.ShutdownGrace = time.Second
	e.start(cfg)

	ds := deliveries(800, "p_a", "ep_hang", "customer.created")
	e.deliver(0, ds...)
	waitFor(t, 30*time.Second, "the hanging endpoint's requests out", func() bool {
		now, _ := e.rcv.concurrency("ep_hang")
		return now == 2
	})
	const other = 50
	ds = deliveries(other, "p_a", "ep_other", "customer.created")
	e.deliver(1, ds...)
	// Seconds when it works; 90 s leaves room for a busy CI machine under the race detector.
	waitFor(t, 90*time.Second, "the other endpoint's records on another partition", func() bool {
		return len(e.rcv.got("ep_other")) == other
	})
	if got := testenv.Value(t, reg, "hookstream_sender_deferrals_total", "reason", "queue_full"); got == 0 {
		t.Fatal("the hanging endpoint's overflow was not deferred")
	}
	if d := e.retrier.deferred("ep_other"); len(d) != 0 {
		t.Fatalf("%d deliveries of the other endpoint deferred", len(d))
	}
}
