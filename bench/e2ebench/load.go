package main

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/outbox"
)

// newGenerator is the platform: clients committing api_key.status_changed events for one
// partner through outbox.Writer (harness.NewEvent; every endpoint subscribes to api_key.*).
func newGenerator(pool *pgxpool.Pool, partner string, clients int) (*harness.Generator, error) {
	return harness.NewGenerator(pool, clients, func(n int64) outbox.Event { return harness.NewEvent(partner, n) })
}
