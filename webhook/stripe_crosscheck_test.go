package webhook_test

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookstream/hookstream/webhook"
)

// Stripe publishes an official Go library; StripeVerifier must agree with its webhook package
// on what is authentic (prefer the provider's library where there is one, so the
// hand-written verifier is held to it). The library is a test dependency only.
func TestStripeVerifierAgreesWithStripeGo(t *testing.T) {
	t.Parallel()
	const (
		secret = "whsec_test_cross_check_5d2f"
		body   = `{"id":"evt_3Qz","object":"event","type":"payment_intent.succeeded","data":{"object":{"id":"pi_3Qz"}}}`
	)
	ours, err := webhook.NewStripeVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	stripeHeader := func(at time.Time, key string) string {
		return "t=" + strconv.FormatInt(at.Unix(), 10) + ",v1=" + hex.EncodeToString(stripewebhook.ComputeSignature(at, []byte(body), key))
	}
	tests := []struct {
		name   string
		header string
		body   string
		ok     bool
	}{
		{"signed by stripe-go", stripeHeader(now, secret), body, true},
		{"signed by stripe-go a minute ago", stripeHeader(now.Add(-time.Minute), secret), body, true},
		{"tampered body", stripeHeader(now, secret), body + " ", false},
		{"wrong secret", stripeHeader(now, "whsec_other"), body, false},
		{"stale", stripeHeader(now.Add(-stripewebhook.DefaultTolerance-time.Minute), secret), body, false},
		{"no v1", "t=" + strconv.FormatInt(now.Unix(), 10), body, false},
		{"no t", "v1=" + hex.EncodeToString(stripewebhook.ComputeSignature(now, []byte(body), secret)), body, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			theirs := stripewebhook.ValidatePayload([]byte(tt.body), tt.header, secret)
			_, mine := ours.VerifyRequest(http.Header{webhook.HeaderStripeSignature: {tt.header}}, []byte(tt.body))
			if (theirs == nil) != tt.ok || (mine == nil) != tt.ok {
				t.Fatalf("stripe-go: %v, StripeVerifier: %v; want accepted = %v", theirs, mine, tt.ok)
			}
		})
	}
	// The default tolerances agree too.
	if webhook.DefaultTolerance != stripewebhook.DefaultTolerance {
		t.Errorf("DefaultTolerance %s, stripe-go's %s", webhook.DefaultTolerance, stripewebhook.DefaultTolerance)
	}
	// stripe-go accepts any timestamp in the future; StripeVerifier refuses one beyond the
	// tolerance, as for every scheme that signs a time (a clock far ahead is
	// watched, not trusted).
	future := stripeHeader(now.Add(stripewebhook.DefaultTolerance+time.Minute), secret)
	if err := stripewebhook.ValidatePayload([]byte(body), future, secret); err != nil {
		t.Logf("stripe-go now refuses future timestamps too: %v", err)
	}
	if _, err := ours.VerifyRequest(http.Header{webhook.HeaderStripeSignature: {future}}, []byte(body)); !errors.Is(err, webhook.ErrTimestampTooNew) {
		t.Errorf("future timestamp: %v, want ErrTimestampTooNew", err)
	}
}
