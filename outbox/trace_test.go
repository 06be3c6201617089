package outbox_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/outbox"
)

// The trace context a platform gives Append is stored in the outbox row's traceparent column
// (migration 0014), which cdc makes the parent of the event's trace; none leaves it NULL, and
// a value that is no W3C traceparent is refused naming the field, with nothing written and the
// transaction usable.
func TestAppendStoresTheTraceContext(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	spanCtx := trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	const want = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

	for _, tt := range []struct {
		name string
		ctx  context.Context
		opts []outbox.AppendOption
		want *string
	}{
		{"none", ctx, nil, nil},
		{"WithTraceparent", ctx, []outbox.AppendOption{outbox.WithTraceparent(want)}, new(want)},
		{"WithTraceparent empty", ctx, []outbox.AppendOption{outbox.WithTraceparent("")}, nil},
		{"TraceFromContext", spanCtx, []outbox.AppendOption{outbox.TraceFromContext()}, new(want)},
		{"TraceFromContext without a span", ctx, []outbox.AppendOption{outbox.TraceFromContext()}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var id string
			err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
				var err error
				id, err = outbox.Append(tt.ctx, tx, validEvent(), tt.opts...)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var got *string
			if err := db.Pool.QueryRow(ctx, `SELECT traceparent FROM outbox_event WHERE event_id = $1`, id).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("traceparent column = %v, want %v", deref(got), deref(tt.want))
			}
		})
	}

	// W3C allows lowercase hex only; an all-zero id or version ff is invalid.
	for _, bad := range []string{"nonsense", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"} {
		err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			_, err := outbox.Append(ctx, tx, validEvent(), outbox.WithTraceparent(bad))
			var ve *outbox.ValidationError
			if !errors.As(err, &ve) || ve.Field != "traceparent" || !errors.Is(err, outbox.ErrInvalidField) {
				t.Errorf("traceparent %q: err = %v, want a ValidationError naming traceparent", bad, err)
			}
			// The transaction is still usable: nothing was sent to PostgreSQL.
			_, err = outbox.Append(ctx, tx, validEvent())
			return err
		})
		if err != nil {
			t.Errorf("traceparent %q: the transaction after the refusal: %v", bad, err)
		}
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
