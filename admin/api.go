package admin

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/internal/probes"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/replay"
)

// API is the admin HTTP API. Build it with New, serve Handler, run Run for the replay jobs, and
// Close it after both have stopped.
type API struct {
	cfg          Config
	pool         *pgxpool.Pool
	log          *slog.Logger
	guard        *egress.Guard
	names        topics.Names
	kafka        *kgo.Client // produces delivery records; lists offsets
	adm          *kadm.Client
	events       *eventlog.Log
	replays      *replay.Engine
	testEvents   *rateLog // the test-event quota of this process
	replaysRate  *rateLog // the single-replay quota of this process
	quotaTold    *quotaTold
	metrics      *apiMetrics
	operatorHash [sha256.Size]byte
	stop         chan struct{} // closed by Close: ends the reader janitor
	streamsEnd   chan struct{} // closed by EndStreams: ends the open event streams

	closeOnce, endStreamsOnce sync.Once

	mux     *http.ServeMux
	routes  []route
	rated   map[string]*rateLog // by route pattern: the routes bound by a per-minute quota (quota.go)
	handler http.Handler
}

// New returns the API over pool (a PostgreSQL database migrated to the current schema) and the
// Kafka cluster of cfg. It does not contact Kafka until a request or job needs it.
func New(cfg Config, pool *pgxpool.Pool) (*API, error) {
	if pool == nil {
		return nil, errors.New("admin: no PostgreSQL pool")
	}
	if cfg.Egress == nil {
		g, err := egress.New(egress.DefaultConfig())
		if err != nil {
			return nil, fmt.Errorf("admin: egress guard: %w", err)
		}
		cfg.Egress = g
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.With("component", "admin")
	cl, err := kgo.NewClient(cfg.ClientOptions(log,
		// Keyed by endpoint_id with the default partitioner, like fanout: one partition holds all
		// of an endpoint's work (design.md section 5).
		kgo.ProducerBatchMaxBytes(1<<20),
	)...)
	if err != nil {
		return nil, fmt.Errorf("admin: kafka client: %w", err)
	}
	names := topics.For(cfg.Prefix)
	a := &API{
		cfg:          cfg,
		pool:         pool,
		log:          log,
		guard:        cfg.Egress,
		names:        names,
		kafka:        cl,
		adm:          kadm.NewClient(cl),
		metrics:      m,
		testEvents:   newRateLog(cfg.Limits.TestEventsPerMinute),
		replaysRate:  newRateLog(cfg.Limits.ReplaysPerMinute),
		quotaTold:    &quotaTold{at: map[quotaKey]time.Time{}, now: time.Now},
		operatorHash: sha256.Sum256([]byte(cfg.OperatorToken)),
		stop:         make(chan struct{}),
		streamsEnd:   make(chan struct{}),
	}
	// The event log's readers send franz-go's warnings and errors to the API's log too.
	readerOpts := slices.Concat(cfg.Security, []kgo.Opt{kgo.WithLogger(component.KafkaLogger(log))}, cfg.KafkaOptions)
	a.events = eventlog.New(eventlog.Config{
		Topic: names.Events, Checkpoints: names.Checkpoints, Brokers: cfg.Brokers, KafkaOptions: readerOpts, Admin: a.adm,
		MaxReaders: cfg.MaxLogReaders, CountTTL: cfg.PartitionCountTTL, LookupWindow: cfg.EventLookupWindow, Scanned: m.feedRecs,
	})
	a.replays, err = replay.New(replay.Config{
		Client: cl, Deliveries: names.Deliveries, Log: a.events, AutomaticAttempts: cfg.AutomaticAttempts,
		Batch: cfg.ReplayBatch, Workers: cfg.ReplayWorkers, JobLease: cfg.JobLease, PollInterval: cfg.JobPollInterval,
		MaxScan: cfg.MaxFeedScan, MaxDeliveries: cfg.Limits.ReplayDeliveries,
		RatePerSec: cfg.Limits.ReplayDeliveriesPerSec, Logger: a.log, Registerer: cfg.Registerer,
	}, pool)
	if err != nil {
		cl.Close()
		return nil, err
	}
	a.buildRouter()
	go a.janitor()
	return a, nil
}

// Run executes the replay jobs until ctx ends (replay.Engine.Run): queued ones, and running ones
// whose process stopped or died. On return every job this process held has been released for
// the next process to resume.
func (a *API) Run(ctx context.Context) error { return a.replays.Run(ctx) }

// Handler serves every /v1 route (design.md section 10). The probes and /metrics are served by
// internal/probes; mount both on one mux:
//
//	mux.Handle("/v1/", api.Handler())
//	mux.Handle("/", probes.Handler(reg, api.Checks()...))
func (a *API) Handler() http.Handler { return a.handler }

// Checks are the readiness checks of the API's dependencies, for probes.Handler.
func (a *API) Checks() []probes.Check {
	return []probes.Check{
		{Name: "postgres", Ping: a.pool.Ping},
		{Name: "kafka", Ping: a.kafka.Ping},
	}
}

// Close releases the Kafka client. Call it after the HTTP server has shut down and Run has
// returned.
func (a *API) Close() {
	a.closeOnce.Do(func() {
		a.EndStreams()
		close(a.stop)
		a.events.Close()
		a.kafka.Close()
	})
}

// EndStreams ends every open event stream (GET …/events/stream), as the client would see a
// dropped connection: it reconnects with its last cursor elsewhere or later. Register it with
// the HTTP server's RegisterOnShutdown, whose graceful shutdown otherwise waits for streams
// that never end on their own.
func (a *API) EndStreams() {
	a.endStreamsOnce.Do(func() { close(a.streamsEnd) })
}

// janitor closes events-topic readers kept too long without a continuation, forgets
// partners whose test events left the quota's window, and deletes expired idempotency keys.
func (a *API) janitor() {
	t := time.NewTicker(eventlog.ReaderIdle / 3)
	defer t.Stop()
	keys := time.NewTicker(10 * time.Minute)
	defer keys.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
			a.events.Sweep()
			a.testEvents.sweep()
			a.replaysRate.sweep()
		case <-keys.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			a.sweepIdempotencyKeys(ctx)
			cancel()
		}
	}
}

// fault turns an unexpected error into the client's answer: 503 when a dependency is down (the
// client may retry), 500 otherwise. Either way it is logged: a 5xx is a fault of ours, never the
// client's input.
func (a *API) fault(ctx context.Context, what string, err error) *apiError {
	if ctx.Err() != nil {
		// The client went away; nobody reads the answer.
		return errorf(http.StatusServiceUnavailable, CodeUnavailable, "request canceled")
	}
	var pgErr *pgconn.PgError
	if errors.Is(err, eventlog.ErrUnavailable) || errors.Is(err, replay.ErrUnavailable) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err) || (!errors.As(err, &pgErr) && isConnectionError(err)) {
		a.log.Error("dependency unavailable", "op", what, "request_id", requestID(ctx), "err", err)
		return errorf(http.StatusServiceUnavailable, CodeUnavailable, "a dependency of the API is unavailable; retry later")
	}
	a.log.Error("internal error", "op", what, "request_id", requestID(ctx), "err", err)
	return errorf(http.StatusInternalServerError, CodeInternal, "internal error")
}

func isConnectionError(err error) bool {
	var connErr *pgconn.ConnectError
	return errors.As(err, &connErr) || errors.Is(err, context.DeadlineExceeded)
}
