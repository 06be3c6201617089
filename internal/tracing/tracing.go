package tracing

import (
	"context"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/internal/records"
)

// instrumentation is the name of hookstream's tracer (the OpenTelemetry instrumentation scope).
const instrumentation = "github.com/hookstream/hookstream"

// Span names, one per hop.
const (
	SpanCDCPublish     = "hookstream.cdc.publish"
	SpanFanoutDelivery = "hookstream.fanout.delivery"
	SpanSenderAttempt  = "hookstream.sender.attempt"
	SpanRetryRelease   = "hookstream.retry.release"
	SpanRecorderRecord = "hookstream.recorder.record"
)

// Attribute keys of hookstream's spans.
const (
	AttrEventID       = attribute.Key("hookstream.event_id")
	AttrDeliveryID    = attribute.Key("hookstream.delivery_id")
	AttrEndpointID    = attribute.Key("hookstream.endpoint_id")
	AttrPartnerID     = attribute.Key("hookstream.partner_id")
	AttrEventType     = attribute.Key("hookstream.event_type")
	AttrAttemptNo     = attribute.Key("hookstream.attempt_no")
	AttrTrigger       = attribute.Key("hookstream.trigger")
	AttrErrorCategory = attribute.Key("hookstream.error_category")
	AttrOutcome       = attribute.Key("hookstream.outcome")
	AttrRetryTier     = attribute.Key("hookstream.retry.tier")
	AttrCommitLSN     = attribute.Key("hookstream.commit_lsn")
	AttrHTTPStatus    = attribute.Key("http.response.status_code")
)

// Tracer makes hookstream's spans. A nil *Tracer is tracing off.
type Tracer struct {
	t trace.Tracer
}

// New returns the tracer of tp, or nil (tracing off) when tp is nil.
func New(tp trace.TracerProvider) *Tracer {
	if tp == nil {
		return nil
	}
	return &Tracer{t: tp.Tracer(instrumentation)}
}

// Hop is what a span is about: identifiers only. Empty fields are left out.
type Hop struct {
	EventID, DeliveryID, EndpointID, PartnerID, EventType string
	AttemptNo                                             int
	Trigger                                               string
}

// DeliveryHop is the hop of a delivery record.
func DeliveryHop(d records.Delivery) Hop {
	return Hop{EventID: d.EventID, DeliveryID: d.DeliveryID, EndpointID: d.EndpointID, PartnerID: d.PartnerID,
		EventType: d.EventType, AttemptNo: d.AttemptNo, Trigger: d.Trigger}
}

// AttemptHop is the hop of an attempt record.
func AttemptHop(a records.Attempt) Hop {
	return Hop{EventID: a.EventID, DeliveryID: a.DeliveryID, EndpointID: a.EndpointID, PartnerID: a.PartnerID,
		EventType: a.EventType, AttemptNo: a.AttemptNo, Trigger: a.Trigger}
}

func (h Hop) attributes() []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 7)
	for _, f := range []struct {
		key attribute.Key
		v   string
	}{{AttrEventID, h.EventID}, {AttrDeliveryID, h.DeliveryID}, {AttrEndpointID, h.EndpointID},
		{AttrPartnerID, h.PartnerID}, {AttrEventType, h.EventType}, {AttrTrigger, h.Trigger}} {
		if f.v != "" {
			kv = append(kv, f.key.String(f.v))
		}
	}
	if h.AttemptNo > 0 {
		kv = append(kv, AttrAttemptNo.Int(h.AttemptNo))
	}
	return kv
}

// Span is one hop's span. The zero Span (tracing off) does nothing.
type Span struct {
	s trace.Span
}

// Start starts the span name of hop, a child of the W3C traceparent parent; a parent that is
// empty or not a valid traceparent starts a new trace.
func (t *Tracer) Start(parent, name string, kind trace.SpanKind, hop Hop) Span {
	return t.StartAt(parent, name, kind, hop, time.Time{})
}

// StartAt is Start with the span's start time (zero: now), for a hop whose work began before
// the span could be made (a batch).
func (t *Tracer) StartAt(parent, name string, kind trace.SpanKind, hop Hop, at time.Time) Span {
	if t == nil {
		return Span{}
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(kind), trace.WithAttributes(hop.attributes()...)}
	if !at.IsZero() {
		opts = append(opts, trace.WithTimestamp(at))
	}
	_, s := t.t.Start(contextOf(parent), name, opts...)
	return Span{s: s}
}

// contextOf is a context holding the remote span context of traceparent, if it is valid.
func contextOf(traceparent string) context.Context {
	ctx := context.Background()
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{records.HeaderTraceparent: traceparent})
}

// Traceparent formats a span context as a W3C traceparent; "" when it is not valid.
func Traceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
	return c[records.HeaderTraceparent]
}

// Parse reads a W3C traceparent; ok is false when it is not one.
func Parse(traceparent string) (trace.SpanContext, bool) {
	sc := trace.SpanContextFromContext(contextOf(traceparent))
	return sc, sc.IsValid()
}

// Traceparent is the span's context as a W3C traceparent, for the next hop; "" when off.
func (s Span) Traceparent() string {
	if s.s == nil {
		return ""
	}
	return Traceparent(s.s.SpanContext())
}

// Set adds attributes to the span.
func (s Span) Set(kv ...attribute.KeyValue) {
	if s.s != nil {
		s.s.SetAttributes(kv...)
	}
}

// Fail marks the span failed; reason is a category or a short description of hookstream's
// own, never a receiver's response or an error that may quote a URL.
func (s Span) Fail(reason string) {
	if s.s != nil {
		s.s.SetStatus(codes.Error, reason)
	}
}

// End ends the span now.
func (s Span) End() {
	if s.s != nil {
		s.s.End()
	}
}

// EndAt ends the span at t.
func (s Span) EndAt(t time.Time) {
	if s.s != nil {
		s.s.End(trace.WithTimestamp(t))
	}
}

// EndAttempt ends the span of an HTTP attempt with its status (0: no response) and its error
// category ("" when delivered).
func (s Span) EndAttempt(status int, category string) {
	if s.s == nil {
		return
	}
	if status != 0 {
		s.s.SetAttributes(AttrHTTPStatus.Int(status))
	}
	if category != "" {
		s.s.SetAttributes(AttrErrorCategory.String(category))
		s.s.SetStatus(codes.Error, category)
	}
	s.s.End()
}

// Parent is the traceparent header of r; "" when r has none or t is nil (tracing off reads no
// header).
func (t *Tracer) Parent(r *kgo.Record) string {
	if t == nil {
		return ""
	}
	return Header(r.Headers)
}

// Header is the traceparent among headers, "" when there is none.
func Header(headers []kgo.RecordHeader) string {
	for _, h := range headers {
		if h.Key == records.HeaderTraceparent {
			return string(h.Value)
		}
	}
	return ""
}

// SetHeader sets the traceparent header of r to traceparent, replacing one r has; an empty
// traceparent leaves r as it is.
func SetHeader(r *kgo.Record, traceparent string) {
	if traceparent == "" {
		return
	}
	for i, h := range r.Headers {
		if h.Key == records.HeaderTraceparent {
			r.Headers[i].Value = []byte(traceparent)
			return
		}
	}
	r.Headers = append(r.Headers, kgo.RecordHeader{Key: records.HeaderTraceparent, Value: []byte(traceparent)})
}

// Context is ctx carrying the span, for InjectHTTP; ctx itself when tracing is off.
func (s Span) Context(ctx context.Context) context.Context {
	if s.s == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, s.s)
}

// InjectHTTP sets the traceparent request header to the context of the span in ctx (see
// Span.Context); a ctx without one sets nothing, so tracing off sends no traceparent.
func InjectHTTP(ctx context.Context, h http.Header) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return
	}
	h.Set(records.HeaderTraceparent, Traceparent(sc))
}
