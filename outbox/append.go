package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	ev, id, args, err := w.insertArgs(ctx, ev, opts)
	if err != nil {
		return "", err
	}
	if _, err := tx.Exec(ctx, insertSQL, args...); err != nil {
		return "", insertError(fmt.Sprintf("%s (%s)", id, ev.Type), err)
	}
	return id, nil
}

// insertSQL inserts one event; insertArgs gives its arguments.
const insertSQL = `INSERT INTO outbox_event
	(event_id, partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload, correlation_id, traceparent)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULLIF($10, ''))`

// insertArgs checks ev and returns it with its defaults set, its event id (ev.ID, or a new one)
// and the arguments of insertSQL.
func (w *Writer) insertArgs(ctx context.Context, ev Event, opts []AppendOption) (Event, string, []any, error) {
	ev, err := w.check(ev)
	if err != nil {
		return Event{}, "", nil, err
	}
	o, err := collectOptions(ctx, opts)
	if err != nil {
		return Event{}, "", nil, err
	}
	id := ev.ID
	if id == "" {
		id = NewEventID()
	}
	return ev, id, []any{id, ev.PartnerID, ev.Type, ev.Subject.Type, ev.Subject.ID, ev.OccurredAt, ev.SchemaVersion,
		string(ev.Data), ev.CorrelationID, o.traceparent}, nil
}

// Queue validates ev and queues its insert on b, returning its event id (ev.ID, or a new one):
// Append for a platform that sends its transaction as one pgx.Batch. The event is written when b
// is sent, and published only if the transaction b runs in commits (R9). Sent outside an explicit
// transaction (conn.SendBatch or pool.SendBatch), the statements of a batch run as one implicit
// transaction that commits when the last of them succeeds: the platform's state change and its
// event then commit together in one round trip, where BEGIN, the statements and COMMIT take one
// each. A refused row fails the batch and nothing of it commits; BatchResults.Close returns the
// error Append would (ErrDuplicateEventID wrapping PostgreSQL's unique_violation), where reading
// the statement's own result gives the *pgconn.PgError alone. On a validation error nothing is
// queued and b stays usable.
func Queue(ctx context.Context, b *pgx.Batch, ev Event, opts ...AppendOption) (string, error) {
	return defaultWriter.Queue(ctx, b, ev, opts...)
}

// Queue validates ev against the writer's catalog and queues its insert on b; see the
// package-level Queue.
func (w *Writer) Queue(ctx context.Context, b *pgx.Batch, ev Event, opts ...AppendOption) (string, error) {
	if b == nil {
		return "", errors.New("outbox: Queue needs a batch")
	}
	ev, id, args, err := w.insertArgs(ctx, ev, opts)
	if err != nil {
		return "", err
	}
	what := fmt.Sprintf("%s (%s)", id, ev.Type)
	b.Queue(insertSQL, args...).Fn = func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return insertError(what, err)
		}
		return nil
	}
	return id, nil
}

// check validates ev and consults the writer's catalog, returning ev with its defaults set.
func (w *Writer) check(ev Event) (Event, error) {
	ev, err := ev.validate()
	if err != nil {
		return Event{}, err
	}
	if w.Catalog != nil {
		if err := w.Catalog.CheckEvent(ev); err != nil {
			return Event{}, err
		}
	}
	return ev, nil
}

// insertError names what failed to insert, and marks a held id as ErrDuplicateEventID.
func insertError(what string, err error) error {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "23505" {
		// unique_violation: every unique key of the outbox (the id claim of migration 0008, the
		// partitions' (event_id, occurred_at)) is a key on the event id.
		return fmt.Errorf("outbox: insert %s: %w: %w", what, ErrDuplicateEventID, err)
	}
	return fmt.Errorf("outbox: insert %s: %w", what, err)
}

// AppendAll validates every event of evs and inserts them all inside tx in one statement,
// returning their ids in the order of evs; the events are published in that order, as if each
// had been appended in turn. A platform that writes many events in one transaction (a usage
// period closed for many customers) saves a round trip and an executor start per event. Each
// event is checked as Append checks it, against the writer's catalog; if one is refused, the
// error names its index and wraps its *ValidationError, and nothing is written. Options apply to
// every event. An id the outbox holds, or one given twice in evs, fails with
// ErrDuplicateEventID and aborts the transaction.
func AppendAll(ctx context.Context, tx pgx.Tx, evs []Event, opts ...AppendOption) ([]string, error) {
	return defaultWriter.AppendAll(ctx, tx, evs, opts...)
}

// AppendAll validates evs against the writer's catalog and inserts them inside tx; see the
// package-level AppendAll.
func (w *Writer) AppendAll(ctx context.Context, tx pgx.Tx, evs []Event, opts ...AppendOption) ([]string, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	o, err := collectOptions(ctx, opts)
	if err != nil {
		return nil, err
	}
	n := len(evs)
	var (
		ids          = make([]string, n)
		partners     = make([]string, n)
		types        = make([]string, n)
		subjectTypes = make([]string, n)
		subjectIDs   = make([]string, n)
		occurred     = make([]time.Time, n)
		versions     = make([]int32, n)
		payloads     = make([]string, n)
		correlations = make([]string, n)
	)
	for i, ev := range evs {
		ev, err := w.check(ev)
		if err != nil {
			return nil, fmt.Errorf("outbox: event %d of %d: %w", i, n, err)
		}
		if ids[i] = ev.ID; ids[i] == "" {
			ids[i] = NewEventID()
		}
		partners[i], types[i] = ev.PartnerID, ev.Type
		subjectTypes[i], subjectIDs[i] = ev.Subject.Type, ev.Subject.ID
		occurred[i], versions[i] = ev.OccurredAt, int32(ev.SchemaVersion)
		payloads[i], correlations[i] = string(ev.Data), ev.CorrelationID
	}
	// unnest yields the rows in array order, and rows are inserted, so published, in that order.
	_, err = tx.Exec(ctx, `INSERT INTO outbox_event
		(event_id, partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload, correlation_id, traceparent)
		SELECT id, partner, typ, subject_type, subject_id, occurred, version, payload::jsonb, correlation, NULLIF($10, '')
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::int[], $8::text[], $9::text[])
			AS e(id, partner, typ, subject_type, subject_id, occurred, version, payload, correlation)`,
		ids, partners, types, subjectTypes, subjectIDs, occurred, versions, payloads, correlations, o.traceparent)
	if err != nil {
		return nil, insertError(fmt.Sprintf("%d events", n), err)
	}
	return ids, nil
}
