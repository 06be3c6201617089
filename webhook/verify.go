package webhook

import (
	"crypto/ed25519"
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far webhook-timestamp may lie from the receiver's clock, in either
// direction, before a message is refused as a replay or a forgery from the future (R29).
const DefaultTolerance = 5 * time.Minute

// Verification errors. Every error returned by Verifier.Verify, and by the VerifyRequest of
// every provider's verifier, matches one of them with errors.Is, so a receiver can answer or
// log by kind. ErrTimestampTooOld and ErrTimestampTooNew also match ErrInvalidTimestamp.
var (
	// ErrMissingHeader: a header the scheme requires (webhook-id, webhook-timestamp or
	// webhook-signature for Standard Webhooks; X-Hub-Signature-256, Stripe-Signature,
	// X-Slack-Signature or X-Slack-Request-Timestamp, X-Shopify-Hmac-Sha256, X-Twilio-Signature) is absent or empty.
	ErrMissingHeader = errors.New("webhook: missing header")
	// ErrMalformedHeader: the signature header cannot be read: webhook-signature has no
	// "version,signature" entry at all, or a provider's header lacks its prefix or t=, or its
	// signature is not hex (GitHub, Slack) or canonical base64 (Shopify, Twilio).
	ErrMalformedHeader = errors.New("webhook: malformed header")
	// ErrInvalidTimestamp: the signed timestamp is not unix seconds, or is outside the tolerance.
	ErrInvalidTimestamp = errors.New("webhook: invalid timestamp")
	// ErrTimestampTooOld: the signed timestamp is further in the past than the tolerance.
	ErrTimestampTooOld = fmt.Errorf("%w: too old", ErrInvalidTimestamp)
	// ErrTimestampTooNew: the signed timestamp is further in the future than the tolerance.
	ErrTimestampTooNew = fmt.Errorf("%w: too new", ErrInvalidTimestamp)
	// ErrNoMatchingSignature: no signature in the header matches any of the secrets or public
	// keys.
	ErrNoMatchingSignature = errors.New("webhook: no matching signature")
)

// maxTimestampDigits keeps strconv.ParseInt away from overflow; 19 digits is past year 2^63 s.
const maxTimestampDigits = 19

// Verifier checks Standard Webhooks signatures against one or more secrets (v1, HMAC) and public
// keys (v1a, ed25519); during a rotation (R17) a message signed with any of them is accepted. It
// is safe for concurrent use. Build it with NewVerifier; the zero Verifier has no keys and
// refuses every message.
type Verifier struct {
	keys      [][]byte            // HMAC keys, for v1 entries
	public    []ed25519.PublicKey // ed25519 public keys, for v1a entries
	tolerance time.Duration
	now       func() time.Time
}

// VerifierOption adjusts a verifier built by NewVerifier, NewStripeVerifier or
// NewSlackVerifier (the schemes that sign a timestamp).
type VerifierOption func(*Verifier)

// WithTolerance sets how far the timestamp may be from now in either direction; it must be
// positive. The default is DefaultTolerance.
func WithTolerance(d time.Duration) VerifierOption {
	return func(v *Verifier) { v.tolerance = d }
}

// WithClock replaces time.Now, for tests and for receivers that process stored messages.
func WithClock(now func() time.Time) VerifierOption {
	return func(v *Verifier) { v.now = now }
}

// NewVerifier returns a Verifier for the given keys: "whsec_" secrets (or their bare base64)
// check v1 signatures, "whpk_" public keys check v1a signatures; both may be given, as during a
// rotation that moves an endpoint from one scheme to the other. A "whsk_" signing key is refused:
// a receiver needs only the public key, and must not hold what can sign.
func NewVerifier(secrets []string, opts ...VerifierOption) (*Verifier, error) {
	keys, public, err := parseVerifyingKeys(secrets)
	if err != nil {
		return nil, err
	}
	v := &Verifier{keys: keys, public: public, tolerance: DefaultTolerance, now: time.Now}
	for _, opt := range opts {
		opt(v)
	}
	if v.tolerance <= 0 {
		return nil, fmt.Errorf("webhook: tolerance %s must be positive", v.tolerance)
	}
	if v.now == nil {
		return nil, errors.New("webhook: clock must not be nil")
	}
	return v, nil
}

// Verify checks one message given its three header values and the raw body exactly as received:
// the signed content is "msgID.timestamp.body", so a body that was decoded and re-encoded will
// not verify. v1 signatures are compared in constant time; v1a signatures are checked with
// ed25519 against the public keys. Entries of other versions, and of a scheme the verifier holds
// no key of, are ignored; any matching entry accepts the message.
func (v *Verifier) Verify(msgID, timestamp, signature string, body []byte) error {
	if err := requireHeaders(msgID, timestamp, signature); err != nil {
		return err
	}
	ts, err := parseTimestamp(timestamp)
	if err != nil {
		return err
	}
	sigs, err := parseSignatureHeader(signature)
	if err != nil {
		return err
	}
	if err := v.checkTolerance(ts); err != nil {
		return err
	}
	if !v.matches(sigs, msgID, timestamp, body) {
		return ErrNoMatchingSignature
	}
	return nil
}

// VerifyHeader is Verify reading the three headers from h. Several webhook-signature lines are
// treated as one space-separated list, since intermediaries may split a long header.
func (v *Verifier) VerifyHeader(h http.Header, body []byte) error {
	signature := strings.Join(h.Values(HeaderSignature), " ")
	return v.Verify(h.Get(HeaderID), h.Get(HeaderTimestamp), signature, body)
}

// Verify checks a message against a single secret with the default tolerance; a bad secret is
// reported as ErrInvalidSecret. Receivers that verify many messages should keep a Verifier,
// which decodes the secret once.
func Verify(secret string, h http.Header, body []byte) error {
	v, err := NewVerifier([]string{secret})
	if err != nil {
		return err
	}
	return v.VerifyHeader(h, body)
}

func requireHeaders(msgID, timestamp, signature string) error {
	for _, h := range [...]struct{ name, value string }{
		{HeaderID, msgID},
		{HeaderTimestamp, timestamp},
		{HeaderSignature, signature},
	} {
		if strings.TrimSpace(h.value) == "" {
			return fmt.Errorf("%w: %s", ErrMissingHeader, h.name)
		}
	}
	return nil
}

// parseTimestamp accepts only decimal digits: no sign, spaces or fractions, so exactly one
// spelling of a timestamp exists.
func parseTimestamp(s string) (time.Time, error) {
	if len(s) > maxTimestampDigits || strings.TrimLeft(s, "0123456789") != "" {
		return time.Time{}, fmt.Errorf("%w: %q is not unix seconds", ErrInvalidTimestamp, truncate(s))
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %w", ErrInvalidTimestamp, err)
	}
	return time.Unix(sec, 0), nil
}

func (v *Verifier) checkTolerance(ts time.Time) error {
	return timing{tolerance: v.tolerance, now: v.now}.check(ts)
}

// matches reports whether any v1 signature equals the HMAC under any key, or any v1a signature
// verifies under any public key. Every HMAC pair is compared with hmac.Equal so timing reveals
// nothing about how close a guess was; ed25519 verification works on public values only.
func (v *Verifier) matches(sigs signatures, msgID, timestamp string, body []byte) bool {
	ok := false
	for _, key := range v.keys {
		want := mac(key, msgID, timestamp, body)
		for _, sig := range sigs.v1 {
			if hmac.Equal(sig, want) {
				ok = true
			}
		}
	}
	if ok || len(v.public) == 0 || len(sigs.v1a) == 0 {
		return ok
	}
	content := signedContent(msgID, timestamp, body)
	for _, pub := range v.public {
		for _, sig := range sigs.v1a {
			if ed25519.Verify(pub, content, sig) {
				return true
			}
		}
	}
	return false
}

// signatures are the decoded entries of a webhook-signature header, by scheme.
type signatures struct {
	v1  [][]byte // HMAC-SHA256 signatures
	v1a [][]byte // ed25519 signatures, each ed25519.SignatureSize bytes
}

// parseSignatureHeader returns the decoded v1 and v1a signatures of a webhook-signature value:
// entries "version,base64" separated by spaces. Entries of other versions, entries that are not
// base64 and v1a entries of the wrong length are skipped, as the reference libraries do; a header
// without a single entry containing a comma is malformed, and so is one with more than
// maxAsymmetricEntries v1a entries.
func parseSignatureHeader(header string) (signatures, error) {
	var sigs signatures
	wellFormed, asymmetric := false, 0
	for _, entry := range strings.Fields(header) {
		version, encoded, ok := strings.Cut(entry, ",")
		if !ok {
			continue
		}
		wellFormed = true
		if version != signatureVersion && version != asymmetricVersion {
			continue
		}
		if version == asymmetricVersion {
			if asymmetric++; asymmetric > maxAsymmetricEntries {
				return signatures{}, fmt.Errorf("%w: %s has more than %d %s entries", ErrMalformedHeader, HeaderSignature, maxAsymmetricEntries, asymmetricVersion)
			}
		}
		sig, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			continue
		}
		if version == signatureVersion {
			sigs.v1 = append(sigs.v1, sig)
		} else if len(sig) == ed25519.SignatureSize {
			sigs.v1a = append(sigs.v1a, sig)
		}
	}
	if !wellFormed {
		return signatures{}, fmt.Errorf("%w: %s has no version,signature entry", ErrMalformedHeader, HeaderSignature)
	}
	return sigs, nil
}

// truncate keeps hostile header values from flooding error messages and logs.
func truncate(s string) string {
	const limit = 32
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
