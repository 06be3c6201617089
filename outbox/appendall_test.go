package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/outbox"
)

// AppendAll stores every event as Append would, in the order given, and returns their ids in
// that order.
func TestAppendAllStoresEveryEventInOrder(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	evs := make([]outbox.Event, 50)
	for i := range evs {
		evs[i] = validEvent()
		evs[i].Subject.ID = fmt.Sprintf("key_%03d", i)
	}
	evs[7].ID = outbox.NewEventID() // a writer's own id is kept
	evs[9].SchemaVersion = 1
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	var ids []string
	err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		var err error
		ids, err = outbox.AppendAll(ctx, tx, evs, outbox.WithTraceparent(tp))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(evs) || ids[7] != evs[7].ID {
		t.Fatalf("ids = %d (the 8th %q), want %d with the given id %q kept", len(ids), ids[7], len(evs), evs[7].ID)
	}
	rows, err := db.Pool.Query(ctx, `SELECT event_id, subject_id, partner_id, type, correlation_id, schema_version,
			payload->>'status', traceparent, now() - occurred_at < interval '1 minute'
		FROM outbox_event ORDER BY ctid`)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rows.Next() {
		var id, subject, partner, typ, corr, status, trace string
		var version int
		var recent bool
		if err := rows.Scan(&id, &subject, &partner, &typ, &corr, &version, &status, &trace, &recent); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("key_%03d", i)
		if i >= len(ids) || id != ids[i] || subject != want || partner != "partner_a" || typ != "api_key.status_changed" ||
			corr != "req_42" || version != 1 || status != "revoked" || trace != tp || !recent {
			t.Fatalf("row %d = %s %s %s %s %s v%d %s %s recent=%v, want %s with the event's fields", i, id, subject, partner, typ, corr, version, status, trace, recent, want)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(evs) {
		t.Fatalf("outbox holds %d rows, want %d", i, len(evs))
	}
}

// One refused event refuses the batch: the error names its index and wraps its
// *ValidationError, nothing is written, and the transaction stays usable.
func TestAppendAllRefusesTheBatchForOneBadEvent(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	evs := []outbox.Event{validEvent(), validEvent(), validEvent()}
	evs[2].Type = "Bad Type"
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	ids, err := outbox.AppendAll(ctx, tx, evs)
	var verr *outbox.ValidationError
	if !errors.As(err, &verr) || verr.Field != "type" || !errors.Is(err, outbox.ErrInvalidType) || !strings.Contains(err.Error(), "event 2 of 3") || ids != nil {
		t.Fatalf("AppendAll = %v, %v; want the type refusal of event 2 of 3", ids, err)
	}
	if _, err := outbox.AppendAll(ctx, tx, evs[:2]); err != nil {
		t.Fatalf("valid batch after a refusal: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, ``); n != 2 {
		t.Fatalf("outbox holds %d rows, want the 2 of the valid batch", n)
	}
}

// An id given twice in one batch, or one the outbox already holds, is ErrDuplicateEventID.
func TestAppendAllRefusesDuplicateIDs(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	held := validEvent()
	held.ID = outbox.NewEventID()
	twice := validEvent()
	twice.ID = outbox.NewEventID()
	for name, evs := range map[string][]outbox.Event{"twice in the batch": {twice, validEvent(), twice}, "already held": {validEvent(), held}} {
		t.Run(name, func(t *testing.T) {
			if name == "already held" {
				if err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error { _, err := outbox.Append(ctx, tx, held); return err }); err != nil {
					t.Fatal(err)
				}
			}
			before := countRows(t, db, ``)
			err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error { _, err := outbox.AppendAll(ctx, tx, evs); return err })
			if !errors.Is(err, outbox.ErrDuplicateEventID) {
				t.Fatalf("err = %v, want ErrDuplicateEventID", err)
			}
			if n := countRows(t, db, ``); n != before {
				t.Fatalf("outbox holds %d rows, want the %d from before", n, before)
			}
		})
	}
}

// An empty batch writes nothing and is no error.
func TestAppendAllOfNothing(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		ids, err := outbox.AppendAll(ctx, tx, nil)
		if len(ids) != 0 {
			t.Errorf("ids = %v", ids)
		}
		return err
	})
	if err != nil || countRows(t, db, ``) != 0 {
		t.Fatalf("err = %v, rows %d; want nothing", err, countRows(t, db, ``))
	}
}
