// Package benchenv is the plumbing the benchmark programs share: a fresh migrated database per
// run, waiting for its cdc slot to stream, free ports, random names, and the median they report.
package benchenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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
	cleanup = func() { DropDatabase(server, name) }
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

// DropDatabase drops database name and the replication slot of the same name. A slot still
// held by an exiting walsender cannot be dropped, and PostgreSQL refuses to drop a database a
// slot refers to, so the holder is terminated and the drop retried for a few seconds.
func DropDatabase(server, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, server)
	if err != nil {
		return
	}
	defer c.Close(ctx)
	_, _ = c.Exec(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL`, name)
	for i := 0; i < 50; i++ {
		if _, err := c.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, name); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}

// WaitSlotStreaming waits until the logical replication slot is held by a reader and has
// reached its consistent point (confirmed_flush_lsn set), so that every transaction committed
// afterwards is streamed rather than folded into the slot's initial snapshot; the same rule as
// testenv.WaitSlotStreaming, for programs.
func WaitSlotStreaming(ctx context.Context, pool *pgxpool.Pool, slot string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var ready bool
		err := pool.QueryRow(ctx, `SELECT active AND confirmed_flush_lsn IS NOT NULL
			FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&ready)
		if err == nil && ready {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("slot %s not streaming after %s (last error: %v)", slot, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
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
