package webhook

import (
	"net/http"
)

// GitHub webhook headers.
const (
	HeaderGitHubSignature = "X-Hub-Signature-256" // "sha256=" + hex HMAC-SHA256 of the body
	HeaderGitHubDelivery  = "X-GitHub-Delivery"   // a GUID per delivery, kept by redeliveries
	HeaderGitHubEvent     = "X-GitHub-Event"      // the event name, such as "push"
)

// GitHubVerifier checks GitHub's X-Hub-Signature-256: "sha256=" followed by the lowercase hex
// HMAC-SHA256 of the raw body under the webhook's secret. GitHub signs no timestamp, so a
// captured request verifies for ever; the delivery id is what stops a replay, and it is not
// signed either (see Message). It is safe for concurrent use.
type GitHubVerifier struct {
	keys [][]byte
}

// NewGitHubVerifier returns a verifier for the webhook's secrets: one, or the new and the old
// while a secret is being changed (GitHub sends one signature, so a request verifies under
// whichever secret signed it).
func NewGitHubVerifier(secrets []string) (*GitHubVerifier, error) {
	keys, err := plainSecrets("GitHub", secrets)
	if err != nil {
		return nil, err
	}
	return &GitHubVerifier{keys: keys}, nil
}

// VerifyRequest checks X-Hub-Signature-256 over body; the Message carries X-GitHub-Delivery as
// its ID and X-GitHub-Event as its Type.
func (v *GitHubVerifier) VerifyRequest(h http.Header, body []byte) (Message, error) {
	if err := missing(h, HeaderGitHubSignature); err != nil {
		return Message{}, err
	}
	sig, err := prefixedHex(h, HeaderGitHubSignature, "sha256=")
	if err != nil {
		return Message{}, err
	}
	if !anyMatch(v.keys, [][]byte{sig}, func(key []byte) []byte { return hmacSHA256(key, body) }) {
		return Message{}, ErrNoMatchingSignature
	}
	return Message{ID: h.Get(HeaderGitHubDelivery), Type: h.Get(HeaderGitHubEvent)}, nil
}
