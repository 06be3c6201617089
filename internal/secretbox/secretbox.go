package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of the key in bytes (AES-256).
const KeySize = 32

// NonceSize is the length of the random nonce in every sealed value.
const NonceSize = 12

// TagSize is the length of the GCM tag at the end of every sealed value.
const TagSize = 16

// LegacyOverhead is how much longer a value sealed in the legacy format (no key id) is than
// its plaintext: the nonce and the GCM tag.
const LegacyOverhead = NonceSize + TagSize

// Errors returned, wrapped with detail, by ParseKey, NewKey, NewKeyring and Open. They never
// contain key or secret material.
var (
	// ErrInvalidKey: the key string or bytes cannot be an AES-256 key, or a keyring cannot be
	// made of the keys given.
	ErrInvalidKey = errors.New("secretbox: invalid key")
	// ErrOpen: the sealed value is too short, was tampered with, was sealed under another key,
	// or belongs to another row (wrong AAD). GCM cannot tell these apart, and neither do we;
	// a value that names a key id the keyring lacks says so (UnknownKeyError, which matches
	// ErrOpen too).
	ErrOpen = errors.New("secretbox: cannot open sealed value")
	// ErrUnknownKey: the sealed value names a key id that is not in the keyring (see
	// UnknownKeyError).
	ErrUnknownKey = errors.New("secretbox: key id not in the keyring")
)

// Key is one parsed AES-256-GCM key. The zero Key has no key. A Key prints as
// "secretbox.Key(redacted)" so it cannot leak through logs or %v of a config.
type Key struct {
	aead cipher.AEAD
	// fingerprint tells two keys apart (NewKeyring refuses one key under two ids); it is never
	// printed.
	fingerprint [sha256.Size]byte
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
	return Key{aead: aead, fingerprint: sha256.Sum256(raw)}, nil
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
