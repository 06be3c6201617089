package main

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

// eventType is the catalog type the load commits: every endpoint subscribes to api_key.*.
const eventType = "api_key.status_changed"

// commit is when one event's transaction began and when its Commit returned.
type commit struct{ start, end time.Time }

// commitLog is every event the load committed, by event id.
type commitLog struct {
	byID  map[string]commit
	first time.Time // start of the first transaction
	last  time.Time // end of the last commit
}

// rate is events committed per second over the load.
func (c *commitLog) rate() float64 {
	return float64(len(c.byID)) / c.last.Sub(c.first).Seconds()
}

// generator is the platform: clients committing catalog events for one partner through
// outbox.Writer, the way the README shows, one transaction at a time each.
type generator struct {
	pool    *pgxpool.Pool
	writer  outbox.Writer
	partner string
	clients int
	seq     atomic.Int64 // numbers the events, for their subjects
}

func newGenerator(pool *pgxpool.Pool, partner string, clients int) (*generator, error) {
	catalog, err := eventcatalog.New()
	if err != nil {
		return nil, fmt.Errorf("event catalog: %w", err)
	}
	return &generator{pool: pool, writer: outbox.Writer{Catalog: catalog}, partner: partner, clients: clients}, nil
}

// clientLog is what one client committed.
type clientLog struct {
	ids     []string
	commits []commit // one per id
}

func (l *clientLog) add(ids []string, c commit) {
	for _, id := range ids {
		l.ids = append(l.ids, id)
		l.commits = append(l.commits, c)
	}
}

// burst commits events in transactions of perTx as fast as the clients can.
func (g *generator) burst(ctx context.Context, events, perTx int) (*commitLog, error) {
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

// steady commits rate events per second for d, one per transaction. A pacer shared by the
// clients hands out a token per event on a 1 ms ticker, catching up on ticks it was late for,
// so the rate holds as long as the clients keep up; what they achieve is the commit rate.
func (g *generator) steady(ctx context.Context, rate int, d time.Duration) (*commitLog, error) {
	total := int(float64(rate) * d.Seconds())
	tokens := make(chan struct{}, rate)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go pace(ctx, tokens, rate, total)
	return g.runClients(ctx, func(ctx context.Context, log *clientLog) error {
		for range tokens {
			if err := g.commitTx(ctx, 1, log); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
}

// pace sends total tokens, rate per second, then closes tokens.
func pace(ctx context.Context, tokens chan<- struct{}, rate, total int) {
	defer close(tokens)
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	began := time.Now()
	for sent := 0; sent < total; {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
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
func (g *generator) runClients(ctx context.Context, body func(context.Context, *clientLog) error) (*commitLog, error) {
	logs := make([]clientLog, g.clients)
	eg, ctx := errgroup.WithContext(ctx)
	for i := range logs {
		eg.Go(func() error { return body(ctx, &logs[i]) })
	}
	if err := eg.Wait(); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	out := &commitLog{byID: map[string]commit{}}
	for _, l := range logs {
		for i, id := range l.ids {
			c := l.commits[i]
			out.byID[id] = c
			if out.first.IsZero() || c.start.Before(out.first) {
				out.first = c.start
			}
			if c.end.After(out.last) {
				out.last = c.end
			}
		}
	}
	if len(out.byID) == 0 {
		return nil, fmt.Errorf("load: nothing was committed")
	}
	return out, nil
}

// commitTx commits size events in one transaction and logs them with its times.
func (g *generator) commitTx(ctx context.Context, size int, log *clientLog) error {
	ids := make([]string, 0, size)
	start := time.Now()
	err := pgx.BeginFunc(ctx, g.pool, func(tx pgx.Tx) error {
		for range size {
			id, err := g.writer.Append(ctx, tx, g.event())
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit %d events: %w", size, err)
	}
	log.add(ids, commit{start: start, end: time.Now()})
	return nil
}

// event is the next event of the generator's partner.
func (g *generator) event() outbox.Event { return newEvent(g.partner, g.seq.Add(1)) }

// newEvent is api_key.status_changed number n of partner, valid against the catalog's schema.
func newEvent(partner string, n int64) outbox.Event {
	key := fmt.Sprintf("key_%d", n)
	data, _ := json.Marshal(map[string]any{ // strings and an integer: Marshal cannot fail
		"api_key_id": key, "customer_id": "cus_bench", "previous_status": "active",
		"status": "suspended", "reason": "budget_exhausted", "version": n,
	})
	return outbox.Event{PartnerID: partner, Type: eventType, Subject: outbox.Subject{Type: "api_key", ID: key}, Data: data}
}
