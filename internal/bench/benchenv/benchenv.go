// Package benchenv is the plumbing the benchmark programs share: a fresh migrated database per
// run, random names, and the median they report.
package benchenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/migrations"
)

// Database creates database name on server, applies the migrations, and returns its URL and a
// cleanup that drops it (and a replication slot of the same name, if a run left one).
func Database(ctx context.Context, server, name string) (url string, cleanup func(), err error) {
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	cfg, err := pgx.ParseConfig(server)
	if err != nil {
		return "", nil, err
	}
	url = fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	cleanup = func() {
		c, err := pgx.Connect(context.Background(), server)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, name)
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	_, err = migrations.Apply(ctx, conn)
	conn.Close(ctx)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return url, cleanup, nil
}

// Median of v (the upper one for an even count).
func Median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// RandomHex returns n random bytes in hex, for unique names.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)
}
