package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/streams"
)

// runFanout is `hookstream fanout`: events → deliveries, in a consumer group.
func runFanout(ctx context.Context, args []string, _ io.Writer) error {
	return runComponent(ctx, "fanout", args, false, func(ctx context.Context, s settings, log *slog.Logger, reg prometheus.Registerer, _ *pgxpool.Pool) error {
		return runFanoutWith(ctx, s, log, reg)
	})
}

// runFanoutWith runs an endpoint view and fanout over it until ctx ends.
func runFanoutWith(ctx context.Context, s settings, log *slog.Logger, reg prometheus.Registerer) error {
	view, err := streams.NewEndpointView(streams.ViewConfig{Brokers: s.KafkaBrokers, Topic: topics.For(s.TopicPrefix).Endpoints, Logger: log,
		Registerer: reg, Name: "fanout"})
	if err != nil {
		return err
	}
	cfg := streams.DefaultFanoutConfig()
	cfg.Brokers, cfg.Prefix, cfg.Logger, cfg.Registerer = s.KafkaBrokers, s.TopicPrefix, log, reg
	if s.InstanceID != "" {
		cfg.InstanceID = s.InstanceID
	}
	f, err := streams.NewFanout(cfg, view)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return view.Run(gctx) })
	g.Go(func() error { return f.Run(gctx) })
	return g.Wait()
}

// runRecorder is `hookstream recorder`: attempts → PostgreSQL history.
func runRecorder(ctx context.Context, args []string, _ io.Writer) error {
	return runComponent(ctx, "recorder", args, true, runRecorderWith)
}

func runRecorderWith(ctx context.Context, s settings, log *slog.Logger, reg prometheus.Registerer, pool *pgxpool.Pool) error {
	cfg := streams.DefaultRecorderConfig()
	cfg.Brokers, cfg.Prefix, cfg.Logger, cfg.Registerer = s.KafkaBrokers, s.TopicPrefix, log, reg
	cfg.HistoryRetention = s.HistoryRetention
	cfg.InstanceID = s.InstanceID
	r, err := streams.NewRecorder(cfg, pool)
	if err != nil {
		return err
	}
	return r.Run(ctx)
}
