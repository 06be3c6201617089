package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/internal/kafkalag"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/recorder"
)

// runRecorder is `hookstream recorder`: attempts → PostgreSQL history.
func runRecorder(ctx context.Context, args []string, out io.Writer) error {
	return runComponent(ctx, "recorder", args, out, true, runRecorderWith)
}

// recorderConfig is the recorder configuration of these settings: its history sweep keeps
// HOOKSTREAM_HISTORY_RETENTION, whatever the event log keeps.
func (s settings) recorderConfig(log *slog.Logger, reg prometheus.Registerer) recorder.Config {
	cfg := recorder.DefaultConfig()
	cfg.Base = s.base(log, reg)
	cfg.HistoryRetention = s.HistoryRetention
	cfg.InstanceID = s.InstanceID
	cfg.TracerProvider = s.tracer
	return cfg
}

func runRecorderWith(ctx context.Context, s settings, log *slog.Logger, reg prometheus.Registerer, pool *pgxpool.Pool) error {
	r, err := recorder.New(s.recorderConfig(log, reg), pool)
	if err != nil {
		return err
	}
	names := topics.For(s.TopicPrefix)
	attempts, pending := r.Groups()
	lag, err := lagMonitor(s, log, reg,
		kafkalag.Consumption{Group: attempts, Topic: names.Attempts},
		kafkalag.Consumption{Group: pending, Topic: names.Deliveries})
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.Run(gctx) })
	g.Go(func() error { return lag(gctx) })
	return g.Wait()
}
