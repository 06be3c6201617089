package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrDuplicateEventID means the outbox already holds an event with this id: one event_id is one
// event (design.md section 1), and PostgreSQL refuses a second row with it whoever writes it
// (migration 0008), within the outbox retention. The error Append returns wraps it and the
// *pgconn.PgError (unique_violation). Unlike a validation error, the failed statement has aborted
// the transaction: roll it back, nothing in it can commit.
var ErrDuplicateEventID = errors.New("duplicate event id")

// Catalog decides which event types exist and what their data must look like. The event catalog
// with a JSON Schema per type (R4, R31) plugs in here; a Writer without one accepts any
// well-formed type.
type Catalog interface {
	// CheckEvent returns a *ValidationError when ev does not fit its type's schema.
	CheckEvent(ev Event) error
}

// Writer appends events to the outbox. The zero value is ready to use.
type Writer struct {
	Catalog Catalog
}

var defaultWriter Writer

// Append validates ev and inserts it into the outbox inside tx, returning its event id (ev.ID, or
// a new one). The event is published only if tx commits (R9). On a validation error nothing is
// written and the transaction stays usable; an id the outbox holds fails with
// ErrDuplicateEventID and aborts the transaction. Options store more beside the event: a trace
// context (WithTraceparent, TraceFromContext).
func Append(ctx context.Context, tx pgx.Tx, ev Event, opts ...AppendOption) (string, error) {
	return defaultWriter.Append(ctx, tx, ev, opts...)
}

// Append validates ev against the writer's catalog and inserts it inside tx; see the package-level
// Append.
func (w *Writer) Append(ctx context.Context, tx pgx.Tx, ev Event, opts ...AppendOption) (string, error) {
	ev, err := ev.validate()
	if err != nil {
		return "", err
	}
	o, err := collectOptions(ctx, opts)
	if err != nil {
		return "", err
	}
	if w.Catalog != nil {
		if err := w.Catalog.CheckEvent(ev); err != nil {
			return "", err
		}
	}
	id := ev.ID
	if id == "" {
		id = NewEventID()
	}
	_, err = tx.Exec(ctx, `INSERT INTO outbox_event
		(event_id, partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload, correlation_id, traceparent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULLIF($10, ''))`,
		id, ev.PartnerID, ev.Type, ev.Subject.Type, ev.Subject.ID, ev.OccurredAt, ev.SchemaVersion, string(ev.Data), ev.CorrelationID, o.traceparent)
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "23505" {
		// unique_violation: every unique key of the outbox (the id claim of migration 0008, the
		// partitions' (event_id, occurred_at)) is a key on the event id.
		return "", fmt.Errorf("outbox: insert %s (%s): %w: %w", id, ev.Type, ErrDuplicateEventID, err)
	}
	if err != nil {
		return "", fmt.Errorf("outbox: insert %s (%s): %w", id, ev.Type, err)
	}
	return id, nil
}
