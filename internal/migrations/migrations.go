// Package migrations holds hookstream's PostgreSQL schema as ordered SQL files embedded in the
// binary, and applies them: in order, each in its own transaction, under an advisory lock so that
// several processes starting at once apply each version exactly once.
package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql
var files embed.FS

// lockKey is the advisory lock that serialises migrators ("hookstrm" in ASCII).
const lockKey int64 = 0x686f6f6b7374726d

// Migration is one schema version.
type Migration struct {
	Version  int
	Name     string
	SQL      string
	Checksum string
}

// All returns the embedded migrations in version order.
func All() ([]Migration, error) {
	entries, err := fs.ReadDir(files, "sql")
	if err != nil {
		return nil, fmt.Errorf("migrations: read embedded files: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		prefix, _, ok := strings.Cut(name, "_")
		if !ok {
			return nil, fmt.Errorf("migrations: file %q has no version prefix", name)
		}
		version, err := strconv.Atoi(prefix)
		if err != nil {
			return nil, fmt.Errorf("migrations: file %q: version %q is not a number", name, prefix)
		}
		body, err := files.ReadFile(path.Join("sql", name))
		if err != nil {
			return nil, fmt.Errorf("migrations: read %s: %w", name, err)
		}
		sum := sha256.Sum256(body)
		out = append(out, Migration{Version: version, Name: name, SQL: string(body), Checksum: hex.EncodeToString(sum[:])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations: version %d appears twice (%s, %s)", out[i].Version, out[i-1].Name, out[i].Name)
		}
	}
	return out, nil
}

// Fingerprint identifies the whole set of migrations; the test harness names its template
// database after it so a schema change gets a fresh template.
func Fingerprint() (string, error) {
	all, err := All()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range all {
		h.Write([]byte(m.Checksum))
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Apply brings the database at conn up to the newest version and returns the versions it applied
// (none when the schema is current). An applied migration whose file has changed since is an
// error: the schema in the database would no longer match the code.
func Apply(ctx context.Context, conn *pgx.Conn) ([]int, error) {
	return apply(ctx, conn, math.MaxInt)
}

// apply is Apply up to and including version through; tests use it to build a database as an
// older binary left it.
func apply(ctx context.Context, conn *pgx.Conn, through int) ([]int, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		return nil, fmt.Errorf("migrations: take advisory lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey) //nolint:errcheck // released with the session anyway

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migration (
		version     integer PRIMARY KEY,
		name        text NOT NULL,
		checksum    text NOT NULL,
		applied_at  timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrations: create schema_migration: %w", err)
	}
	applied := map[int]string{}
	rows, err := conn.Query(ctx, `SELECT version, checksum FROM schema_migration`)
	if err != nil {
		return nil, fmt.Errorf("migrations: read applied versions: %w", err)
	}
	for rows.Next() {
		var v int
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, fmt.Errorf("migrations: read applied versions: %w", err)
		}
		applied[v] = sum
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrations: read applied versions: %w", err)
	}

	var done []int
	for _, m := range all {
		if m.Version > through {
			break
		}
		if sum, ok := applied[m.Version]; ok {
			if sum != m.Checksum {
				return done, fmt.Errorf("migrations: %s was changed after it was applied (checksum %s in database, %s in binary)", m.Name, sum[:12], m.Checksum[:12])
			}
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migration (version, name, checksum) VALUES ($1, $2, $3)`, m.Version, m.Name, m.Checksum)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("migrations: apply %s: %w", m.Name, err)
		}
		done = append(done, m.Version)
	}
	return done, nil
}
