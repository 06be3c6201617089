package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts every secret this package generates.
const SecretPrefix = "whsec_"

// Key sizes accepted by ParseSecret: the Standard Webhooks specification asks for random keys
// between 24 bytes (192 bits) and 64 bytes (512 bits). NewSecret uses 32 (design.md section 7).
const (
	minKeyBytes = 24
	maxKeyBytes = 64
	newKeyBytes = 32
)

// ErrInvalidSecret is returned, wrapped with the reason, for a secret that cannot be used.
var ErrInvalidSecret = errors.New("webhook: invalid secret")

// NewSecret returns a fresh secret: SecretPrefix followed by the standard base64 encoding of 32
// bytes from crypto/rand. Each endpoint gets its own (R16).
func NewSecret() (string, error) {
	key := make([]byte, newKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook: new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// ParseSecret returns the key bytes of a secret. The SecretPrefix is optional, as in the
// reference Standard Webhooks libraries, so a receiver may paste the bare base64. Errors wrap
// ErrInvalidSecret and never repeat the secret itself.
func ParseSecret(secret string) ([]byte, error) {
	encoded := strings.TrimPrefix(secret, SecretPrefix)
	if encoded == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalidSecret)
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		// The base64 error carries an offset only, not secret material.
		return nil, fmt.Errorf("%w: not standard base64: %w", ErrInvalidSecret, err)
	}
	if len(key) < minKeyBytes || len(key) > maxKeyBytes {
		return nil, fmt.Errorf("%w: key is %d bytes, want %d to %d",
			ErrInvalidSecret, len(key), minKeyBytes, maxKeyBytes)
	}
	return key, nil
}

// parseSecrets parses every secret, naming the position of a bad one (never its value).
func parseSecrets(secrets []string) ([][]byte, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: no secrets given", ErrInvalidSecret)
	}
	keys := make([][]byte, 0, len(secrets))
	for i, s := range secrets {
		key, err := ParseSecret(s)
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w", i, err)
		}
		keys = append(keys, key)
	}
	return keys, nil
}
