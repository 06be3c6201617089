package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/internal/periodic"
	"github.com/hookstream/hookstream/internal/probes"
)

// componentRun runs one component with its settings; pool is nil for components without
// PostgreSQL.
type componentRun func(ctx context.Context, s settings, log *slog.Logger, reg prometheus.Registerer, pool *pgxpool.Pool) error

// runComponent is the body of a component command: parse its flags, open PostgreSQL when it
// needs it, and serve its loop with probes and metrics.
func runComponent(ctx context.Context, name string, args []string, out io.Writer, withDB bool, run componentRun) error {
	s, err := parseSettings(name, args, out)
	if err != nil {
		return err
	}
	log := s.logger()
	stopTracing, err := s.startTracing(ctx, name, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	var (
		pool   *pgxpool.Pool
		checks []probes.Check
	)
	if withDB {
		if pool, err = s.openPool(ctx, name); err != nil {
			return fmt.Errorf("postgres pool: %w", err)
		}
		defer pool.Close()
		checks = append(checks, probes.Check{Name: "postgres", Ping: pool.Ping})
	}
	var watch func(context.Context)
	if len(s.KafkaBrokers) > 0 {
		// /readyz says when the broker cannot be reached or refuses the handshake; the component
		// itself waits for it (every loop retries), so a broker outage or a refused credential
		// is a not-ready process, not an exit.
		probe, err := kgo.NewClient(s.base(nil, nil).ConnectionOptions()...)
		if err != nil {
			return fmt.Errorf("kafka probe client: %w", err)
		}
		defer probe.Close()
		check := probes.Check{Name: "kafka", Ping: explainedPing(s, probe.Ping)}
		checks = append(checks, check)
		watch = func(ctx context.Context) { watchKafka(ctx, log, s, check.Ping) }
		log.Info("kafka connection", "brokers", s.KafkaBrokers, "security", s.kafka.String())
	}
	return serveComponent(ctx, log, s.MetricsAddr, func(ctx context.Context, reg *prometheus.Registry) error {
		if watch != nil {
			// The watch ends with the component, however it ends.
			wctx, stop := context.WithCancel(ctx)
			watched := make(chan struct{})
			go func() { defer close(watched); watch(wctx) }()
			defer func() { stop(); <-watched }()
		}
		return run(ctx, s, log, reg, pool)
	}, checks...)
}

// explainedPing is ping with its handshake and authentication failures explained (kafkasec's
// Explain): what /readyz and the log say.
func explainedPing(s settings, ping func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error { return s.kafka.Explain(ping(ctx)) }
}

// kafkaWatchInterval is how often watchKafka checks the connection.
const kafkaWatchInterval = 10 * time.Second

// watchKafka logs when the Kafka connection of the process fails and why (a refused TLS
// handshake or SASL authentication, the broker away), and when it works again: once per
// change, not per check, until ctx ends.
func watchKafka(ctx context.Context, log *slog.Logger, s settings, ping func(context.Context) error) {
	last := "ok"
	periodic.NowAndEvery(ctx, kafkaWatchInterval, func(ctx context.Context) {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := ping(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		now := "ok"
		if err != nil {
			now = err.Error()
		}
		if now == last {
			return
		}
		if err != nil {
			log.Error("kafka: cannot connect", "err", now, "security", s.kafka.String())
		} else {
			log.Info("kafka: connected", "security", s.kafka.String())
		}
		last = now
	})
}

// serveComponent runs one component's loop and, unless addr is empty, its probe and metrics
// routes. It returns when ctx ends or the component fails.
func serveComponent(ctx context.Context, log *slog.Logger, addr string, run func(ctx context.Context, reg *prometheus.Registry) error, checks ...probes.Check) error {
	reg := newRegistry()
	g, gctx := errgroup.WithContext(ctx)
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("metrics listen %s: %w", addr, err)
		}
		srv := &http.Server{Handler: probes.Handler(reg, checks...), ReadHeaderTimeout: 10 * time.Second}
		log.Info("probes and metrics listening", "addr", "http://"+ln.Addr().String())
		serveHTTP(gctx, g, srv, ln, 5*time.Second)
	}
	g.Go(func() error {
		err := run(gctx, reg)
		if err == nil && ctx.Err() == nil {
			return errors.New("component stopped")
		}
		return err
	})
	err := g.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// serveHTTP serves srv on ln in g, and shuts it down, within grace, once ctx (g's) ends.
func serveHTTP(ctx context.Context, g *errgroup.Group, srv *http.Server, ln net.Listener, grace time.Duration) {
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		return srv.Shutdown(sctx)
	})
}

// openPool opens a PostgreSQL pool on s.DatabaseURL whose sessions name their command in
// pg_stat_activity (application_name hookstream-<name>), unless the URL names one itself: an
// operator sees which component holds a connection, a lock or a slow query, and how much of
// the server each one uses.
func (s settings) openPool(ctx context.Context, name string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(s.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "hookstream-" + name
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}
