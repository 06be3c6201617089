package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/internal/records"
)

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func newTracer(t testing.TB) (*Tracer, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return New(tp), exp
}

// A nil Tracer is tracing off: no span, no header read or written, no traceparent sent.
func TestNilTracerDoesNothing(t *testing.T) {
	var tr *Tracer = New(nil)
	if tr != nil {
		t.Fatal("New(nil) is not the off state")
	}
	r := &kgo.Record{Headers: []kgo.RecordHeader{{Key: records.HeaderTraceparent, Value: []byte(parent)}}}
	if got := tr.Parent(r); got != "" {
		t.Errorf("off tracer read the header %q", got)
	}
	span := tr.Start(parent, SpanSenderAttempt, trace.SpanKindClient, Hop{DeliveryID: "dlv_1", AttemptNo: 1})
	span.Set(AttrRetryTier.String("5s"))
	span.Fail("x")
	if got := span.Traceparent(); got != "" {
		t.Errorf("off span has traceparent %q", got)
	}
	out := &kgo.Record{}
	SetHeader(out, span.Traceparent())
	h := http.Header{}
	InjectHTTP(span.Context(context.Background()), h)
	span.EndAttempt(200, "")
	if len(out.Headers) != 0 || len(h) != 0 {
		t.Errorf("off span wrote headers: record %v, request %v", out.Headers, h)
	}
}

// A span is the child of the traceparent it starts from, in its trace; an empty or broken
// parent starts a new trace; the span's attributes are the hop's non-empty identifiers.
func TestStartContinuesTheParentTrace(t *testing.T) {
	tr, exp := newTracer(t)
	span := tr.Start(parent, SpanSenderAttempt, trace.SpanKindClient,
		Hop{EventID: "evt_1", DeliveryID: "dlv_1", EndpointID: "ep_1", AttemptNo: 2, Trigger: records.TriggerRetry})
	child := span.Traceparent()
	span.EndAttempt(503, records.CategoryHTTPStatus)
	for _, broken := range []string{"", "00-zz", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		tr.Start(broken, SpanFanoutDelivery, trace.SpanKindProducer, Hop{}).End()
	}
	spans := exp.GetSpans()
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4", len(spans))
	}
	s := spans[0]
	if s.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("span in trace %s with parent %s, want the parent's trace and span", s.SpanContext.TraceID(), s.Parent.SpanID())
	}
	if sc, ok := Parse(child); !ok || sc.SpanID() != s.SpanContext.SpanID() || !sc.IsSampled() {
		t.Errorf("Traceparent() = %q, not the span's own sampled context", child)
	}
	want := map[string]string{"hookstream.event_id": "evt_1", "hookstream.delivery_id": "dlv_1", "hookstream.endpoint_id": "ep_1",
		"hookstream.attempt_no": "2", "hookstream.trigger": "retry", "http.response.status_code": "503", "hookstream.error_category": "http_status"}
	got := map[string]string{}
	for _, kv := range s.Attributes {
		got[string(kv.Key)] = kv.Value.Emit()
	}
	if len(got) != len(want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, got[k], v)
		}
	}
	for _, s := range spans[1:] {
		if s.Parent.IsValid() || s.SpanContext.TraceID().String() == "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("span from a broken parent has parent %v in trace %s, want a new root", s.Parent.SpanID(), s.SpanContext.TraceID())
		}
	}
}

// SetHeader replaces a record's traceparent rather than adding a second one, and InjectHTTP
// puts the span's context in the request.
func TestHeaders(t *testing.T) {
	tr, _ := newTracer(t)
	r := &kgo.Record{Headers: []kgo.RecordHeader{{Key: "due_at", Value: []byte("x")}, {Key: records.HeaderTraceparent, Value: []byte(parent)}}}
	span := tr.Start(tr.Parent(r), SpanRetryRelease, trace.SpanKindProducer, Hop{})
	SetHeader(r, span.Traceparent())
	if len(r.Headers) != 2 || Header(r.Headers) != span.Traceparent() {
		t.Errorf("headers after SetHeader: %v", r.Headers)
	}
	h := http.Header{}
	InjectHTTP(span.Context(context.Background()), h)
	if h.Get("traceparent") != span.Traceparent() {
		t.Errorf("request traceparent %q, want %q", h.Get("traceparent"), span.Traceparent())
	}
	span.End()
}

func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		c     Config
		fails bool
	}{
		{Config{}, false},
		{Config{Exporter: ExporterNone, Protocol: "grpc"}, false}, // off: the protocol does not matter
		{Config{Exporter: ExporterOTLP}, false},
		{Config{Exporter: ExporterOTLP, Protocol: ProtocolHTTP}, false},
		{Config{Exporter: ExporterOTLP, Protocol: "grpc"}, true},
		{Config{Exporter: "jaeger"}, true},
	} {
		if err := tt.c.Validate(); (err != nil) != tt.fails {
			t.Errorf("%+v: Validate() = %v, want failure %v", tt.c, err, tt.fails)
		}
	}
}

// Start with the OTLP exporter sends spans to the endpoint of OTEL_EXPORTER_OTLP_ENDPOINT, with
// hookstream's service name; with none it makes no provider and exports nothing.
func TestStartExportsOverOTLP(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.URL.Path+" "+string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "")

	tp, shutdown, err := Start(context.Background(), Config{Exporter: ExporterNone})
	if err != nil || tp != nil {
		t.Fatalf("Start(none) = %v, %v; want no provider", tp, err)
	}
	_ = shutdown(context.Background())

	tp, shutdown, err = Start(context.Background(), Config{Exporter: ExporterOTLP, ServiceName: "hookstream-sender", InstanceID: "s-1"})
	if err != nil {
		t.Fatal(err)
	}
	New(tp).Start(parent, SpanSenderAttempt, trace.SpanKindClient, Hop{DeliveryID: "dlv_exported"}).End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 {
		t.Fatal("nothing exported")
	}
	all := strings.Join(bodies, "\n")
	for _, want := range []string{"/v1/traces ", "hookstream-sender", "dlv_exported", SpanSenderAttempt} {
		if !strings.Contains(all, want) {
			t.Errorf("exports lack %q", want)
		}
	}
}
