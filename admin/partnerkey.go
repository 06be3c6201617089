package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrUnknownPartnerKey means a token is no live partner API key: malformed, unknown or revoked.
var ErrUnknownPartnerKey = errors.New("admin: not a valid partner API key")

// PartnerKey is a verified partner API key: the partner it acts for and the key's id.
type PartnerKey struct {
	PartnerID string
	KeyID     string
}

// VerifyPartnerKey resolves a partner API key (the bearer token of the admin API) to its partner,
// as the admin API does for its own routes, so a platform service beside it (package reseller)
// authenticates partners with the same keys. Only the key's hash is looked up; last_used_at is
// kept as the admin API keeps it. log gets a warning when that bookkeeping fails; it may be nil.
func VerifyPartnerKey(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, token string) (PartnerKey, error) {
	if !strings.HasPrefix(token, APIKeyPrefix) || len(token) > 512 {
		return PartnerKey{}, ErrUnknownPartnerKey
	}
	var (
		k        PartnerKey
		lastUsed *time.Time
	)
	err := pool.QueryRow(ctx, `SELECT id, partner_id, last_used_at FROM partner_api_key
		WHERE key_hash = $1 AND revoked_at IS NULL`, hashKey(token)).Scan(&k.KeyID, &k.PartnerID, &lastUsed)
	if errors.Is(err, pgx.ErrNoRows) {
		return PartnerKey{}, ErrUnknownPartnerKey
	}
	if err != nil {
		return PartnerKey{}, fmt.Errorf("admin: look up partner key: %w", err)
	}
	if lastUsed == nil || time.Since(*lastUsed) > keyTouchInterval {
		if _, err := pool.Exec(ctx, `UPDATE partner_api_key SET last_used_at = now() WHERE id = $1`, k.KeyID); err != nil && log != nil {
			log.Warn("api key last_used_at not updated", "key_id", k.KeyID, "err", err)
		}
	}
	return k, nil
}
