package tracing

import (
	"context"
	"net/http"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/internal/records"
)

// offPath is what one delivery costs the hops with tracing off: the sender reads the record's
// parent, starts and ends the attempt's span around the request, and the attempt and retry
// records get their header.
func offPath(tr *Tracer, r *kgo.Record, out *kgo.Record, h http.Header, d records.Delivery) {
	d.Traceparent = tr.Parent(r)
	span := tr.Start(d.Traceparent, SpanSenderAttempt, trace.SpanKindClient, DeliveryHop(d))
	InjectHTTP(span.Context(context.Background()), h)
	span.EndAttempt(200, "")
	SetHeader(out, span.Traceparent())
}

// Tracing off allocates nothing per delivery, so it adds no garbage to the sender's hot path.
func TestTracingOffAllocatesNothing(t *testing.T) {
	r := &kgo.Record{Headers: []kgo.RecordHeader{{Key: records.HeaderTraceparent, Value: []byte(parent)}}}
	out, h := &kgo.Record{}, http.Header{}
	d := records.Delivery{DeliveryID: "dlv_1", EventID: "evt_1", EndpointID: "ep_1", AttemptNo: 1}
	if n := testing.AllocsPerRun(1000, func() { offPath(nil, r, out, h, d) }); n != 0 {
		t.Errorf("tracing off allocates %.1f times per delivery, want 0", n)
	}
	if len(out.Headers) != 0 || len(h) != 0 {
		t.Errorf("tracing off wrote headers: %v %v", out.Headers, h)
	}
}

// BenchmarkDeliveryHops is the per-delivery cost of the sender's tracing calls, off and on
// (an SDK provider that samples everything and exports nowhere).
func BenchmarkDeliveryHops(b *testing.B) {
	r := &kgo.Record{Headers: []kgo.RecordHeader{{Key: records.HeaderTraceparent, Value: []byte(parent)}}}
	d := records.Delivery{DeliveryID: "dlv_1", EventID: "evt_1", EndpointID: "ep_1", AttemptNo: 1}
	b.Run("off", func(b *testing.B) {
		out, h := &kgo.Record{}, http.Header{}
		b.ReportAllocs()
		for b.Loop() {
			offPath(nil, r, out, h, d)
		}
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider()
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		tr := New(tp)
		h := http.Header{}
		b.ReportAllocs()
		for b.Loop() {
			offPath(tr, r, &kgo.Record{}, h, d)
		}
	})
}
