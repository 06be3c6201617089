package admin

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/recorder"
	"github.com/hookstream/hookstream/retrytopics"
	"github.com/hookstream/hookstream/sender"
	"github.com/hookstream/hookstream/webhook"
)

// receipt is one request a local receiver got.
type receipt struct {
	path   string
	header http.Header
	body   []byte
}

// localReceiver is an HTTP receiver on 127.0.0.1 that hands each request to the test by its
// webhook-id.
type localReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	byID map[string]chan receipt
}

func newLocalReceiver(t *testing.T) *localReceiver {
	rx := &localReceiver{byID: map[string]chan receipt{}}
	rx.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rx.ch(r.Header.Get("webhook-id")) <- receipt{path: r.URL.Path, header: r.Header.Clone(), body: body}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rx.srv.Close)
	return rx
}

func (rx *localReceiver) ch(id string) chan receipt {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	c, ok := rx.byID[id]
	if !ok {
		c = make(chan receipt, 8) // a redelivery of an event may come too
		rx.byID[id] = c
	}
	return c
}

// first waits for the first request carrying event id.
func (rx *localReceiver) first(t *testing.T, id string) receipt {
	t.Helper()
	select {
	case r := <-rx.ch(id):
		return r
	case <-time.After(time.Minute):
		t.Fatalf("event %s did not arrive within a minute", id)
		return receipt{}
	}
}

func (rx *localReceiver) url(path string) string { return rx.srv.URL + path }

// startSender runs the sender, its endpoint view and its retry scheduler against the env's
// Kafka until the test ends.
func (e *env) startSender(t *testing.T, port int) {
	t.Helper()
	view, err := endpoints.NewView(endpoints.ViewConfig{Brokers: e.Kafka.Brokers, Topic: e.Names.Endpoints, Logger: e.cfg.Logger, Name: "sender"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, "view.Run", view.Run)
	rcfg := retrytopics.DefaultConfig()
	rcfg.Brokers, rcfg.Prefix, rcfg.Logger, rcfg.Registerer = e.Kafka.Brokers, e.Kafka.Prefix, e.cfg.Logger, prometheus.NewRegistry()
	sched, err := retrytopics.NewScheduler(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sched.Close)
	cfg := sender.DefaultConfig()
	cfg.Brokers, cfg.Prefix, cfg.SecretKeys, cfg.Logger = e.Kafka.Brokers, e.Kafka.Prefix, e.key, e.cfg.Logger
	cfg.Registerer = prometheus.NewRegistry()
	cfg.Egress.AllowHTTP = true
	cfg.Egress.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Egress.AllowedPorts = []int{port}
	cfg.CommitInterval = 100 * time.Millisecond
	cfg.ShutdownGrace = 2 * time.Second
	s, err := sender.New(cfg, view, sched)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, "sender.Run", s.Run)
}

// loopbackEgress lets the API register http://127.0.0.1:port URLs, as dev does.
func loopbackEgress(t *testing.T, port int) func(*Config) {
	return func(c *Config) {
		ecfg := egress.DefaultConfig()
		ecfg.AllowHTTP = true
		ecfg.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		ecfg.AllowedPorts = []int{port}
		g, err := egress.New(ecfg)
		if err != nil {
			t.Fatal(err)
		}
		c.Egress = g
		c.Limits.TestEventsPerMinute = 1000
	}
}

// TestReadYourWrites (design.md section 7): a change to an endpoint is in effect for every test event sent
// after the API answered it, however soon, though the change reaches the sender through cdc and
// the endpoints topic: rotate then test arrives signed with both secrets; PATCH url then test
// arrives at the new URL; disable then test is refused with 409. A hundred rounds, none stale.
func TestReadYourWrites(t *testing.T) {
	t.Parallel()
	rx := newLocalReceiver(t)
	u, _ := url.Parse(rx.srv.URL)
	port, _ := strconv.Atoi(u.Port())
	e := newEnv(t, loopbackEgress(t, port))
	e.partner("acme")
	e.startCDC()
	e.startSender(t, port)

	var created createdEndpoint
	e.must(201, operatorToken, "POST", "/v1/partners/acme/endpoints", map[string]any{
		"url": rx.url("/start"), "event_types": []string{"customer.*"},
	}).json(t, &created)
	ep := "/v1/partners/acme/endpoints/" + created.ID
	current := created.Secret

	test := func() (string, response) {
		t.Helper()
		r := e.do(operatorToken, "POST", ep+"/test", nil)
		var acc testAccepted
		if r.Status == http.StatusAccepted {
			r.json(t, &acc)
		}
		return acc.EventID, r
	}
	for round := range 100 {
		// Rotate, then test at once: both the new and the previous secret sign it.
		e.must(200, operatorToken, "POST", ep+"/secret/end-rotation", nil)
		var rot rotationResponse
		e.must(200, operatorToken, "POST", ep+"/secret/rotate", nil).json(t, &rot)
		id, r := test()
		if r.Status != http.StatusAccepted {
			t.Fatalf("round %d: test after rotate: %s", round, r)
		}
		got := rx.first(t, id)
		sigs := strings.Fields(got.header.Get("webhook-signature"))
		if len(sigs) != 2 || webhook.Verify(rot.Secret, got.header, got.body) != nil || webhook.Verify(current, got.header, got.body) != nil {
			t.Fatalf("round %d: test after rotate signed %d times; new secret verifies: %v, previous: %v (stale configuration)",
				round, len(sigs), webhook.Verify(rot.Secret, got.header, got.body), webhook.Verify(current, got.header, got.body))
		}
		current = rot.Secret

		// Change the URL, then test at once: it goes to the new URL.
		path := "/round-" + strconv.Itoa(round)
		e.must(200, operatorToken, "PATCH", ep, map[string]string{"url": rx.url(path)})
		id, r = test()
		if r.Status != http.StatusAccepted {
			t.Fatalf("round %d: test after PATCH: %s", round, r)
		}
		if got := rx.first(t, id); got.path != path {
			t.Fatalf("round %d: test after PATCH url went to %s, want %s (stale configuration)", round, got.path, path)
		}

		// Disable, then test: refused, nothing sent.
		e.must(200, operatorToken, "POST", ep+"/disable", map[string]string{"reason": "round " + strconv.Itoa(round)})
		if _, r := test(); r.Status != http.StatusConflict {
			t.Fatalf("round %d: test after disable: %s, want 409", round, r)
		}
		e.must(200, operatorToken, "POST", ep+"/enable", nil)
	}
	// Nothing was sent while the endpoint was disabled, and nothing went to an old URL: every
	// request the receiver got was one the test waited for, at its URL.
	rx.mu.Lock()
	defer rx.mu.Unlock()
	if n := len(rx.byID); n != 200 {
		ids := make([]string, 0, n)
		for id := range rx.byID {
			ids = append(ids, id)
		}
		b, _ := json.Marshal(ids)
		t.Fatalf("the receiver got %d event ids, want the 200 test events: %s", n, b)
	}
}

// TestEndpointHealthFromTheSender (design.md section 10): the circuit that opens in the sender reaches the
// endpoint resource through the attempt records and the recorder, with its next probe, and a
// delivery waiting on it shows next_attempt_at no earlier than the probe.
func TestEndpointHealthFromTheSender(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	u, _ := url.Parse(failing.URL)
	port, _ := strconv.Atoi(u.Port())
	e := newEnv(t, loopbackEgress(t, port))
	e.partner("acme")
	e.startCDC()
	e.startSender(t, port)
	rcfg := recorder.DefaultConfig()
	rcfg.Brokers, rcfg.Prefix, rcfg.Logger, rcfg.Registerer = e.Kafka.Brokers, e.Kafka.Prefix, e.cfg.Logger, prometheus.NewRegistry()
	rec, err := recorder.New(rcfg, e.DB.Pool)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, "recorder.Run", rec.Run)

	var created createdEndpoint
	e.must(201, operatorToken, "POST", "/v1/partners/acme/endpoints", map[string]any{
		"url": failing.URL + "/hooks", "event_types": []string{"customer.*"},
	}).json(t, &created)
	ep := "/v1/partners/acme/endpoints/" + created.ID
	// Five failures in a row open the circuit (sender.DefaultConfig's BreakerFailures).
	var last testAccepted
	for range 5 {
		e.must(202, operatorToken, "POST", ep+"/test", nil).json(t, &last)
	}
	var v endpointView
	deadline := time.Now().Add(time.Minute)
	for {
		e.must(200, operatorToken, "GET", ep, nil).json(t, &v)
		if v.Health.Circuit == "open" {
			break
		}
		if time.Now().After(deadline) {
			rows, _ := e.DB.Pool.Query(context.Background(), `SELECT delivery_id || ' ' || attempt_no || ' ' || started_at || ' ' || coalesce(status, 0) || ' ' || coalesce(error_category, '') FROM delivery_attempt ORDER BY started_at`)
			got, _ := pgx.CollectRows(rows, pgx.RowTo[string])
			t.Fatalf("the endpoint's health after five failed attempts: %+v, want the circuit open; attempts %q", v.Health, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h := v.Health
	if h.NextProbeAt == nil || h.LastAttemptAt == nil || h.LastSuccessAt != nil || h.FailingSince == nil ||
		!h.NextProbeAt.After(h.LastAttemptAt.Time) {
		t.Fatalf("health of the open circuit: %+v", h)
	}
	// The last test's retry is due 5 s after its attempt, the probe 10 s after: it waits for the probe.
	var d deliveryView
	for {
		e.must(200, operatorToken, "GET", "/v1/partners/acme/deliveries/"+last.DeliveryID, nil).json(t, &d)
		if d.State == "retrying" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d.State != "retrying" || d.NextAttemptAt == nil || d.NextAttemptAt.Before(h.NextProbeAt.Time) {
		t.Fatalf("delivery %s %s, next_attempt_at %v; want retrying, not before the probe at %v", d.DeliveryID, d.State, d.NextAttemptAt, h.NextProbeAt)
	}
}
