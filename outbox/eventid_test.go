package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// appendCommitted appends ev in a transaction of its own and returns its id.
func appendCommitted(t *testing.T, db *testenv.Database, ev outbox.Event) string {
	t.Helper()
	var id string
	err := pgx.BeginFunc(context.Background(), db.Pool, func(tx pgx.Tx) error {
		var err error
		id, err = outbox.Append(context.Background(), tx, ev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// claimed reports whether the outbox's id table holds id.
func claimed(t *testing.T, db *testenv.Database, id string) bool {
	t.Helper()
	var ok bool
	if err := db.Pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM outbox_event_id WHERE event_id = $1)`, id).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// wantDuplicate fails t unless err is Append's duplicate-id error over PostgreSQL's
// unique_violation on the id claim.
func wantDuplicate(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, outbox.ErrDuplicateEventID) {
		t.Fatalf("err = %v, want ErrDuplicateEventID", err)
	}
	if _, ok := errors.AsType[*outbox.ValidationError](err); ok {
		t.Fatalf("err = %v is a validation error; the event was valid", err)
	}
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	if !ok || pgErr.Code != "23505" || pgErr.ConstraintName != "outbox_event_id_pkey" {
		t.Fatalf("err = %v, want it to wrap the unique_violation on outbox_event_id_pkey", err)
	}
}

// One event_id is one event (R1): a second Append with an id the outbox holds fails with
// ErrDuplicateEventID, at another instant or the same one, for another partner or the same, and
// the caller's transaction, state change included, does not commit.
func TestAppendDuplicateIDIsRefused(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	first := validEvent()
	first.ID = outbox.NewEventID()
	first.OccurredAt = time.Now().UTC().Truncate(time.Microsecond)
	if id := appendCommitted(t, db, first); id != first.ID {
		t.Fatalf("Append returned %s, want the given id %s", id, first.ID)
	}

	cases := []struct {
		name string
		edit func(*outbox.Event)
	}{
		{"another partner an hour later", func(e *outbox.Event) { e.PartnerID = "partner_b"; e.OccurredAt = first.OccurredAt.Add(time.Hour) }},
		{"another day's partition", func(e *outbox.Event) { e.OccurredAt = yesterday(first.OccurredAt) }},
		{"the same instant", func(e *outbox.Event) { e.OccurredAt = first.OccurredAt }},
		{"the default partition", func(e *outbox.Event) { e.OccurredAt = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC) }},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			second := validEvent()
			second.ID = first.ID
			c.edit(&second)
			partner := fmt.Sprintf("partner_%d", i)
			var err error
			// An old occurred_at is refused since migration 0021: the default-partition row
			// stands for one committed before it.
			db.WithoutOutboxChecks(t, func() {
				err = pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `INSERT INTO partner (id) VALUES ($1)`, partner); err != nil {
						return err
					}
					id, err := outbox.Append(ctx, tx, second)
					if id != "" {
						t.Errorf("id %q returned with the error", id)
					}
					return err
				})
			})
			wantDuplicate(t, err)
			if n := countRows(t, db, `WHERE event_id = $1`, first.ID); n != 1 {
				t.Fatalf("%d rows with %s, want only the first", n, first.ID)
			}
			var partners int
			if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM partner WHERE id = $1`, partner).Scan(&partners); err != nil || partners != 0 {
				t.Fatalf("the rolled-back state change committed (%d rows, %v)", partners, err)
			}
		})
	}

	// A caller that ignores the error and commits commits nothing either: the failed statement
	// aborted the transaction.
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op once the commit below has ended it
	if _, err := tx.Exec(ctx, `INSERT INTO partner (id) VALUES ('partner_c')`); err != nil {
		t.Fatal(err)
	}
	_, err = outbox.Append(ctx, tx, first)
	wantDuplicate(t, err)
	if err := tx.Commit(ctx); err == nil {
		t.Fatal("commit after the duplicate succeeded")
	}
	var partners int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM partner WHERE id = 'partner_c'`).Scan(&partners); err != nil || partners != 0 {
		t.Fatalf("state change beside the duplicate committed (%d rows, %v)", partners, err)
	}
	if n := countRows(t, db, ``); n != 1 {
		t.Fatalf("outbox holds %d rows, want 1", n)
	}
}

// An id that is not evt_ + an upper-case ULID is refused before anything is written, as every
// bad field is: a lower-case id would be a second spelling of one event.
func TestAppendRefusesMalformedID(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	for _, id := range []string{"evt_nope", "01J0000000000000000000000A", "evt_01J0000000000000000000000A0",
		strings.ToLower(outbox.NewEventID()), "evt_01J0000000000000000000000a"} {
		ev := validEvent()
		ev.ID = id
		err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			_, err := outbox.Append(ctx, tx, ev)
			return err
		})
		verr, ok := errors.AsType[*outbox.ValidationError](err)
		if !ok || verr.Field != "id" || !errors.Is(err, outbox.ErrInvalidField) {
			t.Fatalf("id %q: err = %v, want a *ValidationError on id", id, err)
		}
	}
	if n := countRows(t, db, ``); n != 0 {
		t.Fatalf("outbox holds %d rows, want 0", n)
	}
}

// Two transactions appending one id at once: the second waits for the first and fails once it
// commits, so the id is never committed twice.
func TestConcurrentAppendsOfOneID(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	ev := validEvent()
	ev.ID = outbox.NewEventID()
	tx1, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := outbox.Append(ctx, tx1, ev); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		second <- pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			other := ev
			other.PartnerID = "partner_b"
			other.OccurredAt = time.Now().Add(time.Hour)
			_, err := outbox.Append(ctx, tx, other)
			return err
		})
	}()
	select {
	case err := <-second:
		t.Fatalf("second append returned while the first was uncommitted: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-second:
		wantDuplicate(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("second append still waiting 30 s after the first committed")
	}
	if n := countRows(t, db, `WHERE event_id = $1`, ev.ID); n != 1 {
		t.Fatalf("%d rows with %s, want 1", n, ev.ID)
	}
}

// Whatever writes the outbox, PostgreSQL refuses a second row with an id it holds: an INSERT
// through the root or straight into a partition, several rows of one statement, COPY, and an
// UPDATE that would give a row another's id or move it.
func TestRawSQLDuplicatesAreRefused(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	if _, err := outbox.CreatePartitions(ctx, db.Pool, time.Now()); err != nil {
		t.Fatal(err)
	}
	id := appendCommitted(t, db, validEvent())
	other := appendCommitted(t, db, validEvent())
	fresh := outbox.NewEventID()
	today := "outbox_event_" + time.Now().UTC().Format("20060102")
	const cols = `(event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)`

	cases := []struct {
		name string
		code string
		run  func() error
	}{
		{"insert through the root", "23505", func() error {
			_, err := db.Pool.Exec(ctx, `INSERT INTO outbox_event `+cols+`
				VALUES ($1, 'partner_b', 'customer.created', 'customer', 'c1', now() + interval '1 hour', '{}')`, id)
			return err
		}},
		{"insert into today's partition", "23505", func() error {
			_, err := db.Pool.Exec(ctx, `INSERT INTO `+today+` `+cols+`
				VALUES ($1, 'partner_b', 'customer.created', 'customer', 'c1', now(), '{}')`, id)
			return err
		}},
		{"insert into the default partition", "23505", func() (err error) {
			// Unchecked: an old occurred_at is refused since migration 0021.
			db.WithoutOutboxChecks(t, func() {
				_, err = db.Pool.Exec(ctx, `INSERT INTO outbox_event_default `+cols+`
					VALUES ($1, 'partner_b', 'customer.created', 'customer', 'c1', '2001-01-01', '{}')`, id)
			})
			return err
		}},
		{"two rows of one statement", "23505", func() error {
			_, err := db.Pool.Exec(ctx, `INSERT INTO outbox_event `+cols+`
				VALUES ($1, 'partner_a', 'customer.created', 'customer', 'c1', now(), '{}'),
				       ($1, 'partner_b', 'customer.created', 'customer', 'c1', now() + interval '1 second', '{}')`, fresh)
			return err
		}},
		{"copy", "23505", func() error {
			_, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"outbox_event"},
				[]string{"event_id", "partner_id", "type", "subject_type", "subject_id", "occurred_at", "payload"},
				pgx.CopyFromRows([][]any{{id, "partner_b", "customer.created", "customer", "c1", time.Now().Add(time.Minute), map[string]any{}}}))
			return err
		}},
		{"update to another row's id", "23000", func() error {
			_, err := db.Pool.Exec(ctx, `UPDATE outbox_event SET event_id = $1 WHERE event_id = $2`, id, other)
			return err
		}},
		{"update of the instant", "23000", func() error {
			_, err := db.Pool.Exec(ctx, `UPDATE outbox_event SET occurred_at = occurred_at + interval '2 days' WHERE event_id = $1`, id)
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != c.code {
				t.Fatalf("err = %v, want SQLSTATE %s", err, c.code)
			}
		})
	}
	for _, want := range []struct {
		id string
		n  int
	}{{id, 1}, {other, 1}, {fresh, 0}} {
		if n := countRows(t, db, `WHERE event_id = $1`, want.id); n != want.n {
			t.Errorf("%d rows with %s, want %d", n, want.id, want.n)
		}
	}
	if n := countRows(t, db, ``); n != 2 {
		t.Fatalf("outbox holds %d rows, want the 2 appended", n)
	}
}

// Retention takes the ids with the rows: DropPartitions removes the claims of the partitions it
// drops and of the default-partition rows it deletes, and no others, so the id table does not
// outgrow the outbox. A dropped event's id can then be written again: the guarantee holds
// within the outbox retention. A row moved out of the default partition keeps its claim.
func TestRetentionReleasesEventIDs(t *testing.T) {
	db := newDatabase(t)
	ctx := context.Background()
	at := func(ts time.Time) outbox.Event {
		ev := validEvent()
		ev.ID = outbox.NewEventID()
		ev.OccurredAt = ts
		return ev
	}
	// The old rows stand for rows committed before migration 0021, which refuses their
	// occurred_at: the checks are off, the claim on (as testenv's WithoutOutboxChecks leaves it).
	db.Exec(t, `ALTER TABLE outbox_event DISABLE TRIGGER outbox_event_accept_row`)
	db.Exec(t, `CREATE TRIGGER outbox_event_claim_only BEFORE INSERT ON outbox_event
		FOR EACH ROW EXECUTE FUNCTION outbox_claim_event_id()`)
	moved := appendCommitted(t, db, at(time.Date(2020, 2, 3, 8, 0, 0, 0, time.UTC))) // default partition, until created below
	if _, err := outbox.CreatePartitions(ctx, db.Pool, time.Date(2020, 2, 4, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	var table string
	if err := db.Pool.QueryRow(ctx, `SELECT tableoid::regclass::text FROM outbox_event WHERE event_id = $1`, moved).Scan(&table); err != nil || table != "outbox_event_20200203" {
		t.Fatalf("moved event in %q (%v), want outbox_event_20200203", table, err)
	}
	if !claimed(t, db, moved) {
		t.Fatal("the move out of the default partition lost the event's claim")
	}
	dup := at(time.Date(2020, 2, 3, 9, 0, 0, 0, time.UTC))
	dup.ID = moved
	wantDuplicate(t, pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error { _, err := outbox.Append(ctx, tx, dup); return err }))

	dropped := appendCommitted(t, db, at(time.Date(2020, 2, 3, 10, 0, 0, 0, time.UTC)))
	stray := appendCommitted(t, db, at(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))) // default partition
	sameDay := appendCommitted(t, db, at(time.Date(2020, 2, 4, 10, 0, 0, 0, time.UTC)))
	current := appendCommitted(t, db, at(time.Time{}))

	// A bound in the middle of 2020-02-04: that day's partition stays, and so do its claims.
	names, err := outbox.DropPartitions(ctx, db.Pool, time.Date(2020, 2, 4, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "outbox_event_20200203" {
		t.Fatalf("dropped %v, want outbox_event_20200203", names)
	}
	for _, c := range []struct {
		id   string
		kept bool
	}{{moved, false}, {dropped, false}, {stray, false}, {sameDay, true}, {current, true}} {
		if got := claimed(t, db, c.id); got != c.kept {
			t.Errorf("claim of %s kept = %v, want %v", c.id, got, c.kept)
		}
	}
	var claims, rows int
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM outbox_event_id), (SELECT count(*) FROM outbox_event)`).Scan(&claims, &rows); err != nil {
		t.Fatal(err)
	}
	if claims != rows {
		t.Fatalf("%d claims for %d outbox rows after retention", claims, rows)
	}

	reuse := validEvent()
	reuse.ID = dropped
	if id := appendCommitted(t, db, reuse); id != dropped {
		t.Fatalf("reusing an expired id returned %s", id)
	}
	again := validEvent()
	again.ID = sameDay
	wantDuplicate(t, pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error { _, err := outbox.Append(ctx, tx, again); return err }))
}

// yesterday is an instant of the UTC day before at's that the outbox accepts at at (migration
// 0021: no earlier than a day back): midway between at - 24 h and at's midnight.
func yesterday(at time.Time) time.Time {
	midnight := at.UTC().Truncate(24 * time.Hour)
	return at.Add(-24 * time.Hour).Add(midnight.Sub(at.Add(-24*time.Hour)) / 2)
}
