package webhook

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks header names (R15). net/http canonicalises them on the wire; receivers match
// them case-insensitively.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// signatureVersion labels an HMAC-SHA256 signature in the webhook-signature header.
const signatureVersion = "v1"

// Signer signs messages with one or more keys decoded once, so a sender can keep one per
// endpoint and sign every request without touching base64 again: HMAC secrets (whsec_) sign v1,
// ed25519 signing keys (whsk_) sign v1a. It is safe for concurrent use. Build it with NewSigner;
// the zero Signer has no keys and signs nothing.
type Signer struct {
	keys []signingKey
}

// signingKey is one key of a Signer: an HMAC key (v1) or an ed25519 private key (v1a).
type signingKey struct {
	hmac []byte
	ed   ed25519.PrivateKey
}

// NewSigner returns a Signer for the endpoint's active secrets, the newest first by convention:
// "whsec_" secrets (or their bare base64) sign v1, "whsk_" signing keys sign v1a. During a
// rotation both old and new are given and every message carries both signatures (R17), whatever
// their schemes, so a rotation can also move an endpoint from one scheme to the other.
func NewSigner(secrets ...string) (*Signer, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: no secrets given", ErrInvalidSecret)
	}
	keys := make([]signingKey, 0, len(secrets))
	for i, s := range secrets {
		var (
			k   signingKey
			err error
		)
		switch {
		case strings.HasPrefix(s, SigningKeyPrefix):
			k.ed, err = parseSigningKey(s)
		case strings.HasPrefix(s, PublicKeyPrefix):
			err = fmt.Errorf("%w: a public key (%s) only verifies; sign with its %s signing key", ErrInvalidSecret, PublicKeyPrefix, SigningKeyPrefix)
		default:
			k.hmac, err = ParseSecret(s)
		}
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w", i, err)
		}
		keys = append(keys, k)
	}
	return &Signer{keys: keys}, nil
}

// Sign returns the webhook-signature header value: per key, "v1,<base64 HMAC-SHA256>" or
// "v1a,<base64 ed25519 signature>" over "msgID.timestamp.body", separated by single spaces.
// body must be the exact bytes that are sent (R15); the timestamp is truncated to whole unix
// seconds.
func (s *Signer) Sign(msgID string, timestamp time.Time, body []byte) string {
	ts := formatTimestamp(timestamp)
	var (
		b       strings.Builder
		content []byte // built once, for the first ed25519 key
	)
	for i, key := range s.keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		if key.ed == nil {
			b.WriteString(signatureVersion)
			b.WriteByte(',')
			b.WriteString(base64.StdEncoding.EncodeToString(mac(key.hmac, msgID, ts, body)))
			continue
		}
		if content == nil {
			content = signedContent(msgID, ts, body)
		}
		b.WriteString(asymmetricVersion)
		b.WriteByte(',')
		b.WriteString(base64.StdEncoding.EncodeToString(ed25519.Sign(key.ed, content)))
	}
	return b.String()
}

// SetHeaders sets webhook-id, webhook-timestamp and webhook-signature on h for one attempt.
func (s *Signer) SetHeaders(h http.Header, msgID string, timestamp time.Time, body []byte) {
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, formatTimestamp(timestamp))
	h.Set(HeaderSignature, s.Sign(msgID, timestamp, body))
}

// Sign returns the webhook-signature header value for a single secret or signing key. Senders that sign many
// messages with the same secrets should keep a Signer instead.
func Sign(secret, msgID string, timestamp time.Time, body []byte) (string, error) {
	s, err := NewSigner(secret)
	if err != nil {
		return "", err
	}
	return s.Sign(msgID, timestamp, body), nil
}

func formatTimestamp(t time.Time) string {
	return strconv.FormatInt(t.Unix(), 10)
}

// mac computes HMAC-SHA256 over "msgID.timestamp.body" without copying the body. timestamp is
// the header string itself, so a verifier signs exactly what it received.
func mac(key []byte, msgID, timestamp string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	// hash.Hash writes never fail.
	_, _ = io.WriteString(h, msgID)
	_, _ = io.WriteString(h, ".")
	_, _ = io.WriteString(h, timestamp)
	_, _ = io.WriteString(h, ".")
	_, _ = h.Write(body)
	return h.Sum(nil)
}
