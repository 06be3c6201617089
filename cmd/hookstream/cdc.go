package main

import (
	"context"
	"io"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/cdc"
)

// runCDC is `hookstream cdc`: tail the outbox into Kafka. Run two for failover; one waits.
func runCDC(ctx context.Context, args []string, _ io.Writer) error {
	s, err := parseSettings("cdc", args)
	if err != nil {
		return err
	}
	log := s.logger()
	return serveComponent(ctx, log, s.MetricsAddr, func(ctx context.Context, reg *prometheus.Registry) error {
		c, err := cdc.New(s.cdcConfig(log, reg))
		if err != nil {
			return err
		}
		return c.Run(ctx)
	})
}
