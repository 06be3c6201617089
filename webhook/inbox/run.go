package inbox

import (
	"context"
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
	for _, c := range batch {
		txUsable, perr := i.processOne(ctx, tx, c)
		if ctx.Err() != nil {
			// Shutdown: the whole batch is rolled back and processed again later, uncounted.
			return len(batch), nil
		}
		if perr == nil {
			continue
		}
		if txUsable {
			if err := i.recordFailure(ctx, tx, c, perr); err != nil {
				return len(batch), err
			}
			continue
		}
		// The transaction broke (the connection died, or the ProcessFunc's error left it
		// unusable): everything of this batch is rolled back, and the failure is counted in a
		// new transaction so that an event which always breaks it still reaches dead. The other
		// events are claimed again later, uncounted.
		_ = tx.Rollback(ctx)
		if err := i.recordFailure(ctx, i.pool, c, perr); err != nil {
			return len(batch), err
		}
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
		return 1, i.recordFailure(ctx, i.pool, batch[0], fmt.Errorf("commit: %w", err))
	}
	committed = true
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
	_, err = pgx.ForEachRow(rows, []any{&c.ev.ID, &c.ev.Type, &c.ev.Body, &c.ev.ReceivedAt, &c.attempts}, func() error {
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

// processOne calls the ProcessFunc for one event under a savepoint and marks it processed. A
// non-nil error is the event's failure; txUsable says whether tx can still record it.
func (i *Inbox) processOne(ctx context.Context, tx pgx.Tx, c claimed) (txUsable bool, err error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("inbox: savepoint: %w", err)
	}
	if err := i.call(ctx, sp, c.ev); err != nil {
		if rerr := sp.Rollback(ctx); rerr != nil {
			return false, errors.Join(err, fmt.Errorf("inbox: rollback to savepoint: %w", rerr))
		}
		return true, err
	}
	if err := sp.Commit(ctx); err != nil {
		return false, fmt.Errorf("inbox: release savepoint: %w", err)
	}
	if _, err := tx.Exec(ctx, i.sql.done, c.ev.ID); err != nil {
		return false, fmt.Errorf("inbox: mark %s processed: %w", c.ev.ID, err)
	}
	return true, nil
}

// call runs the ProcessFunc with its timeout. A panic is turned into the event's failure: in a
// Run loop it would otherwise end the partner's whole service, on every restart, for as long as
// the event is due.
func (i *Inbox) call(ctx context.Context, tx pgx.Tx, ev Event) (err error) {
	ctx, cancel := context.WithTimeout(ctx, i.cfg.ProcessTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return i.process(ctx, ownedTx{tx}, ev)
}

// execer is what recordFailure needs: the claim's transaction, or the pool.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// recordFailure counts a failed attempt: retrying after the backoff, or dead after MaxAttempts.
func (i *Inbox) recordFailure(ctx context.Context, db execer, c claimed, cause error) error {
	failures := c.attempts + 1
	delay := i.cfg.retryDelay(failures)
	tag, err := db.Exec(ctx, i.sql.fail, c.ev.ID, i.cfg.MaxAttempts, delay.Seconds(), c.attempts,
		clip(cause.Error(), maxErrorBytes))
	if err != nil {
		return fmt.Errorf("inbox: record failure of %s: %w", c.ev.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return nil // another Run loop took the row over after our transaction broke
	}
	attrs := []slog.Attr{slog.String("event_id", c.ev.ID), slog.String("type", c.ev.Type),
		slog.Int("attempt", failures), slog.Any("err", cause)}
	if failures >= i.cfg.MaxAttempts {
		i.cfg.Logger.LogAttrs(ctx, slog.LevelError, "inbox: event failed; dead after max attempts", attrs...)
		return nil
	}
	i.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "inbox: event failed; will retry",
		append(attrs, slog.Duration("retry_in", delay))...)
	return nil
}

// errTxOwned is what the ProcessFunc gets if it tries to end the inbox's transaction.
var errTxOwned = errors.New("inbox: the inbox commits this transaction; return an error to roll it back")

// ownedTx is the transaction handed to the ProcessFunc: everything but ending it. Nested Begin
// (a savepoint) works as usual.
type ownedTx struct{ pgx.Tx }

func (ownedTx) Commit(context.Context) error   { return errTxOwned }
func (ownedTx) Rollback(context.Context) error { return errTxOwned }
