package outbox

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// An AppendOption adds to what Append stores beside the event.
type AppendOption struct {
	apply func(ctx context.Context, o *appendOptions)
}

type appendOptions struct {
	traceparent string // W3C traceparent, "" for none
	traceErr    *ValidationError
}

// WithTraceparent stores a W3C trace context (https://www.w3.org/TR/trace-context/) with the
// event, as "00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>": with tracing on, the
// event's spans in hookstream join that trace, and the partner's request carries it in its
// traceparent header. Empty stores none. A value that is not a valid traceparent is refused
// with a *ValidationError (ErrInvalidField, field "traceparent") and nothing is written.
func WithTraceparent(traceparent string) AppendOption {
	return AppendOption{apply: func(_ context.Context, o *appendOptions) {
		o.traceparent, o.traceErr = "", nil
		if traceparent == "" {
			return
		}
		sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
			propagation.MapCarrier{"traceparent": traceparent}))
		if !sc.IsValid() {
			o.traceErr = invalid(ErrInvalidField, "traceparent", "%.64q is not a W3C traceparent like 00-<32 hex>-<16 hex>-01", traceparent)
			return
		}
		o.traceparent = formatTraceparent(sc)
	}}
}

// TraceFromContext stores the trace context of the OpenTelemetry span in Append's ctx with the
// event (see WithTraceparent), so the platform's own trace of the request that changed the state
// continues through hookstream. A ctx without a valid span stores none.
func TraceFromContext() AppendOption {
	return AppendOption{apply: func(ctx context.Context, o *appendOptions) {
		o.traceparent, o.traceErr = formatTraceparent(trace.SpanContextFromContext(ctx)), nil
	}}
}

func formatTraceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
	return c["traceparent"]
}

func collectOptions(ctx context.Context, opts []AppendOption) (appendOptions, error) {
	var o appendOptions
	for _, opt := range opts {
		if opt.apply != nil {
			opt.apply(ctx, &o)
		}
	}
	if o.traceErr != nil {
		return o, o.traceErr
	}
	return o, nil
}
