package webhook

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, err := NewSecret()
	if err != nil {
		t.Fatalf("NewSecret: %v", err)
	}
	b, err := NewSecret()
	if err != nil {
		t.Fatalf("NewSecret: %v", err)
	}
	if a == b {
		t.Fatalf("two calls returned the same secret %q", a)
	}
	if !strings.HasPrefix(a, SecretPrefix) {
		t.Fatalf("secret %q lacks prefix %q", a, SecretPrefix)
	}
	key, err := ParseSecret(a)
	if err != nil {
		t.Fatalf("ParseSecret(NewSecret()): %v", err)
	}
	if len(key) != 32 {
		t.Fatalf("key is %d bytes, want 32", len(key))
	}
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	key := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	tests := []struct {
		name    string
		secret  string
		wantLen int // 0 means an error is expected
	}{
		{"standard vector", vectorSecret, 24},
		{"without prefix", strings.TrimPrefix(vectorSecret, SecretPrefix), 24},
		{"32 bytes", SecretPrefix + key(32), 32},
		{"64 bytes", SecretPrefix + key(64), 64},
		{"empty", "", 0},
		{"prefix only", SecretPrefix, 0},
		{"not base64", SecretPrefix + "not base64!!", 0},
		{"url-safe alphabet", SecretPrefix + strings.NewReplacer("+", "-", "/", "_").Replace(base64.StdEncoding.EncodeToString([]byte("\xfb\xff\xfe"+strings.Repeat("x", 21)))), 0},
		{"unpadded", SecretPrefix + strings.TrimRight(key(32), "="), 0},
		{"surrounding space", " " + SecretPrefix + key(32), 0},
		{"23 bytes", SecretPrefix + key(23), 0},
		{"65 bytes", SecretPrefix + key(65), 0},
		{"doubled prefix", SecretPrefix + SecretPrefix + key(32), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSecret(tt.secret)
			if tt.wantLen == 0 {
				if !errors.Is(err, ErrInvalidSecret) {
					t.Fatalf("ParseSecret(%q) error = %v, want ErrInvalidSecret", tt.secret, err)
				}
				if len(tt.secret) > len(SecretPrefix) && strings.Contains(err.Error(), tt.secret) {
					t.Fatalf("error %q repeats the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSecret(%q): %v", tt.secret, err)
			}
			if len(got) != tt.wantLen {
				t.Fatalf("key is %d bytes, want %d", len(got), tt.wantLen)
			}
		})
	}
}

func TestParseSecretsNamesPosition(t *testing.T) {
	t.Parallel()
	_, err := NewSigner(vectorSecret, "whsec_bad")
	if !errors.Is(err, ErrInvalidSecret) || !strings.Contains(err.Error(), "secret 1") {
		t.Fatalf("error = %v, want ErrInvalidSecret naming secret 1", err)
	}
	if _, err := NewSigner(); !errors.Is(err, ErrInvalidSecret) {
		t.Fatalf("NewSigner() error = %v, want ErrInvalidSecret", err)
	}
}
