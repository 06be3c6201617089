package recorder_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/recorder"
)

func startRecorder(t *testing.T, e *env) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	cfg := recorder.DefaultConfig()
	cfg.Base = e.Kafka.Base(t, reg)
	r, err := recorder.New(cfg, e.DB.Pool)
	if err != nil {
		t.Fatal(err)
	}
	background(t, "recorder", r.Run)
	return reg
}

func attempt(event, endpoint, partner string, no int, outcome string, status int, category string) records.Attempt {
	a := records.Attempt{
		V: records.AttemptVersion, DeliveryID: records.DeliveryID(event, endpoint), EventID: event,
		EndpointID: endpoint, PartnerID: partner, EventType: "customer.created", AttemptNo: no,
		Trigger: records.TriggerInitial, StartedAt: time.Date(2026, 11, 30, 10, 0, no, 0, time.UTC),
		Status: status, LatencyMS: int64(10 * no), LatencyUS: int64(10_000*no + 7), Outcome: outcome, ErrorCategory: category,
		ResponseExcerpt: strings.Repeat("é", 600), // 1200 bytes: cut to 1 KiB on a rune boundary
	}
	if no > 1 {
		a.Trigger = records.TriggerRetry
	}
	if outcome == records.OutcomeRetrying {
		next := a.StartedAt.Add(time.Minute)
		a.NextAttemptAt = &next
	}
	return a
}

func produceAttempts(t *testing.T, e *env, as ...records.Attempt) {
	t.Helper()
	cl := e.Kafka.Client(t)
	var recs []*kgo.Record
	for _, a := range as {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: e.Names.Attempts, Key: []byte(a.DeliveryID), Value: b})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// tables renders the history tables and failing_since, to compare before and after a replay.
func tables(t *testing.T, e *env) string {
	t.Helper()
	return strings.Join(testenv.QueryStrings(t, e.DB.Pool, `
		SELECT row(d.delivery_id, d.event_id, d.endpoint_id, d.partner_id, d.state, d.attempt_count, d.next_attempt_at,
		           d.last_status, d.last_latency_ms, d.last_latency_us, d.last_error_category, d.created_at)::text FROM delivery d
		UNION ALL SELECT row(a.*)::text FROM delivery_attempt a
		UNION ALL SELECT row(id, status, failing_since, disabled_reason)::text FROM endpoint
		ORDER BY 1`), "\n")
}

// R18: attempts become history; replaying the same attempts records changes nothing (R11).
func TestRecorderIsIdempotent(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example'), ('ep2', 'p1', 'https://y.example')`)
	reg := startRecorder(t, e)
	evt := outbox.NewEventID()
	evt2 := outbox.NewEventID()
	batch := []records.Attempt{
		attempt(evt, "ep1", "p1", 1, records.OutcomeRetrying, 503, records.CategoryHTTPStatus),
		attempt(evt, "ep1", "p1", 2, records.OutcomeRetrying, 0, records.CategoryTimeout),
		attempt(evt, "ep1", "p1", 3, records.OutcomeDelivered, 200, ""),
		attempt(evt2, "ep2", "p1", 1, records.OutcomeRetrying, 0, records.CategoryConnectionRefused),
	}
	produceAttempts(t, e, batch...)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 4, time.Minute)
	first := tables(t, e)

	var state string
	var count int
	var failing *time.Time
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT state, attempt_count FROM delivery WHERE delivery_id = $1`,
		records.DeliveryID(evt, "ep1")).Scan(&state, &count); err != nil || state != "succeeded" || count != 3 {
		t.Fatalf("delivery: %s %d %v", state, count, err)
	}
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT failing_since FROM endpoint WHERE id = 'ep1'`).Scan(&failing); err != nil || failing != nil {
		t.Fatalf("ep1 failing_since %v after a success (%v)", failing, err)
	}
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT failing_since FROM endpoint WHERE id = 'ep2'`).Scan(&failing); err != nil || failing == nil {
		t.Fatalf("ep2 failing_since not set after a failure (%v)", err)
	}
	var excerpt string
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT response_excerpt FROM delivery_attempt WHERE attempt_no = 1 AND delivery_id = $1`,
		records.DeliveryID(evt, "ep1")).Scan(&excerpt); err != nil || len(excerpt) != 1024 {
		t.Fatalf("excerpt of %d bytes (%v), want 1024", len(excerpt), err)
	}

	// The same records again, and an older attempt arriving late: nothing changes.
	produceAttempts(t, e, batch...)
	produceAttempts(t, e, batch[0])
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 9, time.Minute)
	if second := tables(t, e); second != first {
		t.Fatalf("tables changed on replay:\n%s\n---\n%s", first, second)
	}
}

// The history keeps an attempt's latency in microseconds beside whole milliseconds (design.md
// section 4): an attempt to a receiver on the same host takes well under a millisecond. A record
// written before latency_us existed is stored with latency_ms*1000 microseconds.
func TestRecorderStoresLatencyInMicroseconds(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example')`)
	reg := startRecorder(t, e)
	fast := attempt(outbox.NewEventID(), "ep1", "p1", 1, records.OutcomeDelivered, 200, "")
	fast.LatencyUS, fast.LatencyMS = 850, 0
	produceAttempts(t, e, fast)

	old := attempt(outbox.NewEventID(), "ep1", "p1", 1, records.OutcomeDelivered, 200, "")
	old.LatencyMS = 12
	var fields map[string]any
	if err := json.Unmarshal(mustJSON(t, old), &fields); err != nil {
		t.Fatal(err)
	}
	delete(fields, "latency_us")
	rec := &kgo.Record{Topic: e.Names.Attempts, Key: []byte(old.DeliveryID), Value: mustJSON(t, fields)}
	if err := e.Kafka.Client(t).ProduceSync(context.Background(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 2, time.Minute)

	for _, c := range []struct {
		a      records.Attempt
		ms, us int64
	}{{fast, 0, 850}, {old, 12, 12_000}} {
		var ms, us, lastMS, lastUS int64
		if err := e.DB.Pool.QueryRow(context.Background(), `SELECT a.latency_ms, a.latency_us, d.last_latency_ms, d.last_latency_us
			FROM delivery_attempt a JOIN delivery d USING (delivery_id) WHERE delivery_id = $1`, c.a.DeliveryID).Scan(&ms, &us, &lastMS, &lastUS); err != nil {
			t.Fatal(err)
		}
		if ms != c.ms || us != c.us || lastMS != c.ms || lastUS != c.us {
			t.Errorf("stored latency %d ms, %d µs (delivery: %d ms, %d µs); want %d ms, %d µs", ms, us, lastMS, lastUS, c.ms, c.us)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A request redone after a sender or broker failure carries the attempt number it had: it is a
// row of its own in the history (told apart by its start time), the delivery takes the outcome of
// the request that started last, and the same records read again change nothing.
func TestRecorderKeepsRedoneAttempts(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example')`)
	reg := startRecorder(t, e)
	evt := outbox.NewEventID()
	first := attempt(evt, "ep1", "p1", 2, records.OutcomeRetrying, 0, records.CategoryTimeout)
	redone := attempt(evt, "ep1", "p1", 2, records.OutcomeDelivered, 200, "")
	redone.StartedAt = first.StartedAt.Add(40 * time.Second)
	produceAttempts(t, e, attempt(evt, "ep1", "p1", 1, records.OutcomeRetrying, 503, records.CategoryHTTPStatus), first)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 2, time.Minute)
	produceAttempts(t, e, redone)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 3, time.Minute)
	check := func() {
		t.Helper()
		var state string
		var status *int32
		if err := e.DB.Pool.QueryRow(context.Background(), `SELECT state, last_status FROM delivery WHERE delivery_id = $1`,
			records.DeliveryID(evt, "ep1")).Scan(&state, &status); err != nil || state != "succeeded" || status == nil || *status != 200 {
			t.Fatalf("delivery %s, last status %v (%v); want succeeded with 200, the redone request's outcome", state, status, err)
		}
		got := testenv.QueryStrings(t, e.DB.Pool, `SELECT attempt_no::text || ' ' || coalesce(status::text, error_category)
			FROM delivery_attempt WHERE delivery_id = $1 ORDER BY attempt_no, started_at`, records.DeliveryID(evt, "ep1"))
		if want := []string{"1 503", "2 timeout", "2 200"}; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("history %q, want %q", got, want)
		}
	}
	check()
	before := tables(t, e)
	// Both requests read again, in the other order: nothing changes.
	produceAttempts(t, e, redone, first)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 5, time.Minute)
	check()
	if after := tables(t, e); after != before {
		t.Fatalf("tables changed on replay:\n%s\n---\n%s", before, after)
	}
}

// A delivery the receiver accepted stays succeeded when a later automatic request of it fails
// (work redone after a kill, a redundant retry): the failure is recorded and is the last status,
// but the history does not show a delivered event as retrying. A failed replay does change it.
func TestRecorderKeepsASuccess(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example')`)
	reg := startRecorder(t, e)
	evt := outbox.NewEventID()
	produceAttempts(t, e, attempt(evt, "ep1", "p1", 1, records.OutcomeDelivered, 200, ""))
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 1, time.Minute)
	produceAttempts(t, e, attempt(evt, "ep1", "p1", 2, records.OutcomeRetrying, 500, records.CategoryHTTPStatus))
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 2, time.Minute)
	read := func() (state string, count int, status int32, next *time.Time) {
		t.Helper()
		if err := e.DB.Pool.QueryRow(context.Background(), `SELECT state, attempt_count, last_status, next_attempt_at FROM delivery WHERE delivery_id = $1`,
			records.DeliveryID(evt, "ep1")).Scan(&state, &count, &status, &next); err != nil {
			t.Fatal(err)
		}
		return
	}
	if state, count, status, next := read(); state != "succeeded" || count != 2 || status != 500 || next != nil {
		t.Fatalf("after a failed redelivery: %s, %d attempts, last %d, next %v; want succeeded, 2, 500, none", state, count, status, next)
	}
	var failing *time.Time
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT failing_since FROM endpoint WHERE id = 'ep1'`).Scan(&failing); err != nil || failing == nil {
		t.Fatalf("failing_since not set by the failed request (%v)", err)
	}
	replay := attempt(evt, "ep1", "p1", 12, records.OutcomeFailed, 500, records.CategoryHTTPStatus)
	replay.Trigger = records.TriggerReplay
	produceAttempts(t, e, replay)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 3, time.Minute)
	if state, count, _, _ := read(); state != "failed" || count != 12 {
		t.Fatalf("after a failed replay: %s, %d attempts; want failed, 12", state, count)
	}
}

// A final 410 disables the endpoint and announces it with an endpoint.disabled event that flows
// like any event (R20, R23). The endpoint id has the admin API's form, which the catalog's
// endpoint.disabled schema requires: cdc publishes the event only then.
func TestRecorder410DisablesEndpoint(t *testing.T) {
	t.Parallel()
	const gone = "ep_01JGONEGONEGONEGONEGONE000"
	e := testenv.NewEnv(t)
	startCDC(t, e)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1')`)
	sqlExec(t, e, `INSERT INTO endpoint (id, partner_id, url, event_types) VALUES ($1, 'p1', 'https://gone.example', '{customer.*}')`, gone)
	reg := startRecorder(t, e)
	evt := outbox.NewEventID()
	produceAttempts(t, e, attempt(evt, gone, "p1", 1, records.OutcomeFailed, 410, records.CategoryHTTPStatus))
	testenv.WaitValue(t, reg, "hookstream_recorder_endpoints_disabled_total", 1, time.Minute)

	var status, reason string
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT status, disabled_reason FROM endpoint WHERE id = $1`, gone).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if status != "disabled" || !strings.Contains(reason, "410") {
		t.Fatalf("endpoint %s (%s)", status, reason)
	}
	// The partner's endpoint.disabled, and the operator's events of the disabling and of the
	// delivery the 410 ended (design.md section 8, "Operator events"), from one transaction
	// but not one partition: in no particular order.
	evs := consume(t, e, e.Names.Events, 3, time.Second)
	byType := map[string]outbox.Envelope{}
	for _, r := range evs {
		var env outbox.Envelope
		if err := json.Unmarshal(r.Value, &env); err != nil {
			t.Fatal(err)
		}
		byType[env.Type] = env
	}
	if env := byType["endpoint.disabled"]; env.PartnerID != "p1" || env.Subject.ID != gone || !strings.Contains(string(env.Data), `"endpoint_id":"`+gone+`"`) {
		t.Fatalf("endpoint.disabled %+v", env)
	}
	for _, typ := range []string{"operator.endpoint.disabled", "operator.delivery.dead_lettered"} {
		if env := byType[typ]; env.PartnerID != outbox.OperatorPartnerID || !strings.Contains(string(env.Data), `"partner_id":"p1"`) {
			t.Errorf("%s %+v", typ, env)
		}
	}
	if len(evs) != 3 {
		t.Errorf("%d events, want 3", len(evs))
	}
}

// R13: an attempt naming another partner's endpoint is refused: no history row, a dead letter.
func TestRecorderRefusesForeignEndpoint(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('pa'), ('pb');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep_b', 'pb', 'https://b.example'), ('ep_a', 'pa', 'https://a.example')`)
	reg := startRecorder(t, e)
	evt := outbox.NewEventID()
	produceAttempts(t, e,
		attempt(evt, "ep_b", "pa", 1, records.OutcomeDelivered, 200, ""),                        // forged: ep_b is pb's
		attempt(evt, "ep_a", "pa", 1, records.OutcomeFailed, 0, records.CategoryTenantMismatch), // the sender's refusal
		attempt(evt, "ep_missing", "pa", 1, records.OutcomeDelivered, 200, ""),
	)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_refused_total", 3, time.Minute)
	var n int
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM delivery) + (SELECT count(*) FROM delivery_attempt)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d history rows (%v), want none", n, err)
	}
	dlq := consume(t, e, e.Names.DLQ, 3, time.Second)
	if len(dlq) != 3 {
		t.Fatalf("%d dead letters, want 3", len(dlq))
	}
	for _, r := range dlq {
		var dl records.DeadLetter
		if err := json.Unmarshal(r.Value, &dl); err != nil || dl.Source != "recorder" {
			t.Fatalf("dead letter %s (%v)", r.Value, err)
		}
	}
}

// No attempts record stops the recorder: records it cannot read and records PostgreSQL cannot
// store (the NUL byte that crash-looped every recorder) go to the dlq with the reason, and the
// good records behind them on the same partition are recorded.
func TestRecorderDeadLettersPoisonAndGoesOn(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example')`)
	good := func() records.Attempt {
		return attempt(outbox.NewEventID(), "ep1", "p1", 1, records.OutcomeDelivered, 200, "")
	}
	marshal := func(a records.Attempt) []byte {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	with := func(change func(*records.Attempt)) []byte {
		a := good()
		change(&a)
		return marshal(a)
	}
	oversized := good()
	oversized.ResponseExcerpt = strings.Repeat("x", 256<<10)
	first, last := good(), good()

	type record struct {
		key    string
		value  []byte
		reason string // in the dead letter; "" for a record that is stored
	}
	recs := []record{
		{"garbage", []byte(`{"v":1,"delivery_id":`), "invalid: not an attempt record"},
		{"not-json", []byte("\x00\x01\x02 not json"), "invalid: not an attempt record"},
		{"empty", nil, "invalid: not an attempt record"},
		{"nul-excerpt", with(func(a *records.Attempt) { a.ResponseExcerpt = "before\x00after" }), "unstorable: "},
		{"nul-type", with(func(a *records.Attempt) { a.EventType = "customer.\x00created" }), "unstorable: "},
		{"nul-endpoint", with(func(a *records.Attempt) {
			a.EndpointID = "ep1\x00"
			a.DeliveryID = records.DeliveryID(a.EventID, a.EndpointID)
		}), "invalid: endpoint id"},
		{"invalid-utf8", bytes.Replace(marshal(good()), []byte(`"response_excerpt":"`), []byte("\"response_excerpt\":\"\xff\xfe"), 1),
			"invalid: not an attempt record: not valid UTF-8"},
		{"forged-delivery-id", with(func(a *records.Attempt) { a.DeliveryID = records.DeliveryID(a.EventID, "ep_other") }),
			"invalid: delivery id"},
		{"no-started-at", with(func(a *records.Attempt) { a.StartedAt = time.Time{} }), "invalid: started_at is required"},
		{"no-endpoint", with(func(a *records.Attempt) { a.EndpointID = "" }), "invalid: event, endpoint and partner ids are required"},
		{"huge-attempt-no", with(func(a *records.Attempt) { a.AttemptNo = 1 << 40 }), "invalid: attempt number"},
		{"future-version", with(func(a *records.Attempt) { a.V = 99 }), "invalid: attempt record version 99"},
		{"oversized", marshal(oversized), ""},
		{"first", marshal(first), ""},
	}
	// One partition, so that the good records are behind the bad ones.
	cl := e.Kafka.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(rs ...record) {
		t.Helper()
		var krs []*kgo.Record
		for _, r := range rs {
			krs = append(krs, &kgo.Record{Topic: e.Names.Attempts, Partition: 0, Key: []byte(r.key), Value: r.value})
		}
		if err := cl.ProduceSync(context.Background(), krs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(recs...)
	reg := startRecorder(t, e)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 2, time.Minute)
	// Still running: a record produced afterwards is recorded too.
	produce(record{"last", marshal(last), ""})
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 3, time.Minute)

	excerpts := map[string]int{}
	rows, err := e.DB.Pool.Query(context.Background(), `SELECT delivery_id, octet_length(response_excerpt) FROM delivery_attempt`)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { excerpts[id] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, a := range []records.Attempt{first, last} {
		if _, ok := excerpts[a.DeliveryID]; !ok {
			t.Errorf("good attempt %s not recorded", a.DeliveryID)
		}
	}
	if n, ok := excerpts[oversized.DeliveryID]; !ok || n != 1024 {
		t.Errorf("oversized excerpt recorded %v with %d bytes, want 1024", ok, n)
	}
	if len(excerpts) != 3 {
		t.Errorf("%d attempts recorded, want 3", len(excerpts))
	}

	want := map[string]string{}
	for _, r := range recs {
		if r.reason != "" {
			want[r.key] = r.reason
		}
	}
	dlq := consume(t, e, e.Names.DLQ, len(want), time.Second)
	got := map[string]bool{}
	for _, r := range dlq {
		var dl records.DeadLetter
		if err := json.Unmarshal(r.Value, &dl); err != nil || !utf8.Valid(r.Value) {
			t.Fatalf("dead letter %q: %v", r.Value, err)
		}
		key := string(r.Key)
		if dl.Source != "recorder" || !strings.HasPrefix(dl.Reason, want[key]) || want[key] == "" {
			t.Errorf("dead letter of %s: source %q, reason %q; want the reason to begin with %q", key, dl.Source, dl.Reason, want[key])
		}
		if key == "nul-excerpt" && (!strings.Contains(dl.Reason, "0x00") || dl.EventID == "" || dl.Partner != "p1") {
			t.Errorf("dead letter of the NUL excerpt: %s", r.Value)
		}
		got[key] = true
	}
	for key := range want {
		if !got[key] {
			t.Errorf("no dead letter for %s", key)
		}
	}
}

// The recorder keeps each endpoint's health from the attempts (endpoint_health, design.md
// section 4): the circuit the newest attempt stating one left (an older statement recorded later
// does not undo it), the last success, the last attempt sent; refusals (category internal) say
// nothing of the receiver.
func TestRecorderKeepsEndpointHealth(t *testing.T) {
	t.Parallel()
	const ep = "ep_01JHEALTHHEALTHHEALTH00000"
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1')`)
	sqlExec(t, e, `INSERT INTO endpoint (id, partner_id, url, event_types) VALUES ($1, 'p1', 'https://h.example', '{customer.*}')`, ep)
	reg := startRecorder(t, e)
	health := func() (circuit *string, probe, success, last *time.Time) {
		t.Helper()
		if err := e.DB.Pool.QueryRow(context.Background(), `SELECT circuit_state, circuit_probe_at, last_success_at, last_attempt_at
			FROM endpoint_health WHERE endpoint_id = $1`, ep).Scan(&circuit, &probe, &success, &last); err != nil {
			t.Fatal(err)
		}
		return
	}
	ok := attempt(outbox.NewEventID(), ep, "p1", 1, records.OutcomeDelivered, 200, "")
	ok.Circuit = records.CircuitClosed
	failed := attempt(outbox.NewEventID(), ep, "p1", 2, records.OutcomeRetrying, 503, records.CategoryHTTPStatus)
	probeAt := failed.StartedAt.Add(10 * time.Second)
	failed.Circuit, failed.CircuitProbeAt = records.CircuitOpen, &probeAt
	produceAttempts(t, e, ok, failed)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 2, time.Minute)
	c, p, s, l := health()
	if c == nil || *c != records.CircuitOpen || p == nil || !p.Equal(probeAt) || s == nil || !s.Equal(ok.StartedAt) || l == nil || !l.Equal(failed.StartedAt) {
		t.Fatalf("health after a success and a failure that opened the circuit: %v %v %v %v", c, p, s, l)
	}

	// An older attempt recorded late and refusals (internal, endpoint_disabled) change neither the circuit nor the times.
	late := attempt(outbox.NewEventID(), ep, "p1", 1, records.OutcomeDelivered, 200, "")
	late.StartedAt, late.Circuit = ok.StartedAt.Add(-time.Minute), records.CircuitClosed
	refused := attempt(outbox.NewEventID(), ep, "p1", 5, records.OutcomeFailed, 0, records.CategoryInternal)
	disabled := attempt(outbox.NewEventID(), ep, "p1", 6, records.OutcomeFailed, 0, records.CategoryEndpointDisabled)
	produceAttempts(t, e, late, refused, disabled)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 5, time.Minute)
	c, p, s, l = health()
	if *c != records.CircuitOpen || !p.Equal(probeAt) || !s.Equal(ok.StartedAt) || !l.Equal(failed.StartedAt) {
		t.Fatalf("health after a late attempt and a refusal: %v %v %v %v", *c, p, s, l)
	}

	// The probe succeeds: closed, no probe time, a new last success.
	probe := attempt(outbox.NewEventID(), ep, "p1", 3, records.OutcomeDelivered, 200, "")
	probe.Circuit = records.CircuitClosed
	produceAttempts(t, e, probe)
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 6, time.Minute)
	c, p, s, _ = health()
	if *c != records.CircuitClosed || p != nil || !s.Equal(probe.StartedAt) {
		t.Fatalf("health after the probe succeeded: %v %v %v", *c, p, s)
	}
}
