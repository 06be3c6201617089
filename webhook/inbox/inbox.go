package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// HookstreamSource is the source name of the events ServeHTTP receives from hookstream.
const HookstreamSource = "hookstream"

// Event is one stored webhook as the application's ProcessFunc receives it.
type Event struct {
	// Source is the sender: HookstreamSource for ServeHTTP, else the Source.Name of the
	// Handler that received it.
	Source string
	// ID is the event's id at its source: for hookstream the webhook-id header, equal to the
	// envelope's event_id; the same on every retry and replay of the event.
	ID string
	// Type is the event's type, such as "customer.updated", or empty when the source names none.
	Type string
	// Body is the request body exactly as received and signed.
	Body []byte
	// ReceivedAt is when the first copy was stored.
	ReceivedAt time.Time
	// Attempt is 1 the first time the event is processed, 2 after one failure, and so on.
	Attempt int

	result *json.RawMessage // where SetResult writes; nil outside a ProcessFunc
}

// Envelope decodes Body as the envelope hookstream sends. Bodies stored by ServeHTTP passed
// its checks, so an error here means the row was written by something else.
func (e Event) Envelope() (outbox.Envelope, error) {
	var env outbox.Envelope
	if err := json.Unmarshal(e.Body, &env); err != nil {
		return env, fmt.Errorf("inbox: event %s: decode envelope: %w", e.ID, err)
	}
	return env, nil
}

// SetResult records the result of processing the event, a JSON value, stored with the
// processed state and sent back (200, application/json) to every later copy of the event, so
// a sender that retries after a lost answer learns what the first delivery did. It is kept
// only if the ProcessFunc then returns nil. Call it from the ProcessFunc only; elsewhere it
// returns an error.
func (e Event) SetResult(result json.RawMessage) error {
	if e.result == nil {
		return errors.New("inbox: SetResult outside a ProcessFunc")
	}
	if !json.Valid(result) {
		return fmt.Errorf("inbox: event %s: result is not JSON", e.ID)
	}
	*e.result = append(json.RawMessage(nil), result...)
	return nil
}

// ProcessFunc applies one event. tx is the transaction that marks the event processed: writes
// through it commit exactly when the event counts as processed, and an error (or a panic) rolls
// them back and schedules a retry, unless it matches ErrRefused, which refuses the event for
// good. The inbox ends the transaction; Commit and Rollback on tx return an error. ctx ends
// after Config.ProcessTimeout or when Run is stopped.
type ProcessFunc func(ctx context.Context, tx pgx.Tx, ev Event) error

// AuthorizeFunc decides, after the signature was verified and just before the ProcessFunc
// runs, whether the organisation, customer or account the event names may do what it asks now
// (R30: a valid signature proves who sent the bytes, not that the action is still
// allowed). It runs in the ProcessFunc's transaction, so what it reads (and locks, with FOR
// SHARE) holds until the effect commits. Return an error matching ErrRefused to refuse the
// event: it is recorded as refused with the reason and never retried. Any other error means
// the decision could not be made (a permission service that is down) and is retried like a
// failed attempt.
type AuthorizeFunc func(ctx context.Context, tx pgx.Tx, ev Event) error

// ErrRefused, wrapped by an AuthorizeFunc's or a ProcessFunc's error, refuses the event: its
// writes are rolled back, the row becomes refused with the error as last_error, and it is not
// retried (a missing permission or invalid input is not retried for ever). A copy
// of a refused event is acknowledged and not processed.
var ErrRefused = errors.New("inbox: refused")

// Source is a sender of webhooks other than hookstream, received by Inbox.Handler into the same
// table and processed by the same Run loops.
type Source struct {
	// Name is the source column of its events and the source label of the metrics:
	// lowercase letters, digits, '_', '-' and '.', at most 64 bytes ("github", "stripe").
	// Events are unique per (Name, event id).
	Name string
	// Verifier authenticates each request and names its event: webhook.NewGitHubVerifier,
	// NewStripeVerifier, NewSlackVerifier, NewShopifyVerifier, NewTwilioVerifier, or NewVerifier for another
	// Standard Webhooks sender.
	Verifier webhook.RequestVerifier
	// Validate, when set, checks an authenticated request before it is stored. An error
	// refuses it with 400 and the error's message, which therefore must not carry secrets.
	Validate func(msg webhook.Message, body []byte) error
}

var sourcePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// Inbox receives webhooks (ServeHTTP for hookstream, Handler for other sources) and hands them
// to the application (Run). It is safe for concurrent use: serve any number of requests and
// run any number of Run loops on one Inbox.
type Inbox struct {
	pool     *pgxpool.Pool
	verifier *webhook.Verifier // nil: ServeHTTP receives nothing (Open)
	process  ProcessFunc
	cfg      Config
	sql      statements
	metrics  *metrics
	// wake carries the handler's "a new event was stored" to a waiting Run loop. One slot is
	// enough: a loop that wakes claims everything due, and a signal sent while every loop is busy
	// stays in the slot until one of them waits again.
	wake chan struct{}
	// lastPurge is when a Run loop of this Inbox last started a purge (unix nanoseconds), so
	// several loops purge once per Config.PurgeInterval between them.
	lastPurge atomic.Int64
}

// statements are the queries on the configured table, built once.
type statements struct {
	insert, lookup, claim, done, refuse, fail, purge, rows string
}

// New returns an Inbox receiving hookstream webhooks on ServeHTTP, storing events in pool with
// cfg.Table (create it with Migrate), verifying with verifier and processing with process.
// Other sources are added with Handler.
func New(pool *pgxpool.Pool, verifier *webhook.Verifier, process ProcessFunc, cfg Config) (*Inbox, error) {
	if verifier == nil {
		return nil, errors.New("inbox: verifier is nil (use Open for an inbox that receives no hookstream webhooks)")
	}
	return newInbox(pool, verifier, process, cfg)
}

// Open returns an Inbox for sources other than hookstream only: mount Handler(src) for each;
// its ServeHTTP answers 404.
func Open(pool *pgxpool.Pool, process ProcessFunc, cfg Config) (*Inbox, error) {
	return newInbox(pool, nil, process, cfg)
}

func newInbox(pool *pgxpool.Pool, verifier *webhook.Verifier, process ProcessFunc, cfg Config) (*Inbox, error) {
	switch {
	case pool == nil:
		return nil, errors.New("inbox: pool is nil")
	case process == nil:
		return nil, errors.New("inbox: process func is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	i := &Inbox{
		pool:     pool,
		verifier: verifier,
		process:  process,
		cfg:      cfg,
		sql:      buildStatements(pgx.Identifier{cfg.Table}.Sanitize()),
		wake:     make(chan struct{}, 1),
	}
	m, err := newMetrics(i, cfg.Registerer)
	if err != nil {
		return nil, err
	}
	i.metrics = m
	return i, nil
}

func buildStatements(table string) statements {
	// fail records a failed attempt of event ($1, $2) that had $5 attempts before it: retrying
	// with the next attempt $4 seconds from now, or dead once $3 attempts have failed. It runs in
	// the claim's transaction, or in a new one when that one broke; then the lock is gone, and
	// the attempts and state guard keeps it from overwriting what another Run loop did meanwhile.
	const fail = `UPDATE %s
		SET attempts = attempts + 1,
		    last_error = $6,
		    state = CASE WHEN attempts + 1 >= $3 THEN 'dead' ELSE 'retrying' END,
		    next_attempt_at = CASE WHEN attempts + 1 >= $3 THEN NULL
		                           ELSE clock_timestamp() + make_interval(secs => $4) END
		WHERE source = $1 AND id = $2 AND attempts = $5 AND state IN ('received', 'retrying')`
	// purge deletes up to $2 rows that finished more than $1 seconds ago; dead rows wait for
	// an operator.
	const purge = `DELETE FROM %[1]s WHERE (source, id) IN (
		SELECT source, id FROM %[1]s
		 WHERE (state = 'processed' AND processed_at < now() - make_interval(secs => $1))
		    OR (state = 'refused' AND refused_at < now() - make_interval(secs => $1))
		 LIMIT $2)`
	return statements{
		insert: `INSERT INTO ` + table + ` (source, id, event_type, body, body_hash) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (source, id) DO NOTHING`,
		lookup: `SELECT body_hash, state, result FROM ` + table + ` WHERE source = $1 AND id = $2`,
		claim: `SELECT source, id, event_type, body, received_at, attempts FROM ` + table + `
			WHERE state IN ('received', 'retrying') AND next_attempt_at <= now()
			ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
		done: `UPDATE ` + table + ` SET state = 'processed', attempts = attempts + 1, result = $3,
			processed_at = clock_timestamp(), next_attempt_at = NULL WHERE source = $1 AND id = $2`,
		refuse: `UPDATE ` + table + ` SET state = 'refused', attempts = attempts + 1, last_error = $3,
			refused_at = clock_timestamp(), next_attempt_at = NULL WHERE source = $1 AND id = $2`,
		fail:  fmt.Sprintf(fail, table),
		purge: fmt.Sprintf(purge, table),
		rows: `SELECT source, state, count(*), extract(epoch FROM now() - min(received_at))::float8 FROM ` + table + `
			WHERE state <> 'processed' GROUP BY source, state`,
	}
}

// signal wakes one waiting Run loop, without ever blocking the handler.
func (i *Inbox) signal() {
	select {
	case i.wake <- struct{}{}:
	default:
	}
}
