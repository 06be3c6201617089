package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/cdc"
)

// runCDC is `hookstream cdc`: tail the outbox into Kafka. Run two for failover; one waits.
func runCDC(ctx context.Context, args []string, out io.Writer) error {
	return runComponent(ctx, "cdc", args, out, false, func(ctx context.Context, s settings, log *slog.Logger, reg prometheus.Registerer, _ *pgxpool.Pool) error {
		c, err := cdc.New(s.cdcConfig(log, reg))
		if err != nil {
			return err
		}
		return c.Run(ctx)
	})
}
