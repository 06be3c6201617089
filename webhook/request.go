package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// RequestVerifier authenticates one received webhook request from one provider and says which
// event it carries. Every provider signs differently (the header, the signed content
// and the handling of several signatures all differ), so there is one implementation per
// provider rather than one normalised "signature string": [Verifier] (Standard Webhooks, as
// hookstream sends), [GitHubVerifier], [StripeVerifier], [SlackVerifier], [ShopifyVerifier] and [TwilioVerifier].
//
// VerifyRequest gets the request's headers and its raw body exactly as received, never a
// re-encoding. It returns an error matching one of the package's verification errors
// (ErrMissingHeader, ErrMalformedHeader, ErrInvalidTimestamp, ErrNoMatchingSignature) when the
// request is not authentic, and only then parses the body, so unauthenticated input reaches no
// JSON decoder. Implementations compare in constant time and are safe for concurrent use.
type RequestVerifier interface {
	VerifyRequest(h http.Header, body []byte) (Message, error)
}

// Every provider's verifier is a RequestVerifier.
var (
	_ RequestVerifier = (*Verifier)(nil)
	_ RequestVerifier = (*GitHubVerifier)(nil)
	_ RequestVerifier = (*StripeVerifier)(nil)
	_ RequestVerifier = (*SlackVerifier)(nil)
	_ RequestVerifier = (*ShopifyVerifier)(nil)
	_ RequestVerifier = (*TwilioVerifier)(nil)
)

// Message is what an authenticated request says about itself.
type Message struct {
	// ID identifies the event across the provider's retries, the key a receiver deduplicates
	// on: webhook-id (Standard Webhooks), X-GitHub-Delivery, the Stripe event's id, the Slack
	// event_id, X-Shopify-Webhook-Id, I-Twilio-Idempotency-Token. Empty when the request names none, such as a Slack
	// url_verification challenge or slash command.
	ID string
	// Type is the event's kind when the provider names it ("push", "invoice.paid",
	// "orders/create", ...), else empty.
	Type string
	// Timestamp is the signed send time; zero for schemes that sign none (GitHub, Shopify, Twilio),
	// where a replay is caught by ID only.
	Timestamp time.Time
}

// VerifyRequest implements RequestVerifier for Standard Webhooks: VerifyHeader, then the
// webhook-id as the ID and, when the body is a JSON object with a string "type" (the Standard
// Webhooks payload format and hookstream's envelope), that type.
func (v *Verifier) VerifyRequest(h http.Header, body []byte) (Message, error) {
	if err := v.VerifyHeader(h, body); err != nil {
		return Message{}, err
	}
	ts, err := parseTimestamp(h.Get(HeaderTimestamp))
	if err != nil {
		return Message{}, err // VerifyHeader accepted it; kept for safety
	}
	var payload struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(body, &payload) // the type is optional: no JSON, no type
	return Message{ID: h.Get(HeaderID), Type: payload.Type, Timestamp: ts}, nil
}

// timing is the timestamp window of the schemes that sign a timestamp.
type timing struct {
	tolerance time.Duration
	now       func() time.Time
}

// timingFrom applies VerifierOptions (WithTolerance, WithClock) for the provider verifiers, so
// every verifier takes the same options.
func timingFrom(opts []VerifierOption) (timing, error) {
	scratch := &Verifier{tolerance: DefaultTolerance, now: time.Now}
	for _, opt := range opts {
		opt(scratch)
	}
	if scratch.tolerance <= 0 {
		return timing{}, fmt.Errorf("webhook: tolerance %s must be positive", scratch.tolerance)
	}
	if scratch.now == nil {
		return timing{}, errors.New("webhook: clock must not be nil")
	}
	return timing{tolerance: scratch.tolerance, now: scratch.now}, nil
}

// timedKeys are the HMAC keys and the timestamp check of a provider that signs a timestamp
// (Stripe, Slack).
type timedKeys struct {
	keys [][]byte
	timing
}

// newTimedKeys is plainSecrets and timingFrom together.
func newTimedKeys(provider string, secrets []string, opts []VerifierOption) (timedKeys, error) {
	keys, err := plainSecrets(provider, secrets)
	if err != nil {
		return timedKeys{}, err
	}
	w, err := timingFrom(opts)
	if err != nil {
		return timedKeys{}, err
	}
	return timedKeys{keys: keys, timing: w}, nil
}

// check refuses a timestamp further than the tolerance from now, in either direction.
func (w timing) check(ts time.Time) error {
	now := time.Now()
	if w.now != nil {
		now = w.now()
	}
	switch {
	case now.Sub(ts) > w.tolerance:
		return fmt.Errorf("%w: %s is more than %s before now", ErrTimestampTooOld, ts.UTC().Format(time.RFC3339), w.tolerance)
	case ts.Sub(now) > w.tolerance:
		return fmt.Errorf("%w: %s is more than %s after now", ErrTimestampTooNew, ts.UTC().Format(time.RFC3339), w.tolerance)
	}
	return nil
}

// prefixedHex decodes the signature in header name of h written as prefix and hex digits
// (GitHub's "sha256=", Slack's "v0=").
func prefixedHex(h http.Header, name, prefix string) ([]byte, error) {
	header := h.Get(name)
	encoded, ok := strings.CutPrefix(header, prefix)
	if !ok {
		return nil, fmt.Errorf("%w: %s %q does not start with %s", ErrMalformedHeader, name, truncate(header), prefix)
	}
	sig, err := hex.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not hex", ErrMalformedHeader, name)
	}
	return sig, nil
}

// plainSecrets turns provider secrets into HMAC keys. GitHub, Stripe, Slack, Shopify and Twilio use the
// secret string itself as the key (Stripe's "whsec_" included), unlike Standard Webhooks,
// whose secret is base64. Errors name the position of a bad secret, never its value.
func plainSecrets(provider string, secrets []string) ([][]byte, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: no %s secrets given", ErrInvalidSecret, provider)
	}
	keys := make([][]byte, 0, len(secrets))
	for i, s := range secrets {
		if s == "" {
			return nil, fmt.Errorf("secret %d: %w: empty %s secret", i, ErrInvalidSecret, provider)
		}
		keys = append(keys, []byte(s))
	}
	return keys, nil
}

// hmacSHA256 is HMAC-SHA256 of the concatenated parts, written without copying the body.
func hmacSHA256(key []byte, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		_, _ = h.Write(p) // hash.Hash writes never fail
	}
	return h.Sum(nil)
}

// anyMatch reports whether any candidate signature equals the HMAC under any key. Every pair
// is compared with hmac.Equal and the loop never stops early, so timing tells nothing about
// which key or candidate came close.
func anyMatch(keys [][]byte, candidates [][]byte, mac func(key []byte) []byte) bool {
	ok := false
	for _, key := range keys {
		want := mac(key)
		for _, c := range candidates {
			if hmac.Equal(c, want) {
				ok = true
			}
		}
	}
	return ok
}

// missing reports the first of the named headers that is absent or blank.
func missing(h http.Header, names ...string) error {
	for _, name := range names {
		if h.Get(name) == "" {
			return fmt.Errorf("%w: %s", ErrMissingHeader, name)
		}
	}
	return nil
}
