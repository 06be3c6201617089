package sender_test

import (
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/sender"
	"github.com/hookstream/hookstream/webhook"
)

// env is one test's Kafka, topics, endpoint view, HTTP receiver and retrier double.
type env struct {
	t        testing.TB
	kafka    *testenv.Kafka
	names    topics.Names
	key      secretbox.Keyring
	view     *endpoints.View
	producer *kgo.Client
	rcv      *receiver
	retrier  *fakeRetrier
	attempts *attemptLog
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := newQuietEnv(t)
	e.attempts = readAttempts(t, e)
	return e
}

// newQuietEnv is newEnv without the reader of the attempts topic, for benchmarks that must not
// share the CPU with it while they measure; they call readAttempts afterwards.
func newQuietEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, kafka: testenv.NewKafka(t), retrier: &fakeRetrier{delay: time.Minute}}
	e.names = e.kafka.CreateTopics(t)
	_, e.key = testenv.SecretKey(t)
	// Records go to the partition the test names, so tests can put endpoints side by side.
	e.producer = e.kafka.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var err error
	e.view, err = endpoints.NewView(endpoints.ViewConfig{Brokers: e.kafka.Brokers, Topic: e.names.Endpoints, Logger: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.view.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	e.rcv = newReceiver(t)
	return e
}

// config is the sender configuration of the test: loopback HTTP to the receiver allowed, fast
// commits and a short shutdown grace.
func (e *env) config() sender.Config {
	cfg := sender.DefaultConfig()
	cfg.Base = e.kafka.Base(e.t, prometheus.NewRegistry())
	cfg.SecretKeys = e.key
	cfg.Egress.AllowHTTP = true
	cfg.Egress.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Egress.AllowedPorts = []int{e.rcv.port}
	cfg.Egress.RequestTimeout = 5 * time.Second
	cfg.CommitInterval = 100 * time.Millisecond
	cfg.ShutdownGrace = 2 * time.Second
	return cfg
}

// meteredConfig is config with its own registry for the sender's metrics, which the test reads.
func (e *env) meteredConfig() (sender.Config, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	cfg := e.config()
	cfg.Registerer = reg
	return cfg, reg
}

// start runs a sender until the test ends or stop is called.
func (e *env) start(cfg sender.Config) (stop func()) {
	e.t.Helper()
	s, err := sender.New(cfg, e.view, e.retrier)
	if err != nil {
		e.t.Fatal(err)
	}
	return testenv.Go(e.t, "sender.Run", s.Run)
}

// endpoint publishes an active endpoint of partner, subscribed to customer.*, with one fresh
// secret, and returns the secret as shown to the partner. Options adjust the record.
func (e *env) endpoint(id, partner string, opts ...func(*records.Endpoint)) string {
	e.t.Helper()
	secret, err := webhook.NewSecret()
	if err != nil {
		e.t.Fatal(err)
	}
	now := time.Now().UTC()
	ep := records.Endpoint{
		V: records.EndpointVersion, ID: id, PartnerID: partner, URL: e.rcv.url(id),
		Status: "active", EventTypes: []string{"customer.*"}, SchemaVersion: 1,
		CreatedAt: now, UpdatedAt: now, Version: 1,
		Secrets: []records.Secret{e.seal(id, "sec_1", secret, now.Add(-time.Hour), nil)},
	}
	for _, o := range opts {
		o(&ep)
	}
	e.putEndpoint(ep)
	return secret
}

// seal encrypts a secret for the endpoints topic as the admin API does.
func (e *env) seal(endpointID, secretID, secret string, created time.Time, expires *time.Time) records.Secret {
	e.t.Helper()
	c, err := e.key.Seal([]byte(secret), secretbox.AAD(endpointID, secretID))
	if err != nil {
		e.t.Fatal(err)
	}
	return records.Secret{ID: secretID, Ciphertext: c, CreatedAt: created, ExpiresAt: expires}
}

// putEndpoint writes an endpoint record and waits until the view holds it.
func (e *env) putEndpoint(ep records.Endpoint) {
	e.t.Helper()
	v, err := json.Marshal(ep)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.producer.ProduceSync(ctx, &kgo.Record{Topic: e.names.Endpoints, Key: []byte(ep.ID), Value: v, Partition: 0}).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.view.CatchUp(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// delivery builds the first attempt of a new event of partner at endpointID. The body's odd
// spacing proves that the exact bytes are signed and sent.
func delivery(partner, endpointID, eventType string) records.Delivery {
	id := outbox.NewEventID()
	body := fmt.Sprintf(`{"event_id":"%s",  "type":"%s", "partner_id":"%s","occurred_at":"2026-03-01T12:00:00Z","subject":{"type":"customer","id":"cus_1"},"schema_version":1,"data":{"n":  1}}`,
		id, eventType, partner)
	return records.Delivery{
		V: records.DeliveryVersion, DeliveryID: records.DeliveryID(id, endpointID), EventID: id,
		EndpointID: endpointID, PartnerID: partner, EventType: eventType, AttemptNo: 1,
		Trigger: records.TriggerInitial, Body: []byte(body), CreatedAt: time.Now().UTC(),
	}
}

// deliveries is n deliveries of fresh events to one endpoint (see delivery).
func deliveries(n int, partner, endpointID, eventType string) []records.Delivery {
	ds := make([]records.Delivery, n)
	for i := range ds {
		ds[i] = delivery(partner, endpointID, eventType)
	}
	return ds
}

// deliver produces delivery records to one partition of the deliveries topic, in order, and
// returns their offsets.
func (e *env) deliver(partition int32, ds ...records.Delivery) []int64 {
	e.t.Helper()
	var rs []*kgo.Record
	for _, d := range ds {
		v, err := json.Marshal(d)
		if err != nil {
			e.t.Fatal(err)
		}
		rs = append(rs, &kgo.Record{Topic: e.names.Deliveries, Key: []byte(d.EndpointID), Value: v, Partition: partition})
	}
	return e.produceRaw(rs...)
}

func (e *env) produceRaw(rs ...*kgo.Record) []int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := e.producer.ProduceSync(ctx, rs...)
	if err := res.FirstErr(); err != nil {
		e.t.Fatal(err)
	}
	offsets := make([]int64, len(res))
	for i, r := range res {
		offsets[i] = r.Record.Offset
	}
	return offsets
}

// committed returns the sender group's committed offset of a deliveries partition (-1: none).
func (e *env) committed(cfg sender.Config, partition int32) int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	group := cfg.Group
	if group == "" {
		group = cfg.Prefix + ".sender"
	}
	offsets, err := kadm.NewClient(e.producer).FetchOffsets(ctx, group)
	if err != nil {
		e.t.Fatal(err)
	}
	o, ok := offsets.Lookup(e.names.Deliveries, partition)
	if !ok {
		return -1
	}
	return o.At
}

// waitFor polls cond until it holds or the timeout passes (testenv.Eventually).
var waitFor = testenv.Eventually

// --- the attempts topic ---

type attemptLog struct {
	mu        sync.Mutex
	all       []records.Attempt
	delivered int
}

// readAttempts follows the attempts topic from the start for the whole test.
func readAttempts(t testing.TB, e *env) *attemptLog {
	l := &attemptLog{}
	e.kafka.Follow(t, e.names.Attempts, func(fs kgo.Fetches) {
		fs.EachRecord(func(r *kgo.Record) {
			var a records.Attempt
			if err := json.Unmarshal(r.Value, &a); err != nil || string(r.Key) != a.DeliveryID {
				t.Errorf("attempt record %s (key %s): %v", r.Value, r.Key, err)
				return
			}
			l.mu.Lock()
			l.all = append(l.all, a)
			if a.Outcome == records.OutcomeDelivered {
				l.delivered++
			}
			l.mu.Unlock()
		})
	}, kgo.FetchMaxWait(200*time.Millisecond))
	return l
}

// of returns the attempts of one delivery in the order they were produced.
func (l *attemptLog) of(deliveryID string) []records.Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []records.Attempt
	for _, a := range l.all {
		if a.DeliveryID == deliveryID {
			out = append(out, a)
		}
	}
	return out
}

func (l *attemptLog) deliveredCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.delivered
}

func (l *attemptLog) count(match func(records.Attempt) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.all {
		if match(a) {
			n++
		}
	}
	return n
}

// waitOne waits for the first attempt of a delivery and returns it.
func (e *env) waitAttempt(d records.Delivery) records.Attempt {
	e.t.Helper()
	waitFor(e.t, 30*time.Second, "an attempt of "+d.DeliveryID, func() bool { return len(e.attempts.of(d.DeliveryID)) > 0 })
	return e.attempts.of(d.DeliveryID)[0]
}

// waitDelivered waits for the first attempt of each delivery and fails unless it delivered.
func (e *env) waitDelivered(ds ...records.Delivery) {
	e.t.Helper()
	for _, d := range ds {
		if a := e.waitAttempt(d); a.Outcome != records.OutcomeDelivered {
			e.t.Fatalf("first attempt of %s: %+v, want delivered", d.DeliveryID, a)
		}
	}
}

// --- the HTTP receiver ---

// request is what the receiver saw of one request.
type request struct {
	endpoint string
	header   http.Header
	body     []byte
	at       time.Time
}

// receiver is a webhook receiver on 127.0.0.1 serving every endpoint of a test under
// /ep/<endpoint id>. It records each request and the concurrency each endpoint sees.
type receiver struct {
	srv  *httptest.Server
	port int

	mu        sync.Mutex
	handlers  map[string]func(w http.ResponseWriter, r *http.Request, body []byte)
	requests  []request
	active    map[string]int
	maxActive map[string]int
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{handlers: map[string]func(http.ResponseWriter, *http.Request, []byte){}, active: map[string]int{}, maxActive: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	u, _ := url.Parse(rc.srv.URL)
	rc.port, _ = strconv.Atoi(u.Port())
	return rc
}

func (rc *receiver) url(endpointID string) string { return rc.srv.URL + "/ep/" + endpointID }

// handle sets how the receiver answers for one endpoint; the default is 200.
func (rc *receiver) handle(endpointID string, h func(w http.ResponseWriter, r *http.Request, body []byte)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.handlers[endpointID] = h
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/ep/")
	body, _ := io.ReadAll(r.Body) // read fully: the server then notices a client that leaves
	rc.mu.Lock()
	rc.requests = append(rc.requests, request{endpoint: id, header: r.Header.Clone(), body: body, at: time.Now()})
	rc.active[id]++
	rc.maxActive[id] = max(rc.maxActive[id], rc.active[id])
	h := rc.handlers[id]
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		rc.active[id]--
		rc.mu.Unlock()
	}()
	if h == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	h(w, r, body)
}

// got returns the requests an endpoint received, in arrival order.
func (rc *receiver) got(endpointID string) []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []request
	for _, r := range rc.requests {
		if r.endpoint == endpointID {
			out = append(out, r)
		}
	}
	return out
}

func (rc *receiver) total() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.requests)
}

func (rc *receiver) concurrency(endpointID string) (now, peak int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.active[endpointID], rc.maxActive[endpointID]
}

// eventIDs returns the webhook-id of each request an endpoint received, in arrival order.
func (rc *receiver) eventIDs(endpointID string) []string {
	var out []string
	for _, r := range rc.got(endpointID) {
		out = append(out, r.header.Get("webhook-id"))
	}
	return out
}

// --- the retrier double ---

type scheduleCall struct {
	d          records.Delivery
	a          records.Attempt
	retryAfter time.Duration
	next       time.Time
	policy     *retrypolicy.Policy
}

type deferCall struct {
	d     records.Delivery
	after time.Duration
}

// fakeRetrier records what the sender hands over. Schedule answers now + delay (or the
// Retry-After when longer) and final when isFinal says so.
type fakeRetrier struct {
	mu        sync.Mutex
	delay     time.Duration
	isFinal   func(records.Delivery) bool
	schedules []scheduleCall
	defers    []deferCall
}

func (f *fakeRetrier) Schedule(_ context.Context, d records.Delivery, a records.Attempt, retryAfter time.Duration, policy *retrypolicy.Policy) (time.Time, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	next := time.Now().Add(max(f.delay, retryAfter)).Truncate(time.Millisecond)
	final := f.isFinal != nil && f.isFinal(d)
	if final {
		next = time.Time{}
	}
	f.schedules = append(f.schedules, scheduleCall{d: d, a: a, retryAfter: retryAfter, next: next, policy: policy})
	return next, final, nil
}

func (f *fakeRetrier) Defer(_ context.Context, d records.Delivery, after time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.defers = append(f.defers, deferCall{d: d, after: after})
	return nil
}

// Next answers delay, and final when isFinal says so, as Schedule does.
func (f *fakeRetrier) Next(d records.Delivery, retryAfter time.Duration, _ *retrypolicy.Policy) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.isFinal != nil && f.isFinal(d) {
		return 0, true
	}
	return max(f.delay, retryAfter), false
}

func (f *fakeRetrier) counts() (schedules, defers int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.schedules), len(f.defers)
}

func (f *fakeRetrier) scheduled(endpointID string) []scheduleCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []scheduleCall
	for _, c := range f.schedules {
		if c.d.EndpointID == endpointID {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeRetrier) deferred(endpointID string) []deferCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []deferCall
	for _, c := range f.defers {
		if c.d.EndpointID == endpointID {
			out = append(out, c)
		}
	}
	return out
}

// eventIDOf reads the event id of an envelope.
func eventIDOf(t testing.TB, body []byte) string {
	t.Helper()
	var head struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		t.Fatal(err)
	}
	return head.EventID
}

// rawRecord is a deliveries record with any value, on partition 0.
func rawRecord(e *env, key string, value []byte) *kgo.Record {
	return &kgo.Record{Topic: e.names.Deliveries, Key: []byte(key), Value: value, Partition: 0}
}

// readDeadLetters reads want records of the dlq topic.
func readDeadLetters(t testing.TB, e *env, want int) []records.DeadLetter {
	t.Helper()
	cl := e.kafka.Client(t, kgo.ConsumeTopics(e.names.DLQ), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []records.DeadLetter
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d dead letters of %d", len(out), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var dl records.DeadLetter
			if err := json.Unmarshal(r.Value, &dl); err != nil {
				t.Fatalf("dead letter %s: %v", r.Value, err)
			}
			out = append(out, dl)
		})
	}
	return out
}
