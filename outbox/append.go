package outbox

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

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

// Append validates ev and inserts it into the outbox inside tx, returning its new event id.
// The event is published only if tx commits (R9). On a validation error nothing is written and
// the transaction stays usable.
func Append(ctx context.Context, tx pgx.Tx, ev Event) (string, error) {
	return defaultWriter.Append(ctx, tx, ev)
}

// Append validates ev against the writer's catalog and inserts it inside tx; see the package-level
// Append.
func (w *Writer) Append(ctx context.Context, tx pgx.Tx, ev Event) (string, error) {
	ev, err := ev.validate()
	if err != nil {
		return "", err
	}
	if w.Catalog != nil {
		if err := w.Catalog.CheckEvent(ev); err != nil {
			return "", err
		}
	}
	id := NewEventID()
	_, err = tx.Exec(ctx, `INSERT INTO outbox_event
		(event_id, partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload, correlation_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		id, ev.PartnerID, ev.Type, ev.Subject.Type, ev.Subject.ID, ev.OccurredAt, ev.SchemaVersion, string(ev.Data), ev.CorrelationID)
	if err != nil {
		return "", fmt.Errorf("outbox: insert %s (%s): %w", id, ev.Type, err)
	}
	return id, nil
}
