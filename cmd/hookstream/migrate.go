package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/migrations"
	"github.com/hookstream/hookstream/outbox"
)

func runMigrate(ctx context.Context, args []string, out io.Writer) error {
	s, err := parseSettings("migrate", args, out)
	if err != nil {
		return err
	}
	return migrate(ctx, s.logger(), s.DatabaseURL)
}

// migrate applies every pending migration to the database at url.
func migrate(ctx context.Context, log *slog.Logger, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL (HOOKSTREAM_DATABASE_URL): %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	applied, err := migrations.Apply(ctx, conn)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		log.Info("schema is current")
	} else {
		log.Info("migrations applied", "versions", applied)
	}
	created, err := outbox.CreatePartitions(ctx, conn, time.Now())
	if err != nil {
		return err
	}
	if len(created) > 0 {
		log.Info("outbox partitions created", "partitions", created)
	}
	return nil
}
