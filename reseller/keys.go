package reseller

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/outbox"
)

// KeyPrefix starts every customer API key the platform issues, so leaked keys are easy to scan
// for.
const KeyPrefix = "rsk_"

// keyPrefixLength is how much of a key is stored in the clear, for display: "rsk_" and 4
// characters.
const keyPrefixLength = len(KeyPrefix) + 4

// APIKey is an API key's state: never the key itself, only its first characters.
type APIKey struct {
	ID         string    `json:"id"`
	CustomerID string    `json:"customer_id"`
	Name       string    `json:"name"`
	Prefix     string    `json:"prefix"`
	Status     string    `json:"status"`
	Version    int64     `json:"version"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// NewAPIKey is what CreateAPIKey returns: the key's state and the key, shown this once.
type NewAPIKey struct {
	APIKey
	Key string `json:"key"`
}

// KeyStatusChange is the input of SetAPIKeyStatus.
type KeyStatusChange struct {
	Status string `json:"status"` // active, suspended or revoked
	Reason string `json:"reason"` // as api_key.status_changed publishes; empty means other
}

var keyReasons = []string{"customer_request", "budget_exhausted", "balance_depleted", "policy", "other"}

var keyEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

const apiKeyColumns = `id, customer_id, name, prefix, status, version, created_at, updated_at`

func scanAPIKey(row pgx.Row) (APIKey, error) {
	var k APIKey
	err := row.Scan(&k.ID, &k.CustomerID, &k.Name, &k.Prefix, &k.Status, &k.Version, &k.CreatedAt, &k.UpdatedAt)
	k.CreatedAt, k.UpdatedAt = k.CreatedAt.UTC(), k.UpdatedAt.UTC()
	return k, err
}

// CreateAPIKey issues a key to a customer and emits api_key.created. Only the key's SHA-256 and
// its first characters are stored; the key is in the result and nowhere else.
func (p *Platform) CreateAPIKey(ctx context.Context, pid, cid, name string) (NewAPIKey, error) {
	if err := checkName(name); err != nil {
		return NewAPIKey{}, err
	}
	raw := make([]byte, 25)
	if _, err := rand.Read(raw); err != nil {
		return NewAPIKey{}, fmt.Errorf("reseller: api key: %w", err)
	}
	key := KeyPrefix + strings.ToLower(keyEncoding.EncodeToString(raw))
	sum := sha256.Sum256([]byte(key))
	var k NewAPIKey
	err := p.changeCustomer(ctx, pid, cid, func(tx pgx.Tx, emit emitFunc, _ Customer) error {
		var err error
		k.APIKey, err = scanAPIKey(tx.QueryRow(ctx, `INSERT INTO reseller.api_key (id, partner_id, customer_id, name, prefix, key_hash, status)
			VALUES ($1, $2, $3, $4, $5, $6, 'active') RETURNING `+apiKeyColumns, newID("key"), pid, cid, name, key[:keyPrefixLength], sum[:]))
		if err != nil {
			return fmt.Errorf("reseller: insert api key: %w", err)
		}
		return emit(pid, "api_key.created", outbox.Subject{Type: "api_key", ID: k.ID}, map[string]any{
			"api_key_id": k.ID, "customer_id": cid, "name": name, "key_hint": key[len(key)-4:], "status": "active"})
	})
	k.Key = key
	return k, err
}

// APIKey returns one of the partner's keys.
func (p *Platform) APIKey(ctx context.Context, pid, kid string) (APIKey, error) {
	return queryOne(ctx, p.pool, "api key", scanAPIKey,
		`SELECT `+apiKeyColumns+` FROM reseller.api_key WHERE partner_id = $1 AND id = $2`, pid, kid)
}

// APIKeys lists a customer's keys.
func (p *Platform) APIKeys(ctx context.Context, pid, cid string) ([]APIKey, error) {
	if _, err := p.Customer(ctx, pid, cid); err != nil {
		return nil, err
	}
	return queryAll(ctx, p.pool, scanAPIKey,
		`SELECT `+apiKeyColumns+` FROM reseller.api_key WHERE partner_id = $1 AND customer_id = $2 ORDER BY id`, pid, cid)
}

// SetAPIKeyStatus suspends, reactivates or revokes a key and emits api_key.status_changed. A
// revoked key stays revoked.
func (p *Platform) SetAPIKeyStatus(ctx context.Context, pid, kid string, in KeyStatusChange) (APIKey, error) {
	if !slices.Contains([]string{"active", "suspended", "revoked"}, in.Status) {
		return APIKey{}, invalidValue("status: active, suspended or revoked")
	}
	in.Reason = cmp.Or(in.Reason, "other")
	if e := notOneOf("reason", in.Reason, keyReasons); e != nil {
		return APIKey{}, e
	}
	var k APIKey
	err := p.change(ctx, func(tx pgx.Tx, emit emitFunc) error {
		old, err := scanAPIKey(tx.QueryRow(ctx, `SELECT `+apiKeyColumns+` FROM reseller.api_key WHERE partner_id = $1 AND id = $2 FOR NO KEY UPDATE`, pid, kid))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("api key")
		}
		if err != nil {
			return fmt.Errorf("reseller: lock api key: %w", err)
		}
		if old.Status == in.Status {
			k = old
			return nil
		}
		if old.Status == "revoked" {
			return conflict("api key %s is revoked for good", kid)
		}
		k, err = scanAPIKey(tx.QueryRow(ctx, `UPDATE reseller.api_key SET status = $3, version = version + 1, updated_at = now()
			WHERE partner_id = $1 AND id = $2 RETURNING `+apiKeyColumns, pid, kid, in.Status))
		if err != nil {
			return fmt.Errorf("reseller: update api key: %w", err)
		}
		return emit(pid, "api_key.status_changed", outbox.Subject{Type: "api_key", ID: kid}, map[string]any{
			"api_key_id": kid, "customer_id": k.CustomerID, "previous_status": old.Status, "status": k.Status,
			"reason": in.Reason, "version": k.Version})
	})
	return k, err
}
