package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// Event is one stored webhook as the application's ProcessFunc receives it.
type Event struct {
	// ID is the webhook-id header, equal to the envelope's event_id; the same on every retry
	// and replay of the event.
	ID string
	// Type is the envelope's type, such as "customer.updated".
	Type string
	// Body is the request body exactly as received and signed.
	Body []byte
	// ReceivedAt is when the first copy was stored.
	ReceivedAt time.Time
	// Attempt is 1 the first time the event is processed, 2 after one failure, and so on.
	Attempt int
}

// Envelope decodes Body. Stored bodies passed the handler's checks, so an error here means the
// row was written by something else.
func (e Event) Envelope() (outbox.Envelope, error) {
	var env outbox.Envelope
	if err := json.Unmarshal(e.Body, &env); err != nil {
		return env, fmt.Errorf("inbox: event %s: decode envelope: %w", e.ID, err)
	}
	return env, nil
}

// ProcessFunc applies one event. tx is the transaction that marks the event processed: writes
// through it commit exactly when the event counts as processed, and an error (or a panic) rolls
// them back and schedules a retry. The inbox ends the transaction; Commit and Rollback on tx
// return an error. ctx ends after Config.ProcessTimeout or when Run is stopped.
type ProcessFunc func(ctx context.Context, tx pgx.Tx, ev Event) error

// Inbox receives webhooks (ServeHTTP) and hands them to the application (Run). It is safe for
// concurrent use: serve any number of requests and run any number of Run loops on one Inbox.
type Inbox struct {
	pool     *pgxpool.Pool
	verifier *webhook.Verifier
	process  ProcessFunc
	cfg      Config
	sql      statements
	// wake carries the handler's "a new event was stored" to a waiting Run loop. One slot is
	// enough: a loop that wakes claims everything due, and a signal sent while every loop is busy
	// stays in the slot until one of them waits again.
	wake chan struct{}
}

// statements are the queries on the configured table, built once.
type statements struct {
	insert, claim, done, fail string
}

// New returns an Inbox storing events in pool with cfg.Table (create it with Migrate), verifying
// with verifier and processing with process.
func New(pool *pgxpool.Pool, verifier *webhook.Verifier, process ProcessFunc, cfg Config) (*Inbox, error) {
	switch {
	case pool == nil:
		return nil, errors.New("inbox: pool is nil")
	case verifier == nil:
		return nil, errors.New("inbox: verifier is nil")
	case process == nil:
		return nil, errors.New("inbox: process func is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Inbox{
		pool:     pool,
		verifier: verifier,
		process:  process,
		cfg:      cfg,
		sql:      buildStatements(pgx.Identifier{cfg.Table}.Sanitize()),
		wake:     make(chan struct{}, 1),
	}, nil
}

func buildStatements(table string) statements {
	// fail records a failed attempt of event $1 that had $4 attempts before it: retrying with
	// the next attempt $3 seconds from now, or dead once $2 attempts have failed. It runs in the
	// claim's transaction, or in a new one when that one broke; then the lock is gone, and the
	// attempts and state guard keeps it from overwriting what another Run loop did meanwhile.
	const fail = `UPDATE %s
		SET attempts = attempts + 1,
		    last_error = $5,
		    state = CASE WHEN attempts + 1 >= $2 THEN 'dead' ELSE 'retrying' END,
		    next_attempt_at = CASE WHEN attempts + 1 >= $2 THEN NULL
		                           ELSE clock_timestamp() + make_interval(secs => $3) END
		WHERE id = $1 AND attempts = $4 AND state IN ('received', 'retrying')`
	return statements{
		insert: `INSERT INTO ` + table + ` (id, event_type, body) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
		claim: `SELECT id, event_type, body, received_at, attempts FROM ` + table + `
			WHERE state IN ('received', 'retrying') AND next_attempt_at <= now()
			ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
		done: `UPDATE ` + table + ` SET state = 'processed', attempts = attempts + 1,
			processed_at = clock_timestamp(), next_attempt_at = NULL WHERE id = $1`,
		fail: fmt.Sprintf(fail, table),
	}
}

// signal wakes one waiting Run loop, without ever blocking the handler.
func (i *Inbox) signal() {
	select {
	case i.wake <- struct{}{}:
	default:
	}
}
