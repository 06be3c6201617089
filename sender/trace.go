package sender

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/tracing"
)

// startAttempt starts the span of an attempt of d, the child of the delivery record's trace
// context, and returns ctx carrying it, which the request's traceparent header is set from.
// With tracing off it returns ctx and a zero span, at no cost.
func (s *Sender) startAttempt(ctx context.Context, d *records.Delivery) (context.Context, tracing.Span) {
	if s.tracer == nil {
		return ctx, tracing.Span{}
	}
	span := s.tracer.Start(d.Traceparent, tracing.SpanSenderAttempt, trace.SpanKindClient, tracing.DeliveryHop(*d))
	return span.Context(ctx), span
}

// endAttempt ends an attempt's span with its outcome and keeps its context in res for the
// attempt and retry records.
func endAttempt(span tracing.Span, res *result) {
	res.traceparent = span.Traceparent()
	switch {
	case res.abandoned:
		span.Fail("abandoned: the partition moved or the sender stopped; the next owner sends it again")
		span.End()
	case res.failure != nil:
		span.EndAttempt(res.status, res.failure.Category)
	default:
		span.EndAttempt(res.status, "")
	}
}
