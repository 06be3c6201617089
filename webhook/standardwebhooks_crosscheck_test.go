package webhook_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookstream/hookstream/webhook"
)

// Standard Webhooks publishes an official Go library; Verifier and Signer must agree with it on
// what is authentic, in both directions: what it signs, Verifier accepts, and what Signer signs,
// it accepts. The library is a test dependency only.
func TestVerifierAgreesWithStandardWebhooksLibrary(t *testing.T) {
	t.Parallel()
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		other  = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
		id     = "msg_2ZtDLkVxdz8oBPmtYdHv7yjGNnb"
		body   = `{"type":"invoice.paid","data":{"id":"in_1"}}`
	)
	official, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	officialOther, err := standardwebhooks.NewWebhook(other)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := webhook.NewVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	signedBy := func(wh *standardwebhooks.Webhook, at time.Time, msgID string) http.Header {
		sig, err := wh.Sign(msgID, at, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return http.Header{
			http.CanonicalHeaderKey(webhook.HeaderID):        {msgID},
			http.CanonicalHeaderKey(webhook.HeaderTimestamp): {strconv.FormatInt(at.Unix(), 10)},
			http.CanonicalHeaderKey(webhook.HeaderSignature): {sig},
		}
	}
	idSwapped := signedBy(official, now, id)
	idSwapped.Set(webhook.HeaderID, id+"x")
	tests := []struct {
		name string
		h    http.Header
		body string
		ok   bool
	}{
		{"signed by the library", signedBy(official, now, id), body, true},
		{"signed by the library a minute ago", signedBy(official, now.Add(-time.Minute), id), body, true},
		{"tampered body", signedBy(official, now, id), body + " ", false},
		{"re-encoded body", signedBy(official, now, id), `{"type": "invoice.paid","data":{"id":"in_1"}}`, false},
		{"wrong secret", signedBy(officialOther, now, id), body, false},
		{"id changed after signing", idSwapped, body, false},
		{"stale", signedBy(official, now.Add(-webhook.DefaultTolerance-time.Minute), id), body, false},
		{"future", signedBy(official, now.Add(webhook.DefaultTolerance+time.Minute), id), body, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			theirs := official.Verify([]byte(tt.body), tt.h)
			_, mine := ours.VerifyRequest(tt.h, []byte(tt.body))
			if (theirs == nil) != tt.ok || (mine == nil) != tt.ok {
				t.Fatalf("standard-webhooks: %v, Verifier: %v; want accepted = %v", theirs, mine, tt.ok)
			}
		})
	}

	// The other direction: the library accepts what Signer signs, with one secret or during a
	// rotation with both.
	for _, secrets := range [][]string{{secret}, {other, secret}} {
		signer, err := webhook.NewSigner(secrets...)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		signer.SetHeaders(h, id, now, []byte(body))
		if err := official.Verify([]byte(body), h); err != nil {
			t.Errorf("signed with %d secret(s): the library refuses it: %v", len(secrets), err)
		}
		if err := official.Verify([]byte(body+" "), h); err == nil {
			t.Errorf("signed with %d secret(s): the library accepts a tampered body", len(secrets))
		}
	}
}
