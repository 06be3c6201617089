package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// Commit is when one event's transaction began and when its Commit returned.
type Commit struct{ Start, End time.Time }

// CommitLog is every event the load committed, by event id.
type CommitLog struct {
	ByID  map[string]Commit
	First time.Time // start of the first transaction
	Last  time.Time // end of the last commit
	// Failed counts transactions that failed (only with Generator.KeepGoing): their events may
	// or may not have been committed, and are not in ByID.
	Failed int
}

// Rate is events committed per second over the load.
func (c *CommitLog) Rate() float64 {
	return float64(len(c.ByID)) / c.Last.Sub(c.First).Seconds()
}

// EventSource makes the n-th event of a load (n counts from 1).
type EventSource func(n int64) outbox.Event

// Generator is the platform: clients committing catalog events through outbox.Writer, the way
// docs/writing-events.md shows, one transaction at a time each.
type Generator struct {
	pool    *pgxpool.Pool
	writer  outbox.Writer
	clients int
	next    EventSource
	seq     atomic.Int64 // numbers the events
	// KeepGoing makes a failed transaction (PostgreSQL down) a count in CommitLog.Failed
	// instead of the end of the load; its events are not tried again.
	KeepGoing bool
}

// NewGenerator returns a generator of clients committing the events of next through a checking
// outbox.Writer.
func NewGenerator(pool *pgxpool.Pool, clients int, next EventSource) (*Generator, error) {
	catalog, err := eventcatalog.New()
	if err != nil {
		return nil, fmt.Errorf("event catalog: %w", err)
	}
	return &Generator{pool: pool, writer: outbox.Writer{Catalog: catalog}, clients: clients, next: next}, nil
}

// clientLog is what one client committed.
type clientLog struct {
	ids     []string
	commits []Commit // one per id
	failed  int
}

func (l *clientLog) add(ids []string, c Commit) {
	for _, id := range ids {
		l.ids = append(l.ids, id)
		l.commits = append(l.commits, c)
	}
}

// Burst commits events in transactions of perTx as fast as the clients can: a transaction of
// one event is one batch (outbox.Writer.Queue, one round trip), one of more appends them with
// one outbox.Writer.AppendAll between BEGIN and COMMIT.
func (g *Generator) Burst(ctx context.Context, events, perTx int) (*CommitLog, error) {
	txs := int64((events + perTx - 1) / perTx)
	var next atomic.Int64
	return g.runClients(ctx, func(ctx context.Context, log *clientLog) error {
		for {
			i := next.Add(1) - 1
			if i >= txs {
				return nil
			}
			size := min(perTx, events-int(i)*perTx)
			if err := g.commitTx(ctx, size, log); err != nil {
				return err
			}
		}
	})
}

// Steady commits rate events per second for d, one per transaction. A pacer shared by the
// clients hands out a token per event on a 1 ms ticker, catching up on ticks it was late for,
// so the rate holds as long as the clients keep up; what they achieve is the commit rate.
func (g *Generator) Steady(ctx context.Context, rate int, d time.Duration) (*CommitLog, error) {
	return g.steady(ctx, rate, d, time.Time{})
}

// SteadyFor is Steady that also stops handing out tokens once d has passed, so a load whose
// clients fall behind (PostgreSQL down) ends on time with fewer events.
func (g *Generator) SteadyFor(ctx context.Context, rate int, d time.Duration) (*CommitLog, error) {
	return g.steady(ctx, rate, d, time.Now().Add(d))
}

func (g *Generator) steady(ctx context.Context, rate int, d time.Duration, until time.Time) (*CommitLog, error) {
	total := int(float64(rate) * d.Seconds())
	tokens := make(chan struct{}, rate)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go Pace(ctx, tokens, rate, total, until)
	return g.runClients(ctx, func(ctx context.Context, log *clientLog) error {
		for range tokens {
			if err := g.commitTx(ctx, 1, log); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
}

// Pace sends total tokens, rate per second, then closes tokens; it stops early when ctx ends
// or, unless until is zero, once until has passed.
func Pace(ctx context.Context, tokens chan<- struct{}, rate, total int, until time.Time) {
	defer close(tokens)
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	began := time.Now()
	for sent := 0; sent < total; {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if !until.IsZero() && now.After(until) {
				return
			}
		}
		due := min(total, int(time.Since(began).Seconds()*float64(rate)))
		for ; sent < due; sent++ {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// runClients runs the generator's clients with body and merges what they committed.
func (g *Generator) runClients(ctx context.Context, body func(context.Context, *clientLog) error) (*CommitLog, error) {
	logs := make([]clientLog, g.clients)
	eg, ctx := errgroup.WithContext(ctx)
	for i := range logs {
		eg.Go(func() error { return body(ctx, &logs[i]) })
	}
	if err := eg.Wait(); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	out := &CommitLog{ByID: map[string]Commit{}}
	for _, l := range logs {
		out.Failed += l.failed
		for i, id := range l.ids {
			c := l.commits[i]
			out.ByID[id] = c
			if out.First.IsZero() || c.Start.Before(out.First) {
				out.First = c.Start
			}
			if c.End.After(out.Last) {
				out.Last = c.End
			}
		}
	}
	if len(out.ByID) == 0 {
		return nil, fmt.Errorf("load: nothing was committed")
	}
	return out, nil
}

// commitTx commits size events in one transaction and logs them with its times.
func (g *Generator) commitTx(ctx context.Context, size int, log *clientLog) error {
	if err := ctx.Err(); err != nil {
		return err // the load is over: no new transaction
	}
	ids := make([]string, 0, size)
	start := time.Now()
	// A transaction once begun is seen through to its end, whatever becomes of ctx: cancelled
	// mid-COMMIT, pgx would give up on a commit the server may still complete, and the load's
	// caller would read the outbox while that event is in doubt (counted nowhere, yet published
	// by cdc a moment later). Bounded, so a stuck server cannot hold the load.
	limit := time.Minute
	if g.KeepGoing { // a transaction caught in an outage must not hold its client for long
		limit = 10 * time.Second
	}
	txCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	var err error
	if size == 1 {
		// One event a transaction is sent as one batch, its implicit transaction committing in
		// one round trip, as a platform writing events this way does (outbox.Queue).
		b := &pgx.Batch{}
		var id string
		if id, err = g.writer.Queue(txCtx, b, g.next(g.seq.Add(1))); err == nil {
			if err = g.pool.SendBatch(txCtx, b).Close(); err == nil {
				ids = append(ids, id)
			}
		}
	} else {
		err = pgx.BeginFunc(txCtx, g.pool, func(tx pgx.Tx) error {
			// A platform writing many events in one transaction appends them in one statement.
			evs := make([]outbox.Event, size)
			for i := range evs {
				evs[i] = g.next(g.seq.Add(1))
			}
			var err error
			ids, err = g.writer.AppendAll(txCtx, tx, evs)
			return err
		})
	}
	if err != nil && g.KeepGoing {
		log.failed++
		return nil
	}
	if err != nil {
		return fmt.Errorf("commit %d events: %w", size, err)
	}
	log.add(ids, Commit{Start: start, End: time.Now()})
	return nil
}

// APIKeyEventType is the catalog type NewEvent makes.
const APIKeyEventType = "api_key.status_changed"

// NewEvent is api_key.status_changed number n of partner, valid against the catalog's schema.
func NewEvent(partner string, n int64) outbox.Event {
	key := fmt.Sprintf("key_%d", n)
	data, _ := json.Marshal(map[string]any{ // strings and an integer: Marshal cannot fail
		"api_key_id": key, "customer_id": "cus_bench", "previous_status": "active",
		"status": "suspended", "reason": "budget_exhausted", "version": n,
	})
	return outbox.Event{PartnerID: partner, Type: APIKeyEventType, Subject: outbox.Subject{Type: "api_key", ID: key}, Data: data}
}
