package main

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/kafkalag"
)

// lagMonitor returns the body of a goroutine that exports the consumer lag of a component's own
// groups (package kafkalag) until ctx ends, beside the component's work. A broker outage only
// fails its checks; it never stops the component.
func lagMonitor(s settings, log *slog.Logger, reg prometheus.Registerer, cs ...kafkalag.Consumption) (func(ctx context.Context) error, error) {
	cfg := kafkalag.DefaultConfig()
	cfg.Brokers, cfg.Consumptions, cfg.Logger, cfg.Registerer = s.KafkaBrokers, cs, log, reg
	cfg.KafkaOptions = s.kafkaOpts
	m, err := kafkalag.New(cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		defer m.Close()
		return m.Run(ctx)
	}, nil
}
