package inbox_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook/inbox"
)

// schemaKeyedByID is the inbox table as the first release created it (keyed by id alone,
// four states), kept verbatim: partners' tables look like this and must upgrade in place.
const schemaKeyedByID = `CREATE TABLE IF NOT EXISTS webhook_inbox (
    id              text        PRIMARY KEY,
    event_type      text        NOT NULL,
    body            bytea       NOT NULL,
    state           text        NOT NULL DEFAULT 'received'
                                CHECK (state IN ('received', 'retrying', 'processed', 'dead')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    received_at     timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz          DEFAULT now(),
    processed_at    timestamptz,
    last_error      text,
    CHECK ((state IN ('received', 'retrying')) = (next_attempt_at IS NOT NULL)),
    CHECK ((state = 'processed') = (processed_at IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS webhook_inbox_due ON webhook_inbox (next_attempt_at)
    WHERE state IN ('received', 'retrying');
`

// A table of the first release, holding events in every state, is upgraded by Migrate (run
// twice, and concurrently, as instances starting together do); its rows keep their states and
// bodies, become hookstream's, get their body hashes, and the inbox goes on from them.
func TestMigrateUpgradesTableKeyedByID(t *testing.T) {
	for _, table := range []string{inbox.DefaultTable, "partner_inbox"} {
		t.Run(table, func(t *testing.T) {
			db := testenv.NewEmptyDatabase(t)
			ctx := context.Background()
			old := strings.ReplaceAll(schemaKeyedByID, "webhook_inbox", table)
			if _, err := db.Pool.Exec(ctx, old); err != nil {
				t.Fatal(err)
			}
			hookstream := newPartner(t)
			pending, done, dead := outbox.NewEventID(), outbox.NewEventID(), outbox.NewEventID()
			bodies := map[string][]byte{}
			for _, id := range []string{pending, done, dead} {
				bodies[id] = customerUpdated(t, id, 1)
				if _, err := db.Pool.Exec(ctx, `INSERT INTO `+table+` (id, event_type, body) VALUES ($1, 'customer.updated', $2)`, id, bodies[id]); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Pool.Exec(ctx, `UPDATE `+table+` SET state = 'processed', attempts = 1, processed_at = now(), next_attempt_at = NULL WHERE id = $1;`, done); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Pool.Exec(ctx, `UPDATE `+table+` SET state = 'dead', attempts = 20, last_error = 'boom', next_attempt_at = NULL WHERE id = $1;`, dead); err != nil {
				t.Fatal(err)
			}

			errs := make(chan error, 3)
			for range 3 {
				go func() { errs <- inbox.MigrateTable(ctx, db.Pool, table) }()
			}
			for range 3 {
				if err := <-errs; err != nil {
					t.Fatalf("concurrent upgrade: %v", err)
				}
			}
			if err := inbox.MigrateTable(ctx, db.Pool, table); err != nil {
				t.Fatalf("upgrade again: %v", err)
			}

			var key string
			if err := db.Pool.QueryRow(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`, table).Scan(&key); err != nil {
				t.Fatal(err)
			}
			if key != "PRIMARY KEY (source, id)" {
				t.Fatalf("primary key %q, want (source, id)", key)
			}
			for id, state := range map[string]string{pending: "received", done: "processed", dead: "dead"} {
				var (
					source, got string
					body, hash  []byte
				)
				if err := db.Pool.QueryRow(ctx, `SELECT source, state, body, body_hash FROM `+table+` WHERE id = $1`, id).Scan(&source, &got, &body, &hash); err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(bodies[id])
				if source != inbox.HookstreamSource || got != state || string(body) != string(bodies[id]) || string(hash) != string(sum[:]) {
					t.Fatalf("%s after the upgrade: source %q, state %q, body kept %v, hash right %v", state, source, got, string(body) == string(bodies[id]), string(hash) == string(sum[:]))
				}
			}
			// The new state is accepted, with its timestamp only.
			if _, err := db.Pool.Exec(ctx, `UPDATE `+table+` SET state = 'refused' WHERE id = $1`, dead); err == nil {
				t.Fatal("refused without refused_at accepted")
			}

			cfg := testConfig(t)
			cfg.Table = table
			createEffects(t, db.Pool)
			in := newInbox(t, db.Pool, hookstream.verifier(t), applyEffect, cfg)
			testenv.Go(t, "Run", in.Run)
			testenv.Eventually(t, 5*time.Second, "the pending event processed", func() bool {
				return testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM `+table+` WHERE id = $1 AND state = 'processed'`, pending) == 1
			})
			if code := hookstream.deliver(in, done, bodies[done]); code != http.StatusNoContent {
				t.Fatalf("copy of an event processed before the upgrade: %d, want 204", code)
			}
			if code := hookstream.deliver(in, done, customerUpdated(t, done, 2)); code != http.StatusConflict {
				t.Fatalf("another body under an id stored before the upgrade: %d, want 409", code)
			}
			time.Sleep(100 * time.Millisecond)
			if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects`); n != 1 {
				t.Fatalf("%d effects, want 1 (the pending event)", n)
			}
		})
	}
}
