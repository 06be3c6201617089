package webhook

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// HeaderStripeSignature carries Stripe's signatures: "t=<unix seconds>,v1=<hex>[,v1=<hex>…]".
const HeaderStripeSignature = "Stripe-Signature"

// StripeVerifier checks Stripe's Stripe-Signature header: each v1 entry is the hex
// HMAC-SHA256 of "<t>.<raw body>" under an endpoint signing secret, used as the key exactly as
// Stripe shows it ("whsec_…" included, not base64-decoded). Stripe adds one v1 per active
// secret while a secret is rolled, and any of them may match; v0 and other schemes are
// ignored. The signed t must lie within the tolerance (DefaultTolerance, 5 minutes, the value
// Stripe's libraries use) either way. It is safe for concurrent use.
type StripeVerifier struct {
	timedKeys
}

// NewStripeVerifier returns a verifier for the endpoint's signing secrets; WithTolerance and
// WithClock apply as for NewVerifier.
func NewStripeVerifier(secrets []string, opts ...VerifierOption) (*StripeVerifier, error) {
	k, err := newTimedKeys("Stripe", secrets, opts)
	if err != nil {
		return nil, err
	}
	return &StripeVerifier{k}, nil
}

// VerifyRequest checks Stripe-Signature over body, then reads the event's "id" and "type" from
// the body: Stripe names the event in the payload, not in a header.
func (v *StripeVerifier) VerifyRequest(h http.Header, body []byte) (Message, error) {
	if err := missing(h, HeaderStripeSignature); err != nil {
		return Message{}, err
	}
	t, sigs, err := parseStripeSignature(h.Get(HeaderStripeSignature))
	if err != nil {
		return Message{}, err
	}
	ts, err := parseTimestamp(t)
	if err != nil {
		return Message{}, err
	}
	if err := v.check(ts); err != nil {
		return Message{}, err
	}
	if !anyMatch(v.keys, sigs, func(key []byte) []byte { return hmacSHA256(key, []byte(t), []byte("."), body) }) {
		return Message{}, ErrNoMatchingSignature
	}
	var event struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	_ = json.Unmarshal(body, &event) // a verified body that is no event simply names none
	return Message{ID: event.ID, Type: event.Type, Timestamp: ts}, nil
}

// parseStripeSignature splits "t=…,v1=…" into the timestamp string (signed as it is written)
// and the decoded v1 signatures. Exactly one t is required: two would leave it open which one
// was signed. v1 values that are not hex are skipped, like entries of other schemes.
func parseStripeSignature(header string) (t string, sigs [][]byte, err error) {
	seenT := false
	for _, entry := range strings.Split(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(entry), "=")
		if !ok {
			return "", nil, fmt.Errorf("%w: %s entry %q is not key=value", ErrMalformedHeader, HeaderStripeSignature, truncate(entry))
		}
		switch key {
		case "t":
			if seenT {
				return "", nil, fmt.Errorf("%w: %s has more than one t", ErrMalformedHeader, HeaderStripeSignature)
			}
			t, seenT = value, true
		case "v1":
			if sig, err := hex.DecodeString(value); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	if !seenT {
		return "", nil, fmt.Errorf("%w: %s has no t", ErrMalformedHeader, HeaderStripeSignature)
	}
	return t, sigs, nil
}
