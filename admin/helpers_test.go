package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/recorder"
	"github.com/hookstream/hookstream/replay"
)

const (
	operatorToken = "operator-token-for-the-admin-tests"
	// A public address the fake resolver gives hook hosts; nothing ever connects to it.
	publicV4 = "93.184.216.34"
)

// fakeResolver answers DNS from a table, so URL checks need no network.
type fakeResolver struct {
	answers map[string][]netip.Addr
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := r.answers[strings.TrimSuffix(strings.ToLower(host), ".")]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

func testResolver() *fakeResolver {
	a := func(s ...string) []netip.Addr {
		out := make([]netip.Addr, len(s))
		for i, v := range s {
			out[i] = netip.MustParseAddr(v)
		}
		return out
	}
	return &fakeResolver{answers: map[string][]netip.Addr{
		"hooks.example.com":           a(publicV4),
		"other.example.com":           a(publicV4),
		"private.example.com":         a("192.168.1.1"),
		"mixed.example.com":           a(publicV4, "10.0.0.1"),
		"mapped-loopback.example.com": a("::ffff:127.0.0.1"),
		"imds.example.com":            a("169.254.169.254"),
		"nat64.example.com":           a("64:ff9b::a9fe:a9fe"),
	}}
}

// testGuard is the default egress guard over testResolver, so URL checks need no network.
func testGuard(t testing.TB) *egress.Guard {
	t.Helper()
	ecfg := egress.DefaultConfig()
	ecfg.Resolver = testResolver()
	guard, err := egress.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	return guard
}

// env is one test's database, Kafka, topics and API.
type env struct {
	*testenv.Env
	t    testing.TB
	key  secretbox.Keyring
	logs *testenv.LogBuffer
	reg  *prometheus.Registry
	api  *API
	cfg  Config
}

func newEnv(t testing.TB, change ...func(*Config)) *env {
	t.Helper()
	e := &env{Env: testenv.NewEnv(t), t: t, logs: &testenv.LogBuffer{}}
	_, e.key = testenv.SecretKey(t)
	cfg := DefaultConfig()
	cfg.Brokers, cfg.Prefix = e.Kafka.Brokers, e.Kafka.Prefix
	cfg.OperatorToken, cfg.SecretKeys, cfg.Egress = operatorToken, e.key, testGuard(t)
	cfg.Logger = slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.JobPollInterval = 100 * time.Millisecond
	for _, c := range change {
		c(&cfg)
	}
	e.cfg = cfg
	e.api = e.newAPI()
	return e
}

// newAPI builds another API over the same database and Kafka (a restarted process).
func (e *env) newAPI() *API {
	e.t.Helper()
	e.reg = prometheus.NewRegistry()
	cfg := e.cfg
	cfg.Registerer = e.reg
	a, err := New(cfg, e.DB.Pool)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(a.Close)
	return a
}

// responseLog calls the API as one caller, as must does, and keeps every response body, for
// tests of what the responses show of a secret.
type responseLog struct {
	e      *env
	key    string
	bodies []string
}

func (l *responseLog) do(want int, method, path string, body any) response {
	l.e.t.Helper()
	r := l.e.must(want, l.key, method, path, body)
	l.bodies = append(l.bodies, string(r.Body))
	return r
}

// run runs the replay-job runner of a until the returned stop is called or the test ends.
func run(t testing.TB, a *API) (stop func()) {
	return testenv.Go(t, "Run", a.Run)
}

type response struct {
	Status int
	Body   []byte
	Header http.Header
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("response %d is not JSON: %v\n%s", r.Status, err, r.Body)
	}
}

func (r response) String() string { return fmt.Sprintf("%d %s", r.Status, r.Body) }

// do calls the API's handler directly, as a client would through the server.
func (e *env) do(token, method, path string, body any) response {
	return call(e.api, token, method, path, body)
}

func call(a *API, token, method, path string, body any) response {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	return response{Status: rec.Code, Body: rec.Body.Bytes(), Header: rec.Header()}
}

func (e *env) must(want int, token, method, path string, body any) response {
	e.t.Helper()
	r := e.do(token, method, path, body)
	if r.Status != want {
		e.t.Fatalf("%s %s = %s, want %d", method, path, r, want)
	}
	return r
}

// partner creates a partner and an API key of it.
func (e *env) partner(id string) (key string) {
	e.t.Helper()
	e.must(201, operatorToken, "POST", "/v1/partners", map[string]string{"id": id, "name": "Partner " + id})
	var k createdAPIKey
	e.must(201, operatorToken, "POST", "/v1/partners/"+id+"/api-keys", nil).json(e.t, &k)
	return k.Key
}

// endpoint creates an endpoint of pid subscribed to types and returns it with its secret.
func (e *env) endpoint(pid string, types ...string) createdEndpoint {
	e.t.Helper()
	if len(types) == 0 {
		types = []string{"*"}
	}
	var ep createdEndpoint
	e.must(201, operatorToken, "POST", "/v1/partners/"+pid+"/endpoints", map[string]any{
		"url": "https://hooks.example.com/" + pid, "event_types": types,
	}).json(e.t, &ep)
	return ep
}

// startCDC runs cdc, with its default catalog check, on the test's database and Kafka until
// the test ends.
func (e *env) startCDC() {
	e.t.Helper()
	cfg := cdc.DefaultConfig()
	cfg.DatabaseURL, cfg.Brokers, cfg.Prefix, cfg.Slot = e.DB.URL, e.Kafka.Brokers, e.Kafka.Prefix, e.DB.Name
	cfg.Logger = e.cfg.Logger
	c, err := cdc.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	testenv.Go(e.t, "cdc.Run", c.Run)
}

// appendEvent writes an event to the outbox of pid and returns its id.
func (e *env) appendEvent(pid, typ string, data string) string {
	e.t.Helper()
	return e.DB.AppendEvent(context.Background(), e.t, outbox.Event{
		PartnerID: pid, Type: typ, Subject: outbox.Subject{Type: "customer", ID: "cus_1"}, Data: json.RawMessage(data),
	})
}

// seedDeliveries writes, set-wise, one delivery per event id at endpoint eid with attempts
// 1..attempts recorded and the given state, created at created[i].
func (e *env) seedDeliveries(pid, eid, typ, state string, attempts int, eventIDs []string, created []time.Time) []string {
	e.t.Helper()
	ids := make([]string, len(eventIDs))
	for i, ev := range eventIDs {
		ids[i] = records.DeliveryID(ev, eid)
	}
	ctx := context.Background()
	_, err := e.DB.Pool.Exec(ctx, `INSERT INTO delivery (delivery_id, event_id, endpoint_id, partner_id, event_type, state,
			attempt_count, last_status, created_at, updated_at)
		SELECT u.id, u.ev, $3, $4, $5, $6, $7, 500, u.created, u.created FROM unnest($1::text[], $2::text[], $8::timestamptz[]) AS u(id, ev, created)`,
		ids, eventIDs, eid, pid, typ, state, attempts, created)
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = e.DB.Pool.Exec(ctx, `INSERT INTO delivery_attempt (delivery_id, attempt_no, trigger, started_at, status, latency_ms, error_category)
		SELECT d, n, CASE WHEN n = 1 THEN 'initial' ELSE 'retry' END, now(), 500, 12, 'http_status'
		FROM unnest($1::text[]) AS d, generate_series(1, $2) AS n`, ids, attempts)
	if err != nil {
		e.t.Fatal(err)
	}
	return ids
}

// seedOutbox writes n events of pid to the outbox set-wise and returns their ids in order.
func (e *env) seedOutbox(pid, typ string, n int) []string {
	e.t.Helper()
	return e.DB.SeedOutbox(e.t, pid, typ, n)
}

// envelopeRecord is an events-topic record as cdc writes it (cdc/session.go publishEvent).
func envelopeRecord(topic string, partitions int32, env outbox.Envelope, lsn records.LSN, commit time.Time) *kgo.Record {
	body, err := replay.MarshalEnvelope(env)
	if err != nil {
		panic(err)
	}
	return &kgo.Record{
		Topic: topic, Partition: records.EventPartition(env.PartnerID, partitions), Key: []byte(env.EventID), Value: body,
		Headers: []kgo.RecordHeader{
			{Key: records.HeaderPartnerID, Value: []byte(env.PartnerID)},
			{Key: records.HeaderType, Value: []byte(env.Type)},
			{Key: records.HeaderSchemaVersion, Value: []byte(fmt.Sprint(env.SchemaVersion))},
			{Key: records.HeaderCommitLSN, Value: []byte(lsn.String())},
			{Key: records.HeaderCommitTime, Value: []byte(commit.UTC().Format(time.RFC3339Nano))},
		},
	}
}

func testEnvelope(pid, typ string, n int) outbox.Envelope {
	return outbox.Envelope{
		EventID: outbox.NewEventID(), Type: typ, OccurredAt: time.Now().UTC().Truncate(time.Microsecond), PartnerID: pid,
		Subject: outbox.Subject{Type: "customer", ID: fmt.Sprintf("cus_%d", n)}, SchemaVersion: 1,
		Data: json.RawMessage(fmt.Sprintf(`{"customer_id":"cus_%d","n":%d}`, n, n)),
	}
}

// produceEvents writes records to the events topic in one batch.
func (e *env) produceEvents(recs []*kgo.Record) {
	e.t.Helper()
	cl := e.Kafka.Client(e.t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.MaxBufferedRecords(len(recs)+1))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		e.t.Fatalf("produce events: %v", err)
	}
}

// deliveries reads the deliveries topic from the start until want records arrived, then a
// little longer to catch extras.
func (e *env) deliveries(want int, timeout time.Duration) []records.Delivery {
	e.t.Helper()
	return e.Kafka.ReadDeliveries(e.t, e.Names.Deliveries, want, timeout)
}

// startRecorder runs a recorder on the test's topics and database until the test ends, with its
// metrics in a registry of its own and no logs.
func (e *env) startRecorder() {
	e.t.Helper()
	cfg := recorder.DefaultConfig()
	cfg.Brokers, cfg.Prefix, cfg.Registerer = e.Kafka.Brokers, e.Kafka.Prefix, prometheus.NewRegistry()
	cfg.Logger = slog.New(slog.DiscardHandler)
	r, err := recorder.New(cfg, e.DB.Pool)
	if err != nil {
		e.t.Fatal(err)
	}
	testenv.Go(e.t, "recorder", r.Run)
}

// produceGone writes the attempts record of a first attempt, started at startedAt, of a new
// event at endpoint eid that the receiver answered 410 Gone, and returns its delivery id.
func (e *env) produceGone(eid string, startedAt time.Time) string {
	e.t.Helper()
	evt := outbox.NewEventID()
	id := records.DeliveryID(evt, eid)
	a, _ := json.Marshal(records.Attempt{V: records.AttemptVersion, DeliveryID: id, EventID: evt,
		EndpointID: eid, PartnerID: "acme", EventType: "customer.created", AttemptNo: 1, Trigger: records.TriggerInitial,
		StartedAt: startedAt, Status: 410, LatencyMS: 12, Outcome: records.OutcomeFailed, ErrorCategory: records.CategoryHTTPStatus})
	rec := &kgo.Record{Topic: e.Names.Attempts, Key: []byte(id), Value: a}
	if err := e.Kafka.Client(e.t).ProduceSync(context.Background(), rec).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// endOffsets sums the end offsets of topic: grows with every record produced.
func (e *env) endOffsets(topic string) int64 {
	e.t.Helper()
	adm := kadm.NewClient(e.Kafka.Client(e.t))
	ends, err := adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		e.t.Fatal(err)
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
	return sum
}

// waitJob polls a replay job until it is finished, calling seen with each observation.
func (e *env) waitJob(pid, id string, timeout time.Duration, seen func(jobView)) jobView {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var v jobView
		e.must(200, operatorToken, "GET", "/v1/partners/"+pid+"/replay-jobs/"+id, nil).json(e.t, &v)
		if seen != nil {
			seen(v)
		}
		if v.State == replay.JobSucceeded || v.State == replay.JobFailed {
			return v
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("job %s still %s after %s: %+v", id, v.State, timeout, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// partnersInPartition returns n partner ids (prefix-0, prefix-1, …) whose events share one
// partition of a topic with partitions partitions.
func partnersInPartition(prefix string, n int, partitions int32) []string {
	var out []string
	want := int32(-1)
	for i := 0; len(out) < n; i++ {
		id := fmt.Sprintf("%s-%d", prefix, i)
		p := records.EventPartition(id, partitions)
		if want < 0 {
			want = p
		}
		if p == want {
			out = append(out, id)
		}
	}
	return out
}
