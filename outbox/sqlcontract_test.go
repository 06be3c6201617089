package outbox_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// The SQL contract for writers outside Go (migration 0013): a raw INSERT of a row the pipeline
// cannot accept is refused at once, with an error that names the field, and claims no id; a
// good row goes in.
func TestSQLContractRefusesBadRows(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	db.Exec(t, `INSERT INTO partner (id) VALUES ('pa')`)
	insert := `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload)
		VALUES ($1, $2, $3, $4, $5, now(), $6, $7::jsonb)`
	type row struct {
		id, partner, typ, subjectType, subjectID string
		version                                  int
		payload                                  string
	}
	good := func() row {
		return row{outbox.NewEventID(), "pa", "customer.created", "customer", "cus_1", 1, `{"customer_id":"cus_1"}`}
	}
	cases := []struct {
		name       string
		change     func(*row)
		constraint string
		message    string
	}{
		{"id without prefix", func(r *row) { r.id = strings.TrimPrefix(r.id, "evt_") }, "outbox_event_event_id_format", "is not evt_ followed by a ULID"},
		{"id not a ULID", func(r *row) { r.id = "evt_42" }, "outbox_event_event_id_format", "'evt_42' is not evt_ followed by a ULID"},
		{"id with a letter outside Crockford", func(r *row) { r.id = "evt_01JBADBADBADBADBADBADBADU" }, "outbox_event_event_id_format", "is not evt_"},
		{"id in lower case", func(r *row) { r.id = strings.ToLower(r.id) }, "outbox_event_event_id_format", "is not evt_ followed by a ULID in upper case"},
		{"id with one lower-case letter", func(r *row) { r.id = r.id[:len(r.id)-1] + "z" }, "outbox_event_event_id_format", "in upper case"},
		{"empty partner", func(r *row) { r.partner = "" }, "outbox_event_partner_id_required", "partner_id must be 1 to 255 characters"},
		{"malformed type", func(r *row) { r.typ = "Customer Created" }, "outbox_event_type_format", "type 'Customer Created' is not lowercase dotted words"},
		{"one-word type", func(r *row) { r.typ = "customer" }, "outbox_event_type_format", "is not lowercase dotted words"},
		{"empty subject", func(r *row) { r.subjectID = "" }, "outbox_event_subject_required", "subject_type and subject_id"},
		{"schema version 0", func(r *row) { r.version = 0 }, "outbox_event_schema_version_positive", "schema_version must be at least 1, got 0"},
		{"array payload", func(r *row) { r.payload = `[1,2]` }, "outbox_event_payload_object", "payload must be a JSON object, got array"},
		{"oversized payload", func(r *row) { r.payload = `{"filler":"` + strings.Repeat("x", 900<<10) + `"}` }, "outbox_event_payload_size", "limit 917504 (896 KiB)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.change(&r)
			_, err := db.Pool.Exec(ctx, insert, r.id, r.partner, r.typ, r.subjectType, r.subjectID, r.version, r.payload)
			pgErr, ok := errors.AsType[*pgconn.PgError](err)
			if !ok || pgErr.ConstraintName != tc.constraint || !strings.Contains(pgErr.Message, tc.message) {
				t.Fatalf("err = %v, want %s: ...%s", err, tc.constraint, tc.message)
			}
			if len(pgErr.Message) > 300 {
				t.Errorf("message of %d bytes: the row is not dumped", len(pgErr.Message))
			}
			if claimed(t, db, r.id) {
				t.Errorf("a refused row claimed its id %s", r.id)
			}
		})
	}
	r := good()
	if _, err := db.Pool.Exec(ctx, insert, r.id, r.partner, r.typ, r.subjectType, r.subjectID, r.version, r.payload); err != nil {
		t.Fatalf("a good row: %v", err)
	}
	// The largest payload outbox.Append takes is well inside the SQL limit.
	big := `{"filler":"` + strings.Repeat("x", outbox.MaxDataBytes-20) + `"}`
	r = good()
	if _, err := db.Pool.Exec(ctx, insert, r.id, r.partner, r.typ, r.subjectType, r.subjectID, r.version, big); err != nil {
		t.Fatalf("a payload Append accepts: %v", err)
	}
}

// A row the envelope checks accept but the pipeline would deliver wrongly is refused at the
// INSERT too (migration 0021), by raw SQL and through Append alike, and claims no id: a partner
// the partner table does not hold (published to nobody), an occurred_at outside
// [now - 1 day, now + 1 hour] (1970, 2100: a writer's bug, delivered as if true), a type the
// catalog reserves (webhook.test, delivered like a business event). The window's edges inside
// it are accepted.
func TestSQLContractRefusesRowsOutOfContext(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	db.Exec(t, `INSERT INTO partner (id) VALUES ('pa')`)
	insert := `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ($1, $2, $3, 'customer', 'cus_1', $4, '{"customer_id":"cus_1"}')`
	type row struct {
		partner, typ string
		at           time.Time
	}
	now := time.Now()
	cases := []struct {
		name       string
		row        row
		code       string
		constraint string
		message    string
	}{
		{"unknown partner", row{"nobody", "customer.created", now}, "23503", "outbox_event_partner_exists", "partner 'nobody' does not exist"},
		{"partner in another case", row{"PA", "customer.created", now}, "23503", "outbox_event_partner_exists", "does not exist"},
		{"1970", row{"pa", "customer.created", time.Unix(0, 0)}, "23514", "outbox_event_occurred_at_window", "occurred_at 1970-01-01T00:00:00.000000Z is outside [now - 1 day, now + 1 hour]"},
		{"2100", row{"pa", "customer.created", time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}, "23514", "outbox_event_occurred_at_window", "2100-01-01T00:00:00.000000Z is outside"},
		{"25 hours ago", row{"pa", "customer.created", now.Add(-25 * time.Hour)}, "23514", "outbox_event_occurred_at_window", "is outside"},
		{"2 hours ahead", row{"pa", "customer.created", now.Add(2 * time.Hour)}, "23514", "outbox_event_occurred_at_window", "is outside"},
	}
	for _, typ := range eventcatalog.ReservedTypes() {
		cases = append(cases, struct {
			name       string
			row        row
			code       string
			constraint string
			message    string
		}{"reserved " + typ, row{"pa", typ, now}, "23514", "outbox_event_type_reserved", "type '" + typ + "' is reserved"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := outbox.NewEventID()
			_, err := db.Pool.Exec(ctx, insert, id, tc.row.partner, tc.row.typ, tc.row.at)
			pgErr, ok := errors.AsType[*pgconn.PgError](err)
			if !ok || pgErr.Code != tc.code || pgErr.ConstraintName != tc.constraint || !strings.Contains(pgErr.Message, tc.message) {
				t.Fatalf("raw SQL: err = %v, want %s %s: ...%s", err, tc.code, tc.constraint, tc.message)
			}
			if claimed(t, db, id) {
				t.Errorf("a refused row claimed its id %s", id)
			}
			// The application writing through Append gets the same error, wrapped.
			tx, err := db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			_, err = outbox.Append(ctx, tx, outbox.Event{PartnerID: tc.row.partner, Type: tc.row.typ,
				Subject: outbox.Subject{Type: "customer", ID: "cus_1"}, OccurredAt: tc.row.at, Data: []byte(`{"customer_id":"cus_1"}`)})
			if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.ConstraintName != tc.constraint {
				t.Fatalf("Append: err = %v, want %s", err, tc.constraint)
			}
		})
	}
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM outbox_event`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("outbox holds %d rows (%v) after refusals only", n, err)
	}
	// Inside the window, every catalog type that is not reserved, of a partner that exists.
	for i, at := range []time.Time{now.Add(-23 * time.Hour), now.Add(59 * time.Minute), now} {
		if _, err := db.Pool.Exec(ctx, insert, outbox.NewEventID(), "pa", "customer.created", at); err != nil {
			t.Fatalf("occurred_at %d (%s) inside the window: %v", i, at, err)
		}
	}
	for _, et := range eventcatalog.Types() {
		if slices.Contains(eventcatalog.ReservedTypes(), et.Type) {
			continue
		}
		if _, err := db.Pool.Exec(ctx, insert, outbox.NewEventID(), "pa", et.Type, now); err != nil {
			t.Fatalf("type %s is not reserved: %v", et.Type, err)
		}
	}
}
