package partnerkeys_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/partnerkeys"
)

func TestNewKeysAreFreshAndPrefixed(t *testing.T) {
	t.Parallel()
	a, hashA, err := partnerkeys.New()
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := partnerkeys.New()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, partnerkeys.Prefix) || len(a) != len(partnerkeys.Prefix)+43 {
		t.Errorf("key %q: want %s and 43 base64url characters", a, partnerkeys.Prefix)
	}
	if a == b {
		t.Error("two keys are the same")
	}
	if len(hashA) != 32 || strings.Contains(string(hashA), a) {
		t.Errorf("hash of %d bytes: want a SHA-256, not the key", len(hashA))
	}
}

// TestCreateThenVerify covers the life of a key in PostgreSQL: it verifies to its partner, only
// its hash is stored, its use is recorded, and a revoked, unknown or malformed token is refused
// with ErrUnknown.
func TestCreateThenVerify(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDatabase(t)
	for _, pid := range []string{"pa", "pb"} {
		if _, err := db.Pool.Exec(ctx, `INSERT INTO partner (id) VALUES ($1)`, pid); err != nil {
			t.Fatal(err)
		}
	}
	keyA, created, err := partnerkeys.Create(ctx, db.Pool, "key_a", "pa", "ci")
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(created) > time.Minute || created.After(time.Now().Add(time.Minute)) {
		t.Errorf("created at %s, want now", created)
	}
	keyB, _, err := partnerkeys.Create(ctx, db.Pool, "key_b", "pb", "")
	if err != nil {
		t.Fatal(err)
	}

	var hashed bool
	if err := db.Pool.QueryRow(ctx, `SELECT key_hash = sha256(convert_to($1, 'UTF8')) FROM partner_api_key WHERE id = 'key_a'`, keyA).Scan(&hashed); err != nil {
		t.Fatal(err)
	}
	if !hashed {
		t.Error("key_hash is not the SHA-256 of the key")
	}

	for key, want := range map[string]partnerkeys.Key{keyA: {PartnerID: "pa", KeyID: "key_a"}, keyB: {PartnerID: "pb", KeyID: "key_b"}} {
		got, err := partnerkeys.Verify(ctx, db.Pool, testenv.Logger(t), key)
		if err != nil || got != want {
			t.Errorf("Verify: %+v, %v; want %+v", got, err, want)
		}
	}
	var used *time.Time
	if err := db.Pool.QueryRow(ctx, `SELECT last_used_at FROM partner_api_key WHERE id = 'key_a'`).Scan(&used); err != nil {
		t.Fatal(err)
	}
	if used == nil {
		t.Error("last_used_at not set by a verified use")
	}

	if _, err := db.Pool.Exec(ctx, `UPDATE partner_api_key SET revoked_at = now() WHERE id = 'key_b'`); err != nil {
		t.Fatal(err)
	}
	for name, token := range map[string]string{
		"revoked":      keyB,
		"unknown":      partnerkeys.Prefix + strings.Repeat("A", 43),
		"no prefix":    strings.TrimPrefix(keyA, partnerkeys.Prefix),
		"empty":        "",
		"too long":     keyA + strings.Repeat("x", 600),
		"another case": strings.ToUpper(keyA),
	} {
		if k, err := partnerkeys.Verify(ctx, db.Pool, nil, token); !errors.Is(err, partnerkeys.ErrUnknown) {
			t.Errorf("%s token: %+v, %v; want ErrUnknown", name, k, err)
		}
	}
}

func TestVerifyReportsADatabaseFault(t *testing.T) {
	db := testenv.NewDatabase(t)
	key, _, err := partnerkeys.New()
	if err != nil {
		t.Fatal(err)
	}
	db.Pool.Close()
	_, err = partnerkeys.Verify(context.Background(), db.Pool, nil, key)
	if err == nil || errors.Is(err, partnerkeys.ErrUnknown) {
		t.Fatalf("Verify on a closed pool: %v; want a fault, not ErrUnknown", err)
	}
}
