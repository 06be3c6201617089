// Package migrations holds hookstream's PostgreSQL schema as ordered SQL files embedded in the
// binary, and applies them: in order, each in its own transaction, under an advisory lock so that
// several processes starting at once apply each version exactly once.
//
// Each applied migration's checksum is recorded, and a binary whose file differs from what was
// applied refuses to start. The checksum covers the statements only: lines that are blank or
// whose text begins with "--" are left out, so a file's comments can be corrected without
// touching any deployment. Databases migrated by binaries that summed the whole file are
// accepted through legacyChecksums.
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
	Version int
	Name    string
	SQL     string
	// Checksum is the SHA-256, in hex, of the file's statements (see checksum).
	Checksum string
}

// checksum is the SHA-256, in hex, of sql without its comment-only and blank lines: the lines
// PostgreSQL runs, each kept as it is written. A comment after a statement on the same line
// stays in the sum. A "--" line inside a function body is a comment there too; only a string
// literal spanning lines could hold a "--" line that is data, and no migration has one.
func checksum(sql string) string {
	h := sha256.New()
	for line := range strings.Lines(sql) {
		if trimmed := strings.TrimSpace(line); trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		h.Write([]byte(strings.TrimRight(line, "\r\n")))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// legacyChecksums are the checksums binaries before statement checksums recorded: the SHA-256 of
// the whole file, comments included, of each migration as it stood then. A database holding one
// of these for its version applied that very file, so it is as current as one holding the new
// sum. Frozen: a migration added later never had a whole-file sum recorded.
var legacyChecksums = map[int]string{
	1:  "b12c867c65e0832637ae1f4fe07bc3bb00655a5e4a72620511cc21491759a449",
	2:  "d6b332eb1255a3872bfc7c937c940d0a6b8cfb0986002ecead8111813ff2086c",
	3:  "c67df265ab53f8770a265135f66a0b3d3994306f0470015dc7981b1624912253",
	4:  "5b3b821fe3ef52119829563eeb7ac921dc09fabfec93d0c710b26869fdc76d69",
	5:  "2a9c46115fa8de675a37603dd825b112b250c6e067fce82330fba487dfea7d0c",
	6:  "b511e6fe50af0ee971a997eb73d09c564789eaa40ea7feab0a0aff5a4bbf503a",
	7:  "35e643140a81ec3dfcf2ac1f345ea38875e448505fda0da54fad1fed1e67babf",
	8:  "d063c2c6e3f2e89c774ec7d9141ddc8c775977e3580233068cc880579a52826d",
	9:  "ebfc87afd8bd30e82f0479539c16c1958de89471cb6f86c9be55cbee0c4482f4",
	10: "d4a5628094a7b1f6f80121eb5fad21ffb7187f143b2a6d9e064a378f5868c6ac",
	11: "b5a5ca995719c08ad330917c0848dbffc1b153f864fc6524c5f87547b16f3e31",
	12: "89e33b32f6b602edf248a8025dd66e3be28b339e06621706ab53551a08fd4dce",
	13: "597dbfc2f8d4b4c763a81f8dad79d5cea07fc636978164ebc79fb1f19db73b19",
	14: "b07cb47472bc154196e37a63f00df11dd5c4a09f1e584392b7e66ff38600fd02",
}

// matches reports whether recorded, the checksum a database holds for m's version, says the
// database applied m: the statement checksum, or the whole-file sum an older binary recorded.
func (m Migration) matches(recorded string) bool {
	legacy, ok := legacyChecksums[m.Version]
	return recorded == m.Checksum || ok && recorded == legacy
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
		out = append(out, Migration{Version: version, Name: name, SQL: string(body), Checksum: checksum(string(body))})
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
// (none when the schema is current). An applied migration whose statements have changed since is
// an error: the schema in the database would no longer match the code.
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
			if !m.matches(sum) {
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
