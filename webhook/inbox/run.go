package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// maxErrorBytes bounds last_error: enough for a message and a short stack, not a log file.
const maxErrorBytes = 2048

// cleanupTimeout bounds the rollback and failure bookkeeping that run after ctx may have ended.
const cleanupTimeout = 5 * time.Second

// Run hands due events to the ProcessFunc until ctx ends, then returns nil. It wakes when this
// Inbox's handler stores an event and every Config.PollInterval otherwise. Any number of Run
// loops may share a table. Database errors are logged and retried after PollInterval; Run
// returns an error only when the table or one of its columns does not exist, since waiting
// cannot fix that. An event being processed when ctx ends is rolled back, is not counted as an
// attempt, and will be processed again.
func (i *Inbox) Run(ctx context.Context) error {
	poll := time.NewTimer(0)
	defer poll.Stop()
	// solo counts claims still to be made one event at a time, after a batch whose commit the
	// server refused: then the event at fault commits alone and its failure can be counted.
	solo := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-i.wake:
		case <-poll.C:
		}
		limit := i.cfg.BatchSize
		if solo > 0 {
			limit, solo = 1, solo-1
		}
		i.maybePurge(ctx)
		claimed, err := i.processBatch(ctx, limit)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if missingSchema(err) {
				return err
			}
			if errors.Is(err, errCommitRefused) && claimed > 1 {
				solo = claimed
			}
			i.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "inbox: process batch", slog.Any("err", err))
		}
		if (err == nil && claimed == limit) || solo > 0 {
			// A full batch: more may be due right now.
			poll.Reset(0)
		} else {
			poll.Reset(i.cfg.PollInterval)
		}
	}
}

// missingSchema reports undefined_table and undefined_column: Migrate was not run.
func missingSchema(err error) bool {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	return ok && (pgErr.Code == "42P01" || pgErr.Code == "42703")
}

// claimed is one locked row of a batch.
type claimed struct {
	ev       Event
	attempts int // before this attempt
}

// attempt is the outcome of one event's attempt, observed once its transaction committed.
type attempt struct {
	source, outcome string
	took            time.Duration
}

func (i *Inbox) observe(a attempt) {
	i.metrics.processing.WithLabelValues(a.source, a.outcome).Observe(a.took.Seconds())
	if a.outcome == outcomeRefused {
		i.metrics.refused.WithLabelValues(a.source).Inc()
	}
}

// errCommitRefused marks a batch whose COMMIT the server answered with an error, such as a
// deferred constraint that an application write violates.
var errCommitRefused = errors.New("inbox: commit refused")

// processBatch claims up to limit due events in one transaction and processes each under a
// savepoint of it, so one event's failure undoes that event's writes only and the row stays
// locked while the failure is recorded. It returns how many events it claimed.
func (i *Inbox) processBatch(ctx context.Context, limit int) (int, error) {
	tx, err := i.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("inbox: begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			// ctx may be over; the rollback still has to reach the server (or the connection is
			// discarded, which rolls back as well).
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			_ = tx.Rollback(rctx)
		}
	}()

	batch, err := i.claim(ctx, tx, limit)
	if err != nil {
		return 0, err
	}
	attempts := make([]attempt, 0, len(batch))
	for _, c := range batch {
		start := time.Now()
		outcome, txUsable, perr := i.processOne(ctx, tx, c)
		if ctx.Err() != nil {
			// Shutdown: the whole batch is rolled back and processed again later, uncounted.
			return len(batch), nil
		}
		if perr == nil {
			attempts = append(attempts, attempt{c.ev.Source, outcome, time.Since(start)})
			continue
		}
		if txUsable {
			outcome, err := i.recordFailure(ctx, tx, c, perr)
			if err != nil {
				return len(batch), err
			}
			attempts = append(attempts, attempt{c.ev.Source, outcome, time.Since(start)})
			continue
		}
		// The transaction broke (the connection died, or the ProcessFunc's error left it
		// unusable): everything of this batch is rolled back, and the failure is counted in a
		// new transaction so that an event which always breaks it still reaches dead. The other
		// events are claimed again later, uncounted.
		_ = tx.Rollback(ctx)
		outcome, err := i.recordFailure(ctx, i.pool, c, perr)
		if err != nil {
			return len(batch), err
		}
		i.observe(attempt{c.ev.Source, outcome, time.Since(start)})
		return len(batch), nil
	}
	if err := tx.Commit(ctx); err != nil {
		committed = true // a failed COMMIT has ended the transaction too
		if _, refused := errors.AsType[*pgconn.PgError](err); !refused {
			// The connection failed: nothing is known to be the events' fault.
			return len(batch), fmt.Errorf("inbox: commit batch of %d: %w", len(batch), err)
		}
		if len(batch) > 1 {
			// Which event is at fault is unknown; Run retries them one by one, uncounted.
			return len(batch), fmt.Errorf("%w: batch of %d: %w", errCommitRefused, len(batch), err)
		}
		// The one event's writes cannot commit: its failure, counted like any other.
		outcome, err := i.recordFailure(ctx, i.pool, batch[0], fmt.Errorf("commit: %w", err))
		if err == nil {
			i.observe(attempt{batch[0].ev.Source, outcome, attempts[0].took})
		}
		return 1, err
	}
	committed = true
	for _, a := range attempts {
		i.observe(a)
	}
	return len(batch), nil
}

func (i *Inbox) claim(ctx context.Context, tx pgx.Tx, limit int) ([]claimed, error) {
	rows, err := tx.Query(ctx, i.sql.claim, limit)
	if err != nil {
		return nil, fmt.Errorf("inbox: claim: %w", err)
	}
	var (
		c     claimed
		batch []claimed
	)
	_, err = pgx.ForEachRow(rows, []any{&c.ev.Source, &c.ev.ID, &c.ev.Type, &c.ev.Body, &c.ev.ReceivedAt, &c.attempts}, func() error {
		c.ev.Attempt = c.attempts + 1
		batch = append(batch, c)
		c = claimed{}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("inbox: claim: %w", err)
	}
	return batch, nil
}

// processOne authorizes and processes one event under a savepoint and marks it processed, or
// refused when the application refuses it. A non-nil error is the event's failure; txUsable
// says whether tx can still record it.
func (i *Inbox) processOne(ctx context.Context, tx pgx.Tx, c claimed) (outcome string, txUsable bool, err error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return "", false, fmt.Errorf("inbox: savepoint: %w", err)
	}
	var result json.RawMessage
	c.ev.result = &result
	if err := i.call(ctx, sp, c.ev); err != nil {
		if rerr := sp.Rollback(ctx); rerr != nil {
			return "", false, errors.Join(err, fmt.Errorf("inbox: rollback to savepoint: %w", rerr))
		}
		if !errors.Is(err, ErrRefused) {
			return "", true, err
		}
		if _, err := tx.Exec(ctx, i.sql.refuse, c.ev.Source, c.ev.ID, clip(err.Error(), maxErrorBytes)); err != nil {
			return "", false, fmt.Errorf("inbox: mark %s/%s refused: %w", c.ev.Source, c.ev.ID, err)
		}
		i.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "inbox: event refused; not retried",
			slog.String("source", c.ev.Source), slog.String("event_id", c.ev.ID), slog.Any("err", err))
		return outcomeRefused, true, nil
	}
	if err := sp.Commit(ctx); err != nil {
		return "", false, fmt.Errorf("inbox: release savepoint: %w", err)
	}
	var stored []byte // NULL without a result
	if result != nil {
		stored = result
	}
	if _, err := tx.Exec(ctx, i.sql.done, c.ev.Source, c.ev.ID, stored); err != nil {
		return "", false, fmt.Errorf("inbox: mark %s/%s processed: %w", c.ev.Source, c.ev.ID, err)
	}
	return outcomeProcessed, true, nil
}

// call runs the AuthorizeFunc and the ProcessFunc with their timeout. A panic is turned into
// the event's failure: in a Run loop it would otherwise end the partner's whole service, on
// every restart, for as long as the event is due.
func (i *Inbox) call(ctx context.Context, tx pgx.Tx, ev Event) (err error) {
	ctx, cancel := context.WithTimeout(ctx, i.cfg.ProcessTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	owned := ownedTx{tx}
	if i.cfg.Authorize != nil {
		if err := i.cfg.Authorize(ctx, owned, ev); err != nil {
			return fmt.Errorf("authorize: %w", err)
		}
	}
	return i.process(ctx, owned, ev)
}

// execer is what recordFailure needs: the claim's transaction, or the pool.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// recordFailure counts a failed attempt: retrying after the backoff, or dead after
// MaxAttempts; outcome says which.
func (i *Inbox) recordFailure(ctx context.Context, db execer, c claimed, cause error) (outcome string, err error) {
	failures := c.attempts + 1
	delay := i.cfg.retryDelay(failures)
	tag, err := db.Exec(ctx, i.sql.fail, c.ev.Source, c.ev.ID, i.cfg.MaxAttempts, delay.Seconds(), c.attempts,
		clip(cause.Error(), maxErrorBytes))
	if err != nil {
		return "", fmt.Errorf("inbox: record failure of %s/%s: %w", c.ev.Source, c.ev.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return outcomeFailed, nil // another Run loop took the row over after our transaction broke
	}
	attrs := []slog.Attr{slog.String("source", c.ev.Source), slog.String("event_id", c.ev.ID),
		slog.String("type", c.ev.Type), slog.Int("attempt", failures), slog.Any("err", cause)}
	if failures >= i.cfg.MaxAttempts {
		i.cfg.Logger.LogAttrs(ctx, slog.LevelError, "inbox: event failed; dead after max attempts", attrs...)
		return outcomeDead, nil
	}
	i.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "inbox: event failed; will retry",
		append(attrs, slog.Duration("retry_in", delay))...)
	return outcomeFailed, nil
}

// purgeBatch bounds one DELETE of a purge, so it holds few locks for a short time.
const purgeBatch = 1000

// Purge deletes the rows that finished (processed or refused) more than Config.Retention ago
// and returns how many; with no Retention it deletes nothing. Run calls it every
// Config.PurgeInterval; call it yourself to purge at other times.
func (i *Inbox) Purge(ctx context.Context) (int64, error) {
	if i.cfg.Retention <= 0 {
		return 0, nil
	}
	var total int64
	for {
		tag, err := i.pool.Exec(ctx, i.sql.purge, i.cfg.Retention.Seconds(), purgeBatch)
		if err != nil {
			return total, fmt.Errorf("inbox: purge: %w", err)
		}
		total += tag.RowsAffected()
		i.metrics.purged.Add(float64(tag.RowsAffected()))
		if tag.RowsAffected() < purgeBatch {
			return total, nil
		}
	}
}

// maybePurge purges when PurgeInterval has passed since any Run loop of this Inbox last did.
func (i *Inbox) maybePurge(ctx context.Context) {
	if i.cfg.Retention <= 0 {
		return
	}
	last, now := i.lastPurge.Load(), time.Now().UnixNano()
	if now-last < int64(i.cfg.PurgeInterval) || !i.lastPurge.CompareAndSwap(last, now) {
		return
	}
	if n, err := i.Purge(ctx); err != nil {
		if ctx.Err() == nil {
			i.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "inbox: purge", slog.Any("err", err))
		}
	} else if n > 0 {
		i.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "inbox: purged finished rows", slog.Int64("rows", n))
	}
}

// errTxOwned is what the ProcessFunc gets if it tries to end the inbox's transaction.
var errTxOwned = errors.New("inbox: the inbox commits this transaction; return an error to roll it back")

// ownedTx is the transaction handed to the ProcessFunc: everything but ending it. Nested Begin
// (a savepoint) works as usual.
type ownedTx struct{ pgx.Tx }

func (ownedTx) Commit(context.Context) error   { return errTxOwned }
func (ownedTx) Rollback(context.Context) error { return errTxOwned }
