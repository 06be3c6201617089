package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/tracing"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// tracePipeline is every component of the delivery path running in this process on a test
// database and Kafka, as `hookstream dev` runs them, with one endpoint of partner p1 pointing at
// a local receiver.
type tracePipeline struct {
	db       *testenv.Database
	k        *testenv.Kafka
	s        settings
	secret   string
	received *received
}

// newTracePipeline prepares settings (the dev command's, on the test's services) and an
// endpoint ep1 at a receiver answering status(n) to its n-th request. tracer is the provider
// the components get (nil: tracing off).
func newTracePipeline(t *testing.T, status func(n int) int) *tracePipeline {
	t.Helper()
	p := &tracePipeline{db: testenv.NewDatabase(t), k: testenv.NewKafka(t), received: &received{}}
	p.k.CreateTopics(t)
	rcv := httptest.NewServer(p.received.handler(status))
	t.Cleanup(rcv.Close)

	s, err := parseSettings("dev", []string{"--database-url", p.db.URL,
		"--topic-prefix", p.k.Prefix, "--topic-partitions", "3", "--cdc-slot", p.k.Prefix, "--retry-schedule", "1s",
		"--instance-id", "trace-test"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	raw, key := testenv.SecretKey(t)
	s.SecretKey, s.KafkaBrokers, s.MetricsAddr = raw, p.k.Brokers, ""
	p.s = s
	if p.secret, err = webhook.NewSecret(); err != nil {
		t.Fatal(err)
	}
	sealed, err := key.Seal([]byte(p.secret), secretbox.AAD("ep1", "sec_1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := pgx.BeginFunc(ctx, p.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO partner (id) VALUES ('p1')`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO endpoint (id, partner_id, url, event_types) VALUES ('ep1', 'p1', $1, '{*}')`, rcv.URL+"/hook"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO endpoint_secret (endpoint_id, id, secret_ciphertext) VALUES ('ep1', 'sec_1', $1)`, sealed)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

// start runs cdc, fanout, the sender, the retry tiers and the recorder until the returned stop.
func (p *tracePipeline) start(t *testing.T) (stop func()) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(&testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	reg := prometheus.NewRegistry()
	c, err := cdc.New(p.s.cdcConfig(log, reg))
	if err != nil {
		t.Fatal(err)
	}
	var stops []func()
	for name, run := range map[string]func(context.Context) error{
		"cdc":      c.Run,
		"fanout":   func(ctx context.Context) error { return runFanoutWith(ctx, p.s, log, reg, nil) },
		"sender":   func(ctx context.Context) error { return runSenderWith(ctx, p.s, log, reg, nil) },
		"retry":    func(ctx context.Context) error { return runRetryWith(ctx, p.s, log, reg, p.db.Pool) },
		"recorder": func(ctx context.Context) error { return runRecorderWith(ctx, p.s, log, reg, p.db.Pool) },
	} {
		stops = append(stops, testenv.Go(t, name, run))
	}
	testenv.WaitSlotStreaming(t, p.db.Pool, p.s.CDCSlot, time.Minute)
	return func() {
		var wg sync.WaitGroup
		for _, stop := range stops {
			wg.Go(stop)
		}
		wg.Wait()
	}
}

// appendEvent commits one customer.created event of p1 with the given options.
func (p *tracePipeline) appendEvent(t *testing.T, ctx context.Context, opts ...outbox.AppendOption) string {
	t.Helper()
	return p.db.AppendEvent(ctx, t, outbox.Event{PartnerID: "p1", Type: "customer.created",
		Subject: outbox.Subject{Type: "customer", ID: "cus_trace"}, Data: testenv.CatalogData(t, "customer.created", nil)}, opts...)
}

// waitRecorded waits until the history holds attempts attempts of the event's delivery.
func (p *tracePipeline) waitRecorded(t *testing.T, eventID string, attempts int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		if err := p.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM delivery_attempt a JOIN delivery d USING (delivery_id)
			WHERE d.event_id = $1`, eventID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n >= attempts {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d attempts of %s recorded after 2 minutes", n, attempts, eventID)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// One event's trace, end to end, with tracing on: the platform's span is the parent of cdc's,
// cdc's of fanout's, fanout's of the first attempt; the failed first attempt is the parent of
// the retry tier's release, the release of the second attempt, and each attempt of the
// recorder's span storing it. Every span is in the platform's trace, names the delivery and the
// attempt number, and holds no secret or payload; the receiver got each attempt's context in
// its traceparent header.
func TestTraceFollowsOneEventEndToEnd(t *testing.T) {
	t.Parallel()
	p := newTracePipeline(t, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	p.s.tracer = tp
	stop := p.start(t)

	ctx, platform := tp.Tracer("platform").Start(context.Background(), "POST /customers")
	eventID := p.appendEvent(t, ctx, outbox.TraceFromContext())
	platform.End()
	p.waitRecorded(t, eventID, 2)
	stop()

	deliveryID := records.DeliveryID(eventID, "ep1")
	spans := exp.GetSpans()
	// find is the one span named name for attempt (0: none), failing on none or several.
	find := func(name string, attempt int) tracetest.SpanStub {
		t.Helper()
		var found []tracetest.SpanStub
		for _, s := range spans {
			if s.Name == name && (attempt == 0 || intAttr(s, tracing.AttrAttemptNo) == attempt) {
				found = append(found, s)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%d spans %s (attempt %d), want 1; spans: %s", len(found), name, attempt, spanNames(spans))
		}
		return found[0]
	}
	root := find("POST /customers", 0)
	published := find(tracing.SpanCDCPublish, 0)
	fanned := find(tracing.SpanFanoutDelivery, 1)
	first := find(tracing.SpanSenderAttempt, 1)
	released := find(tracing.SpanRetryRelease, 2)
	second := find(tracing.SpanSenderAttempt, 2)
	recorded1 := find(tracing.SpanRecorderRecord, 1)
	recorded2 := find(tracing.SpanRecorderRecord, 2)

	for _, link := range []struct {
		child, parent tracetest.SpanStub
	}{
		{published, root}, {fanned, published}, {first, fanned}, {released, first},
		{second, released}, {recorded1, first}, {recorded2, second},
	} {
		if link.child.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("%s (attempt %d) is in trace %s, want the platform's %s", link.child.Name, intAttr(link.child, tracing.AttrAttemptNo),
				link.child.SpanContext.TraceID(), root.SpanContext.TraceID())
		}
		if link.child.Parent.SpanID() != link.parent.SpanContext.SpanID() {
			t.Errorf("%s (attempt %d) has parent %s, want %s (%s)", link.child.Name, intAttr(link.child, tracing.AttrAttemptNo),
				link.child.Parent.SpanID(), link.parent.SpanContext.SpanID(), link.parent.Name)
		}
	}
	if got := stringAttr(published, tracing.AttrEventID); got != eventID {
		t.Errorf("cdc span names event %q, want %s", got, eventID)
	}
	for _, s := range []tracetest.SpanStub{fanned, first, released, second, recorded1, recorded2} {
		if got := stringAttr(s, tracing.AttrDeliveryID); got != deliveryID {
			t.Errorf("%s names delivery %q, want %s", s.Name, got, deliveryID)
		}
	}
	if got := intAttr(first, tracing.AttrHTTPStatus); got != http.StatusServiceUnavailable {
		t.Errorf("first attempt's span has status %d, want 503", got)
	}
	if got := intAttr(second, tracing.AttrHTTPStatus); got != http.StatusNoContent {
		t.Errorf("second attempt's span has status %d, want 204", got)
	}

	// The receiver saw each attempt's own context.
	msgs := p.received.all()
	if len(msgs) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(msgs))
	}
	for i, want := range []tracetest.SpanStub{first, second} {
		got := msgs[i].header.Get("traceparent")
		sc, ok := tracing.Parse(got)
		if !ok || sc.TraceID() != root.SpanContext.TraceID() || sc.SpanID() != want.SpanContext.SpanID() {
			t.Errorf("request %d has traceparent %q, want the context of attempt %d's span (%s)", i+1, got, i+1,
				tracing.Traceparent(want.SpanContext))
		}
	}

	// Identifiers only: no span holds the secret, the body or any part of the endpoint's URL.
	body := msgs[0].body
	for _, s := range spans {
		for _, kv := range s.Attributes {
			v := kv.Value.Emit()
			if strings.Contains(v, "whsec_") || strings.Contains(v, p.secret) || strings.Contains(v, "/hook") ||
				(len(v) > 8 && bytes.Contains(body, []byte(v)) && !slices.Contains([]string{eventID, "p1", "customer.created"}, v)) {
				t.Errorf("span %s attribute %s = %q is a secret, a URL or payload", s.Name, kv.Key, v)
			}
		}
	}
}

// With tracing off (the default, HOOKSTREAM_TRACES_EXPORTER=none) an event whose outbox row
// carries a traceparent reaches the receiver with no traceparent header, no Kafka record
// carries one, and nothing is exported to the OTLP endpoint the standard variable names; with
// otlp, the same pipeline exports the event's spans there and the receiver gets its trace.
func TestTracesExporterOffSendsAndExportsNothing(t *testing.T) {
	for _, exporter := range []string{tracing.ExporterNone, tracing.ExporterOTLP} {
		t.Run(exporter, func(t *testing.T) {
			collector := newOTLPCollector(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
			p := newTracePipeline(t, func(int) int { return http.StatusNoContent })
			p.s.TracesExporter = exporter
			stopTracing, err := p.s.startTracing(context.Background(), "dev", slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			stop := p.start(t)
			const platformTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			eventID := p.appendEvent(t, context.Background(), outbox.WithTraceparent(platformTrace))
			p.waitRecorded(t, eventID, 1)
			stop()
			stopTracing() // flushes whatever the exporter holds

			got := p.received.all()[0].header.Get("traceparent")
			headers := p.traceHeaders(t)
			switch exporter {
			case tracing.ExporterNone:
				if got != "" {
					t.Errorf("tracing off, the receiver got traceparent %q", got)
				}
				if len(headers) > 0 {
					t.Errorf("tracing off, Kafka records carry traceparent headers: %v", headers)
				}
				if n := collector.requests(); n != 0 {
					t.Errorf("tracing off, the OTLP endpoint got %d export requests", n)
				}
			case tracing.ExporterOTLP:
				sc, ok := tracing.Parse(got)
				if !ok || sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
					t.Errorf("tracing on, the receiver got traceparent %q, want one in the platform's trace", got)
				}
				for _, topic := range []string{"events", "deliveries", "attempts"} {
					if headers[topic] == 0 {
						t.Errorf("tracing on, no %s record carries a traceparent (%v)", topic, headers)
					}
				}
				if !collector.sawTrace(sc.TraceID()) {
					t.Errorf("tracing on, the OTLP endpoint got %d requests, none with the event's trace id", collector.requests())
				}
			}
		})
	}
}

// traceHeaders counts, by topic (without the prefix), the records of the events, deliveries and
// attempts topics that carry a traceparent header. It reads them uncommitted, as the sender reads
// deliveries: the pipeline is stopped by then, and a stop aborts cdc's open Kafka transaction
// (the next session publishes its events again, design.md section 5), so the records of an
// event delivered within cdc's commit interval may never be committed.
func (p *tracePipeline) traceHeaders(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, topic := range []string{"events", "deliveries", "attempts"} {
		cl := p.k.Client(t, kgo.ConsumeTopics(p.k.Prefix+"."+topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		seen := 0
		for seen == 0 && ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				seen++
				if tracing.Header(r.Headers) != "" {
					out[topic]++
				}
			})
		}
		cancel()
		if seen == 0 {
			t.Fatalf("no record on %s", topic)
		}
	}
	return out
}

// otlpCollector is a local OTLP/HTTP endpoint that keeps the bodies of the trace exports it gets.
type otlpCollector struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newOTLPCollector(t *testing.T) *otlpCollector {
	c := &otlpCollector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/v1/traces" {
			c.mu.Lock()
			c.bodies = append(c.bodies, body)
			c.mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *otlpCollector) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.bodies)
}

// sawTrace reports an export holding spans of trace id (protobuf carries it as its 16 bytes).
func (c *otlpCollector) sawTrace(id trace.TraceID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.bodies {
		if bytes.Contains(b, id[:]) {
			return true
		}
	}
	return false
}

func intAttr(s tracetest.SpanStub, key attribute.Key) int {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return int(kv.Value.AsInt64())
		}
	}
	return 0
}

func stringAttr(s tracetest.SpanStub, key attribute.Key) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.AsString()
		}
	}
	return ""
}

func spanNames(spans tracetest.SpanStubs) string {
	var names []string
	for _, s := range spans {
		names = append(names, fmt.Sprintf("%s#%d", s.Name, intAttr(s, tracing.AttrAttemptNo)))
	}
	return strings.Join(names, ", ")
}

// testWriter writes logs to the test's log.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
