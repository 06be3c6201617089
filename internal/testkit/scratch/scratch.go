package scratch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/migrations"
)

// RandomHex returns n random bytes in hex, for names no other run uses.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // documented never to fail since Go 1.24
	return hex.EncodeToString(b)
}

// DatabaseURL returns server's URL pointing at database name. It is rebuilt from the parsed
// parts, so any form of URL or keyword/value string works as server.
func DatabaseURL(server, name string) (string, error) {
	cfg, err := pgx.ParseConfig(server)
	if err != nil {
		return "", fmt.Errorf("scratch: parse server URL: %w", err)
	}
	user := cfg.User
	if cfg.Password != "" {
		user += ":" + cfg.Password
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", user, cfg.Host, cfg.Port, name), nil
}

// CreateDatabase creates database name on server, a copy of template unless template is empty,
// and returns its URL.
func CreateDatabase(ctx context.Context, server, name, template string) (string, error) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", fmt.Errorf("scratch: connect: %w", err)
	}
	defer conn.Close(context.Background())
	sql := "CREATE DATABASE " + name
	if template != "" {
		sql += " TEMPLATE " + template
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return "", fmt.Errorf("scratch: create database %s: %w", name, err)
	}
	return DatabaseURL(server, name)
}

// MigratedDatabase creates database name on server, applies every migration and returns its
// URL. On failure it drops the database again.
func MigratedDatabase(ctx context.Context, server, name string) (string, error) {
	url, err := CreateDatabase(ctx, server, name, "")
	if err != nil {
		return "", err
	}
	conn, err := pgx.Connect(ctx, url)
	if err == nil {
		_, err = migrations.Apply(ctx, conn)
		conn.Close(context.Background())
	}
	if err != nil {
		_ = DropDatabase(server, name)
		return "", fmt.Errorf("scratch: migrate %s: %w", name, err)
	}
	return url, nil
}

// DropDatabase drops database name and first every replication slot on it, since PostgreSQL
// refuses to drop a database a slot refers to. A slot still held by an exiting walsender cannot
// be dropped, so the holder is terminated and the drop retried for a few seconds. It takes no
// context because it runs in cleanups, after the caller's context may have ended; it gives up
// after a minute.
func DropDatabase(server, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return fmt.Errorf("scratch: drop %s: %w", name, err)
	}
	defer conn.Close(context.Background())
	_, _ = conn.Exec(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL`, name)
	for i := 0; i < 50; i++ {
		if _, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, name); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // the walsender is still exiting
	}
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("scratch: drop %s: %w", name, err)
	}
	return nil
}

// WaitSlotStreaming waits until the logical replication slot is held by a reader and has
// reached its consistent point, so that every transaction committed afterwards is streamed.
// A slot being created shows as active while it still waits for the transactions running in
// the whole cluster to end (confirmed_flush_lsn is NULL until then); a commit in that window is
// part of the slot's initial snapshot, not of the stream.
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

// Deadlocks returns how many deadlocks PostgreSQL detected in database name on server
// (pg_stat_database.deadlocks, SQLSTATE 40P01), whichever client met them and whether or not it
// logged them. A session reports its counts when it goes idle or ends, so Deadlocks first waits
// (at most wait) until no session is connected to the database; call it after the database's
// users have stopped.
func Deadlocks(ctx context.Context, server, name string, wait time.Duration) (int64, error) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return 0, fmt.Errorf("scratch: deadlocks of %s: %w", name, err)
	}
	defer conn.Close(context.Background())
	for deadline := time.Now().Add(wait); ; {
		var sessions int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, name).Scan(&sessions); err != nil {
			return 0, fmt.Errorf("scratch: deadlocks of %s: %w", name, err)
		}
		if sessions == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	var n int64
	if err := conn.QueryRow(ctx, `SELECT coalesce(sum(deadlocks), 0) FROM pg_stat_database WHERE datname = $1`, name).Scan(&n); err != nil {
		return 0, fmt.Errorf("scratch: deadlocks of %s: %w", name, err)
	}
	return n, nil
}
