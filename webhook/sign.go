package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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

// Signer signs messages with one or more secrets whose keys were decoded once, so a sender can
// keep one per endpoint and sign every request without touching base64 again. It is safe for
// concurrent use. Build it with NewSigner; the zero Signer has no secrets and signs nothing.
type Signer struct {
	keys [][]byte
}

// NewSigner returns a Signer for the endpoint's active secrets, the newest first by convention.
// During a rotation both secrets are given and every message carries both signatures (R17).
func NewSigner(secrets ...string) (*Signer, error) {
	keys, err := parseSecrets(secrets)
	if err != nil {
		return nil, err
	}
	return &Signer{keys: keys}, nil
}

// Sign returns the webhook-signature header value: one "v1,<base64 HMAC-SHA256>" per secret over
// "msgID.timestamp.body", separated by single spaces. body must be the exact bytes that are sent
// (R15); the timestamp is truncated to whole unix seconds.
func (s *Signer) Sign(msgID string, timestamp time.Time, body []byte) string {
	ts := formatTimestamp(timestamp)
	var b strings.Builder
	for i, key := range s.keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(signatureVersion)
		b.WriteByte(',')
		b.WriteString(base64.StdEncoding.EncodeToString(mac(key, msgID, ts, body)))
	}
	return b.String()
}

// SetHeaders sets webhook-id, webhook-timestamp and webhook-signature on h for one attempt.
func (s *Signer) SetHeaders(h http.Header, msgID string, timestamp time.Time, body []byte) {
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, formatTimestamp(timestamp))
	h.Set(HeaderSignature, s.Sign(msgID, timestamp, body))
}

// Sign returns the webhook-signature header value for a single secret. Senders that sign many
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
