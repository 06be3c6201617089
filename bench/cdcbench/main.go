// Command cdcbench measures cdc on a real PostgreSQL and Kafka (make bench-cdc):
//
//	(a) PostgreSQL's own insert rate for 100-row outbox transactions with no reader,
//	(b) the rate at which cdc drains that backlog into committed Kafka transactions,
//	(c) commit-to-visible latency (PostgreSQL commit to a read_committed consumer) at a steady rate.
//
// Each run uses a fresh database and topic prefix; figures are medians over the runs, and b/a is
// reported per run and as the median ratio.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/benchenv"
	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/outbox"
)

func main() {
	dbURL, brokers, runs := benchenv.ServerFlags()
	var (
		events   = flag.Int("events", 100000, "events in the backlog of (a) and (b)")
		txnSize  = flag.Int("txn-size", 100, "events per transaction")
		writers  = flag.Int("writers", 2, "concurrent writers for (a)")
		rate     = flag.Int("rate", 2000, "events per second for (c)")
		duration = flag.Duration("steady", 10*time.Second, "duration of (c)")
	)
	flag.Parse()
	var as, bs, ratios, p50s, p99s []float64
	for i := 1; i <= *runs; i++ {
		r, err := run(*dbURL, strings.Split(*brokers, ","), *events, *txnSize, *writers, *rate, *duration)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cdcbench:", err)
			os.Exit(1)
		}
		fmt.Printf("run %d: (a) insert %8.0f events/s  (b) cdc drain %8.0f events/s  b/a %.2f  (c) at %d/s: p50 %5.1f ms  p99 %5.1f ms\n",
			i, r.insertRate, r.drainRate, r.drainRate/r.insertRate, *rate, r.p50*1000, r.p99*1000)
		as, bs, ratios = append(as, r.insertRate), append(bs, r.drainRate), append(ratios, r.drainRate/r.insertRate)
		p50s, p99s = append(p50s, r.p50), append(p99s, r.p99)
	}
	fmt.Printf("median over %d runs: (a) %.0f events/s  (b) %.0f events/s  b/a %.2f  (c) p50 %.1f ms  p99 %.1f ms\n",
		*runs, benchenv.Median(as), benchenv.Median(bs), benchenv.Median(ratios), benchenv.Median(p50s)*1000, benchenv.Median(p99s)*1000)
}

type result struct {
	insertRate, drainRate, p50, p99 float64
}

func run(server string, brokers []string, events, txnSize, writers, rate int, steady time.Duration) (result, error) {
	ctx := context.Background()
	var res result
	name := "hstbench_" + scratch.RandomHex(6)
	dbURL, err := scratch.MigratedDatabase(ctx, server, name)
	if err != nil {
		return res, err
	}
	defer scratch.DropDatabase(server, name) //nolint:errcheck // a leftover database is harmless
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	// The outbox takes events of existing partners only (migration 0021): p0…p49 and steady.
	if _, err := pool.Exec(ctx, `INSERT INTO partner (id) SELECT 'p' || i FROM generate_series(0, 49) i
		UNION ALL SELECT 'steady' ON CONFLICT (id) DO NOTHING`); err != nil {
		return res, err
	}

	prefix := "bench" + scratch.RandomHex(4)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tcfg := topics.DefaultConfig()
	tcfg.Prefix, tcfg.Partitions = prefix, 6
	if _, err := topics.Ensure(ctx, cl, tcfg); err != nil {
		return res, err
	}
	names := topics.For(prefix)
	defer adm.DeleteTopics(context.Background(), specNames(tcfg)...) //nolint:errcheck

	cfg := cdc.DefaultConfig()
	cfg.Base = component.Base{Brokers: brokers, Prefix: prefix, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg.DatabaseURL, cfg.Slot = dbURL, name

	// Create the slot (an empty snapshot), then stop: the backlog is written with no reader. The
	// slot must stream before cdc stops: an active slot may still be waiting for its consistent
	// point, a slot whose creation is cut short there is dropped again, and the next start would
	// publish the backlog from a snapshot instead of streaming it.
	stop, _, err := startCDC(cfg)
	if err != nil {
		return res, err
	}
	if err := scratch.WaitSlotStreaming(ctx, pool, name, time.Minute); err != nil {
		return res, err
	}
	stop()
	if err := waitSlotReleased(ctx, pool, name); err != nil {
		return res, err
	}

	// (a) PostgreSQL alone.
	began := time.Now()
	if err := writeBacklog(ctx, pool, events, txnSize, writers); err != nil {
		return res, err
	}
	res.insertRate = float64(events) / time.Since(began).Seconds()

	// (b) cdc drains the backlog into committed Kafka transactions.
	began = time.Now()
	stop, reg, err := startCDC(cfg)
	if err != nil {
		return res, err
	}
	defer stop()
	for {
		n, err := published(reg)
		if err != nil {
			return res, err
		}
		if n >= float64(events) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	res.drainRate = float64(events) / time.Since(began).Seconds()

	// (c) steady load, latency measured by a read_committed consumer.
	res.p50, res.p99, err = steadyLatency(ctx, pool, brokers, names.Events, rate, steady)
	return res, err
}

func startCDC(cfg cdc.Config) (stop func(), reg *prometheus.Registry, err error) {
	reg = prometheus.NewRegistry()
	cfg.Registerer = reg
	c, err := cdc.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = c.Run(ctx); close(done) }()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }, reg, nil
}

// waitSlotReleased waits until no process holds the slot, so the backlog is written with no
// reader.
func waitSlotReleased(ctx context.Context, pool *pgxpool.Pool, slot string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var active bool
		if err := pool.QueryRow(ctx, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&active); err == nil && !active {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	var holder *string
	_ = pool.QueryRow(ctx, `SELECT a.pid || ' ' || a.backend_type || ' ' || coalesce(a.state, '') FROM pg_replication_slots s
		JOIN pg_stat_activity a ON a.pid = s.active_pid WHERE slot_name = $1`, slot).Scan(&holder)
	return fmt.Errorf("slot %s still held after a minute (holder: %v)", slot, holder)
}

// writeBacklog commits events in transactions of txnSize through outbox.Append, pipelined with
// a batch per transaction so the measure is PostgreSQL's rate, not round trips.
func writeBacklog(ctx context.Context, pool *pgxpool.Pool, events, txnSize, writers int) error {
	per := events / writers
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		n := per
		if w == writers-1 {
			n = events - per*(writers-1)
		}
		wg.Add(1)
		go func(w, n int) {
			defer wg.Done()
			for done := 0; done < n; done += txnSize {
				size := min(txnSize, n-done)
				if err := appendBatch(ctx, pool, fmt.Sprintf("p%d", (w*7+done)%50), size); err != nil {
					errs <- err
					return
				}
			}
		}(w, n)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// appendBatch commits size events in one transaction. Append runs per event, as a platform
// would call it; its statements are queued in a pgx batch sent once per transaction. The events
// are valid catalog events (harness.NewEvent): cdc checks each against the catalog, as in
// production, and would dead-letter anything else.
func appendBatch(ctx context.Context, pool *pgxpool.Pool, partner string, size int) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		btx := &batchTx{Tx: tx, batch: batch}
		for i := 0; i < size; i++ {
			if _, err := outbox.Append(ctx, btx, harness.NewEvent(partner, int64(i+1))); err != nil {
				return err
			}
		}
		return tx.SendBatch(ctx, batch).Close()
	})
}

// batchTx queues Append's insert into a batch instead of running it at once.
type batchTx struct {
	pgx.Tx
	batch *pgx.Batch
}

func (b *batchTx) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	b.batch.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

// published reads cdc's own count of events committed to Kafka.
func published(reg *prometheus.Registry) (float64, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() == "hookstream_cdc_events_published_total" {
			return mf.GetMetric()[0].GetCounter().GetValue(), nil
		}
	}
	return 0, nil
}

func steadyLatency(ctx context.Context, pool *pgxpool.Pool, brokers []string, topic string, rate int, d time.Duration) (p50, p99 float64, err error) {
	cons, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return 0, 0, err
	}
	defer cons.Close()
	poll := func(d time.Duration) kgo.Fetches {
		pctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return cons.PollFetches(pctx)
	}
	poll(500 * time.Millisecond) // join before the load starts

	const perTick = 20
	tick := time.Second * perTick / time.Duration(rate)
	stopAt := time.Now().Add(d)
	werr := make(chan error, 1)
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for time.Now().Before(stopAt) {
			<-t.C
			if err := appendBatch(ctx, pool, "steady", perTick); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	var lat []float64
	want := int(d/tick) * perTick * 9 / 10
	deadline := stopAt.Add(30 * time.Second)
	for len(lat) < want && time.Now().Before(deadline) {
		fs := poll(time.Second)
		now := time.Now()
		fs.EachRecord(func(r *kgo.Record) {
			for _, h := range r.Headers {
				if h.Key == records.HeaderCommitTime {
					if t, err := time.Parse(time.RFC3339Nano, string(h.Value)); err == nil {
						lat = append(lat, now.Sub(t).Seconds())
					}
				}
			}
		})
	}
	if err := <-werr; err != nil {
		return 0, 0, err
	}
	if len(lat) == 0 {
		return 0, 0, fmt.Errorf("no events observed in the steady phase")
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], nil
}

func specNames(c topics.Config) []string {
	var out []string
	for _, s := range c.Specs() {
		out = append(out, s.Name)
	}
	return out
}
