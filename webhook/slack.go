package webhook

import (
	"encoding/json"
	"net/http"
)

// Slack request-signing headers.
const (
	HeaderSlackSignature = "X-Slack-Signature"         // "v0=" + hex HMAC-SHA256 of "v0:<ts>:<body>"
	HeaderSlackTimestamp = "X-Slack-Request-Timestamp" // unix seconds, part of the signed content
)

// SlackVerifier checks Slack's signed requests: X-Slack-Signature is "v0=" followed by the hex
// HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<raw body>" under the app's signing secret,
// and the timestamp must lie within the tolerance (DefaultTolerance, the 5 minutes Slack
// recommends) either way. It is safe for concurrent use.
type SlackVerifier struct {
	timedKeys
}

// NewSlackVerifier returns a verifier for the app's signing secrets (the new and the old one
// while it is regenerated); WithTolerance and WithClock apply as for NewVerifier.
func NewSlackVerifier(secrets []string, opts ...VerifierOption) (*SlackVerifier, error) {
	k, err := newTimedKeys("Slack", secrets, opts)
	if err != nil {
		return nil, err
	}
	return &SlackVerifier{k}, nil
}

// VerifyRequest checks the Slack signature over body. For an Events API callback the Message
// carries event_id as its ID and the inner event's type (else the callback's type); other
// signed requests (slash commands, interactivity, url_verification) name no event and have an
// empty ID.
func (v *SlackVerifier) VerifyRequest(h http.Header, body []byte) (Message, error) {
	if err := missing(h, HeaderSlackSignature, HeaderSlackTimestamp); err != nil {
		return Message{}, err
	}
	tsHeader := h.Get(HeaderSlackTimestamp)
	ts, err := parseTimestamp(tsHeader)
	if err != nil {
		return Message{}, err
	}
	sig, err := prefixedHex(h, HeaderSlackSignature, "v0=")
	if err != nil {
		return Message{}, err
	}
	if err := v.check(ts); err != nil {
		return Message{}, err
	}
	if !anyMatch(v.keys, [][]byte{sig}, func(key []byte) []byte {
		return hmacSHA256(key, []byte("v0:"), []byte(tsHeader), []byte(":"), body)
	}) {
		return Message{}, ErrNoMatchingSignature
	}
	var callback struct {
		Type    string `json:"type"`
		EventID string `json:"event_id"`
		Event   struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	_ = json.Unmarshal(body, &callback) // form-encoded bodies name no event
	typ := callback.Event.Type
	if typ == "" {
		typ = callback.Type
	}
	return Message{ID: callback.EventID, Type: typ, Timestamp: ts}, nil
}
