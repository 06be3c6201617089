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
		if pool, err = pgxpool.New(ctx, s.DatabaseURL); err != nil {
			return fmt.Errorf("postgres pool: %w", err)
		}
		defer pool.Close()
		checks = append(checks, probes.Check{Name: "postgres", Ping: pool.Ping})
	}
	if len(s.KafkaBrokers) > 0 {
		// /readyz says when the broker cannot be reached; the component itself waits for it
		// (every loop retries), so a broker outage is a not-ready process, not an exit.
		probe, err := kgo.NewClient(kgo.SeedBrokers(s.KafkaBrokers...))
		if err != nil {
			return fmt.Errorf("kafka probe client: %w", err)
		}
		defer probe.Close()
		checks = append(checks, probes.Check{Name: "kafka", Ping: probe.Ping})
	}
	return serveComponent(ctx, log, s.MetricsAddr, func(ctx context.Context, reg *prometheus.Registry) error {
		return run(ctx, s, log, reg, pool)
	}, checks...)
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
