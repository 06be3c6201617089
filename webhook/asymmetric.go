package webhook

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
)

// Standard Webhooks asymmetric keys (the "v1a" scheme, ed25519): the signing key stays with the
// sender, the public key is what receivers hold, so a receiver's copy cannot forge a message.
const (
	// SigningKeyPrefix starts an ed25519 signing key: "whsk_" and the standard base64 encoding of
	// the 64-byte private key (seed and public key, as crypto/ed25519 holds it). A bare 32-byte
	// seed is read too.
	SigningKeyPrefix = "whsk_"
	// PublicKeyPrefix starts an ed25519 public key: "whpk_" and the standard base64 encoding of
	// its 32 bytes.
	PublicKeyPrefix = "whpk_"
)

// asymmetricVersion labels an ed25519 signature in the webhook-signature header.
const asymmetricVersion = "v1a"

// maxAsymmetricEntries bounds how many v1a entries of one header are checked: an ed25519
// verification costs tens of microseconds, so a header stuffed with entries would otherwise buy
// CPU time per request. A sender signs with one key, two during a rotation.
const maxAsymmetricEntries = 16

// NewKeyPair returns a fresh ed25519 key pair for v1a signatures: the signing key
// (SigningKeyPrefix, kept by the sender, sealed at rest) and its public key (PublicKeyPrefix,
// given to receivers). Each endpoint gets its own (R16).
func NewKeyPair() (signingKey, publicKey string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("webhook: new key pair: %w", err)
	}
	return SigningKeyPrefix + base64.StdEncoding.EncodeToString(priv), formatPublicKey(pub), nil
}

// PublicKeyOf returns the public key (whpk_) of a signing key (whsk_). Errors wrap
// ErrInvalidSecret and never repeat the key.
func PublicKeyOf(signingKey string) (string, error) {
	priv, err := parseSigningKey(signingKey)
	if err != nil {
		return "", err
	}
	return formatPublicKey(priv.Public().(ed25519.PublicKey)), nil
}

// ParsePublicKey returns the ed25519 public key of a "whpk_" string. The prefix is required: it
// is what tells a public key from an HMAC secret. Errors wrap ErrInvalidSecret.
func ParsePublicKey(publicKey string) (ed25519.PublicKey, error) {
	encoded, ok := strings.CutPrefix(publicKey, PublicKeyPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: a public key starts with %s", ErrInvalidSecret, PublicKeyPrefix)
	}
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("%w: public key is not standard base64: %w", ErrInvalidSecret, err)
	}
	if len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: public key is %d bytes, want %d", ErrInvalidSecret, len(raw), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}

func formatPublicKey(pub ed25519.PublicKey) string {
	return PublicKeyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// parseSigningKey reads a "whsk_" signing key: the 64-byte private key, whose second half must
// be the public key of its seed, or the 32-byte seed alone.
func parseSigningKey(signingKey string) (ed25519.PrivateKey, error) {
	encoded, ok := strings.CutPrefix(signingKey, SigningKeyPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: a signing key starts with %s", ErrInvalidSecret, SigningKeyPrefix)
	}
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("%w: signing key is not standard base64: %w", ErrInvalidSecret, err)
	}
	switch len(raw) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(raw), nil
	case ed25519.PrivateKeySize:
		priv := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
		if !bytes.Equal(priv[ed25519.SeedSize:], raw[ed25519.SeedSize:]) {
			return nil, fmt.Errorf("%w: signing key's public half does not belong to its seed", ErrInvalidSecret)
		}
		return priv, nil
	}
	return nil, fmt.Errorf("%w: signing key is %d bytes, want %d or %d",
		ErrInvalidSecret, len(raw), ed25519.SeedSize, ed25519.PrivateKeySize)
}

// signedContent is "msgID.timestamp.body", the message both schemes sign. ed25519 needs it in
// one piece, unlike the HMAC, which streams it.
func signedContent(msgID, timestamp string, body []byte) []byte {
	b := make([]byte, 0, len(msgID)+len(timestamp)+2+len(body))
	b = append(b, msgID...)
	b = append(b, '.')
	b = append(b, timestamp...)
	b = append(b, '.')
	return append(b, body...)
}
