package partnerkeys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Prefix starts every partner API key, so leaked keys are easy to recognise and scan for.
const Prefix = "hsk_"

// maxToken bounds what is hashed and looked up: no key is longer, and a bearer token of
// megabytes is refused before any work.
const maxToken = 512

// touchInterval bounds how often a key's last_used_at is written: once a minute is enough to
// tell used keys from stale ones without a write per request.
const touchInterval = time.Minute

// ErrUnknown means a token is no live partner API key: malformed, unknown or revoked.
var ErrUnknown = errors.New("partnerkeys: not a valid partner API key")

// Key is a verified partner API key: the partner it acts for and the key's id.
type Key struct {
	PartnerID string
	KeyID     string
}

// DB is what the package needs of PostgreSQL: a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// New returns a fresh partner API key and the hash that is stored in its place (R36).
func New() (key string, hash []byte, err error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, fmt.Errorf("partnerkeys: new key: %w", err)
	}
	key = Prefix + base64.RawURLEncoding.EncodeToString(raw)
	return key, hashOf(key), nil
}

// hashOf is what is stored of a key, and what a token is looked up by.
func hashOf(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// Create makes a key for the partner and stores its hash under id, named name. It returns the
// key, which is never seen again, and when it was created. The partner must exist.
func Create(ctx context.Context, db DB, id, partnerID, name string) (key string, createdAt time.Time, err error) {
	key, hash, err := New()
	if err != nil {
		return "", time.Time{}, err
	}
	if err := db.QueryRow(ctx, `INSERT INTO partner_api_key (id, partner_id, key_hash, name) VALUES ($1, $2, $3, $4) RETURNING created_at`,
		id, partnerID, hash, name).Scan(&createdAt); err != nil {
		return "", time.Time{}, fmt.Errorf("partnerkeys: store key %s of partner %s: %w", id, partnerID, err)
	}
	return key, createdAt, nil
}

// Verify resolves a partner API key (the bearer token of the admin API) to its partner. Only the
// key's hash is looked up; last_used_at is kept up to date (touchInterval). log gets a warning
// when that bookkeeping fails; it may be nil.
func Verify(ctx context.Context, db DB, log *slog.Logger, token string) (Key, error) {
	if !strings.HasPrefix(token, Prefix) || len(token) > maxToken {
		return Key{}, ErrUnknown
	}
	var (
		k        Key
		lastUsed *time.Time
	)
	err := db.QueryRow(ctx, `SELECT id, partner_id, last_used_at FROM partner_api_key
		WHERE key_hash = $1 AND revoked_at IS NULL`, hashOf(token)).Scan(&k.KeyID, &k.PartnerID, &lastUsed)
	if errors.Is(err, pgx.ErrNoRows) {
		return Key{}, ErrUnknown
	}
	if err != nil {
		return Key{}, fmt.Errorf("partnerkeys: look up key: %w", err)
	}
	if lastUsed == nil || time.Since(*lastUsed) > touchInterval {
		if _, err := db.Exec(ctx, `UPDATE partner_api_key SET last_used_at = now() WHERE id = $1`, k.KeyID); err != nil && log != nil {
			log.Warn("api key last_used_at not updated", "key_id", k.KeyID, "err", err)
		}
	}
	return k, nil
}
