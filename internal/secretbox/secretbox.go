package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of the key in bytes (AES-256).
const KeySize = 32

// NonceSize is the length of the random nonce at the start of every sealed value.
const NonceSize = 12

// Overhead is how much longer a sealed value is than its plaintext: the nonce and the GCM tag.
const Overhead = NonceSize + 16

// Errors returned, wrapped with detail, by ParseKey, NewKey and Open. They never contain key or
// secret material.
var (
	// ErrInvalidKey: the key string or bytes cannot be an AES-256 key.
	ErrInvalidKey = errors.New("secretbox: invalid key")
	// ErrOpen: the sealed value is too short, was tampered with, was sealed under another key,
	// or belongs to another row (wrong AAD). GCM cannot tell these apart, and neither do we.
	ErrOpen = errors.New("secretbox: cannot open sealed value")
)

// Key is a parsed AES-256-GCM key. The zero Key has no key: Seal and Open refuse it. A Key
// prints as "secretbox.Key(redacted)" so it cannot leak through logs or %v of a config.
type Key struct {
	aead cipher.AEAD
}

// NewKey returns the Key for 32 raw bytes.
func NewKey(raw []byte) (Key, error) {
	if len(raw) != KeySize {
		return Key{}, fmt.Errorf("%w: key is %d bytes, want %d", ErrInvalidKey, len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	return Key{aead: aead}, nil
}

// ParseKey reads HOOKSTREAM_SECRET_KEY: the standard base64 encoding (padded or not) of 32
// bytes. Surrounding white space is ignored, so a value read from a file with a trailing newline
// works.
func ParseKey(s string) (Key, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Key{}, fmt.Errorf("%w: empty; give the base64 of %d random bytes (for example `openssl rand -base64 32`)", ErrInvalidKey, KeySize)
	}
	enc := base64.StdEncoding
	if !strings.HasSuffix(s, "=") {
		enc = base64.RawStdEncoding
	}
	raw, err := enc.DecodeString(s)
	if err != nil {
		// The base64 error names an offset only, never key material.
		return Key{}, fmt.Errorf("%w: not standard base64: %w", ErrInvalidKey, err)
	}
	return NewKey(raw)
}

// GenerateKey returns a new random key in the form ParseKey reads.
func GenerateKey() (string, error) {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("secretbox: generate key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// IsZero reports whether k holds no key.
func (k Key) IsZero() bool { return k.aead == nil }

// String hides the key.
func (k Key) String() string {
	if k.IsZero() {
		return "secretbox.Key(none)"
	}
	return "secretbox.Key(redacted)"
}

// GoString hides the key from %#v too.
func (k Key) GoString() string { return k.String() }

// AAD is the additional authenticated data of an endpoint secret: endpointID + "/" + secretID.
func AAD(endpointID, secretID string) []byte {
	return []byte(endpointID + "/" + secretID)
}

// Seal encrypts plaintext under key, bound to aad, and returns a fresh random nonce followed
// by the ciphertext. Sealing the same plaintext twice gives different values.
func Seal(key Key, plaintext, aad []byte) ([]byte, error) {
	if key.IsZero() {
		return nil, fmt.Errorf("%w: no key", ErrInvalidKey)
	}
	out := make([]byte, NonceSize, NonceSize+len(plaintext)+key.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("secretbox: nonce: %w", err)
	}
	return key.aead.Seal(out, out[:NonceSize], plaintext, aad), nil
}

// Open decrypts a value made by Seal with the same key and aad. Any change to the value, and
// any other key or aad, gives an error matching ErrOpen.
func Open(key Key, sealed, aad []byte) ([]byte, error) {
	if key.IsZero() {
		return nil, fmt.Errorf("%w: no key", ErrInvalidKey)
	}
	if len(sealed) < NonceSize+key.aead.Overhead() {
		return nil, fmt.Errorf("%w: %d bytes is shorter than nonce and tag", ErrOpen, len(sealed))
	}
	plain, err := key.aead.Open(nil, sealed[:NonceSize], sealed[NonceSize:], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: authentication failed (tampered, wrong key or wrong row)", ErrOpen)
	}
	return plain, nil
}
