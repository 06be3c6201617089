package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/admin"
	"github.com/hookstream/hookstream/console"
	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/probes"
)

// runAdmin is `hookstream admin`: the HTTP API on HOOKSTREAM_ADMIN_ADDR, with the web console
// (/console) and the probes on the same address, and the metrics there too unless
// HOOKSTREAM_METRICS_ADDR gives them (and the probes) an address of their own.
func runAdmin(ctx context.Context, args []string, out io.Writer) error {
	s, err := parseSettings("admin", args, out)
	if err != nil {
		return err
	}
	log := s.logger()
	pool, err := s.openPool(ctx, "admin")
	if err != nil {
		return fmt.Errorf("postgres pool: %w", err)
	}
	defer pool.Close()
	return serveAdmin(ctx, s, log, newRegistry(), pool, s.MetricsAddr, nil)
}

// serveAdmin serves the admin API, the console and the probes on s.AdminAddr, runs the replay-job runner,
// and runs the extra components alongside until ctx ends or one fails. With a metricsAddr,
// /metrics is served there with /healthz and /readyz, and no longer on s.AdminAddr, which
// partners reach; the probes stay on s.AdminAddr too, for load balancers that check the API's
// own port.
func serveAdmin(ctx context.Context, s settings, log *slog.Logger, reg *prometheus.Registry, pool *pgxpool.Pool,
	metricsAddr string, components map[string]func(context.Context) error) error {
	key, eg, err := s.secretsAndEgress()
	if err != nil {
		return err
	}
	guard, err := egress.New(eg)
	if err != nil {
		return err
	}
	cfg := admin.DefaultConfig()
	cfg.Base = s.base(log, reg)
	cfg.OperatorToken, cfg.SecretKeys, cfg.Egress = s.AdminToken, key, guard
	cfg.FeedRetention, cfg.OutboxRetention, cfg.HistoryRetention = s.FeedRetention, s.OutboxRetention, s.HistoryRetention
	cfg.EventLogRetention = s.eventLogRetention()
	// Replays are numbered above the most attempts any policy may give (replay/attempts.go).
	cfg.AutomaticAttempts = max(len(s.RetrySchedule)+1, s.RetryBounds.MaxAttempts)
	cfg.Retry.Schedule, cfg.Retry.RetryClientErrors, cfg.Retry.Bounds = s.RetrySchedule, s.RetryClientErrors, s.RetryBounds
	cfg.Limits = s.Limits
	api, err := admin.New(cfg, pool)
	if err != nil {
		return err
	}
	defer api.Close()

	ccfg := console.DefaultConfig()
	ccfg.API, ccfg.Logger, ccfg.Registerer = api.Handler(), log, reg
	ccfg.UserAgent = thisBuild().userAgent() // the sender's, from the same build
	web, err := console.New(ccfg)
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.Handle("/v1/", api.Handler())
	mux.Handle(console.Prefix, web.Handler())
	mux.Handle("GET /{$}", http.RedirectHandler(console.Prefix, http.StatusFound))
	checks := api.Checks()
	var kafkaPing func(context.Context) error
	for i, c := range checks {
		if c.Name == "kafka" {
			checks[i].Ping = explainedPing(s, c.Ping)
			kafkaPing = checks[i].Ping
		}
	}
	var metricsLn net.Listener
	if metricsAddr != "" {
		mux.Handle("/", probes.Health(checks...))
		if metricsLn, err = net.Listen("tcp", metricsAddr); err != nil {
			return fmt.Errorf("metrics listen %s: %w", metricsAddr, err)
		}
	} else {
		mux.Handle("/", probes.Handler(reg, checks...))
	}
	ln, err := net.Listen("tcp", s.AdminAddr)
	if err != nil {
		if metricsLn != nil {
			metricsLn.Close()
		}
		return fmt.Errorf("admin listen %s: %w", s.AdminAddr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(api.EndStreams)
	log.Info("admin API listening", "addr", "http://"+ln.Addr().String())

	g, gctx := errgroup.WithContext(ctx)
	serveHTTP(gctx, g, srv, ln, 10*time.Second)
	if metricsLn != nil {
		msrv := &http.Server{Handler: probes.Handler(reg, checks...), ReadHeaderTimeout: 10 * time.Second}
		log.Info("probes and metrics listening", "addr", "http://"+metricsLn.Addr().String())
		serveHTTP(gctx, g, msrv, metricsLn, 5*time.Second)
	}
	g.Go(func() error { return api.Run(gctx) })
	if kafkaPing != nil {
		log.Info("kafka connection", "brokers", s.KafkaBrokers, "security", s.kafka.String())
		g.Go(func() error { watchKafka(gctx, log, s, kafkaPing); return nil })
	}
	for name, run := range components {
		g.Go(func() error {
			if err := run(gctx); err != nil && gctx.Err() == nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
	}
	err = g.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}
