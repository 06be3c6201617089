package outbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// The SQL contract for writers outside Go (migration 0013): a raw INSERT of a row the pipeline
// cannot accept is refused at once, with an error that names the field, and claims no id; a
// good row goes in.
func TestSQLContractRefusesBadRows(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
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
