package outbox_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// stateTable stands for the platform's own table: the state change an event records.
func stateTable(t *testing.T, db *testenv.Database) {
	t.Helper()
	db.Exec(t, `CREATE TABLE platform_state (id text PRIMARY KEY, status text NOT NULL)`)
}

// R9 in one round trip: a batch sent outside an explicit transaction commits the platform's
// state change and the event queued beside it together.
func TestQueueCommitsWithTheBatch(t *testing.T) {
	db := newDatabase(t)
	stateTable(t, db)
	ctx := context.Background()
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO platform_state (id, status) VALUES ($1, $2)`, "key_123", "revoked")
	id, err := outbox.Queue(ctx, b, validEvent())
	if err != nil {
		t.Fatal(err)
	}
	if countRows(t, db, `WHERE event_id = $1`, id) != 0 {
		t.Fatal("the event was written before the batch was sent")
	}
	if err := db.Pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, `WHERE event_id = $1 AND partner_id = 'partner_a' AND correlation_id = 'req_42'`, id); n != 1 {
		t.Fatalf("rows for %s = %d, want 1", id, n)
	}
	if !claimed(t, db, id) {
		t.Fatalf("%s holds no claim on its id", id)
	}
	var status string
	if err := db.Pool.QueryRow(ctx, `SELECT status FROM platform_state WHERE id = 'key_123'`).Scan(&status); err != nil || status != "revoked" {
		t.Fatalf("state = %q (%v), want revoked", status, err)
	}
}

// A refused row fails the batch with Append's error, and nothing of the batch commits: the
// statements before it are rolled back with it, the implicit transaction's promise.
func TestQueueRefusalRollsBackTheBatch(t *testing.T) {
	db := newDatabase(t)
	stateTable(t, db)
	ctx := context.Background()
	held := appendCommitted(t, db, validEvent())

	b := &pgx.Batch{}
	b.Queue(`INSERT INTO platform_state (id, status) VALUES ($1, $2)`, "key_123", "revoked")
	dup := validEvent()
	dup.ID = held
	if _, err := outbox.Queue(ctx, b, dup); err != nil {
		t.Fatal(err)
	}
	b.Queue(`INSERT INTO platform_state (id, status) VALUES ($1, $2)`, "key_456", "revoked")
	err := db.Pool.SendBatch(ctx, b).Close()
	wantDuplicate(t, err)
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM platform_state`); n != 0 {
		t.Fatalf("%d state rows committed beside a refused event, want 0", n)
	}
	if n := countRows(t, db, `WHERE event_id = $1`, held); n != 1 {
		t.Fatalf("rows for %s = %d, want the first one alone", held, n)
	}

	// The same inside an explicit transaction, which the refusal aborts.
	err = pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		if _, err := outbox.Queue(ctx, b, dup); err != nil {
			t.Fatal(err)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	wantDuplicate(t, err)
}

// A bad event is refused at Queue, as Append refuses it: nothing is queued and the batch stays
// usable.
func TestQueueRefusesBadEventsAndQueuesNothing(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	b := &pgx.Batch{}
	bad := validEvent()
	bad.Type = "APIKey Revoked"
	_, err := outbox.Queue(ctx, b, bad)
	if !errors.Is(err, outbox.ErrInvalidType) {
		t.Fatalf("err = %v, want ErrInvalidType", err)
	}
	if _, ok := errors.AsType[*outbox.ValidationError](err); !ok {
		t.Fatalf("err = %v, want a *ValidationError", err)
	}
	w := outbox.Writer{Catalog: refuseAll{}}
	if _, err := w.Queue(ctx, b, validEvent()); err == nil {
		t.Fatal("the writer's catalog was not consulted")
	}
	if b.Len() != 0 {
		t.Fatalf("%d statements queued for refused events, want 0", b.Len())
	}
	if _, err := outbox.Queue(ctx, nil, validEvent()); err == nil {
		t.Fatal("Queue on no batch succeeded")
	}
	id, err := outbox.Queue(ctx, b, validEvent())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, `WHERE event_id = $1`, id); n != 1 {
		t.Fatalf("rows for %s = %d, want 1", id, n)
	}
}
