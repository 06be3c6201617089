package webhook

import (
	"crypto/ed25519"
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

// parseVerifyingKeys sorts a verifier's keys into HMAC keys (whsec_ or bare base64) and ed25519
// public keys (whpk_), naming the position of a bad one (never its value).
func parseVerifyingKeys(secrets []string) (hmacKeys [][]byte, public []ed25519.PublicKey, err error) {
	if len(secrets) == 0 {
		return nil, nil, fmt.Errorf("%w: no secrets given", ErrInvalidSecret)
	}
	for i, s := range secrets {
		switch {
		case strings.HasPrefix(s, PublicKeyPrefix):
			pub, err := ParsePublicKey(s)
			if err != nil {
				return nil, nil, fmt.Errorf("secret %d: %w", i, err)
			}
			public = append(public, pub)
		case strings.HasPrefix(s, SigningKeyPrefix):
			return nil, nil, fmt.Errorf("secret %d: %w: a signing key (%s) is the sender's; verify with its public key (%s)",
				i, ErrInvalidSecret, SigningKeyPrefix, PublicKeyPrefix)
		default:
			key, err := ParseSecret(s)
			if err != nil {
				return nil, nil, fmt.Errorf("secret %d: %w", i, err)
			}
			hmacKeys = append(hmacKeys, key)
		}
	}
	return hmacKeys, public, nil
}
