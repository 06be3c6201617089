package webhook

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Twilio webhook headers.
const (
	HeaderTwilioSignature = "X-Twilio-Signature" // standard base64 HMAC-SHA1 of the URL (and form parameters)
	// HeaderTwilioIdempotencyToken is one per webhook, kept by Twilio's retries.
	HeaderTwilioIdempotencyToken = "I-Twilio-Idempotency-Token"
)

// TwilioVerifier checks Twilio's X-Twilio-Signature: the standard base64 HMAC-SHA1, under the
// account's auth token, of the full URL Twilio requested and, for a form-encoded
// (application/x-www-form-urlencoded) body, every POST parameter appended to it, sorted by name
// in byte order, each name immediately followed by its value. For any other body (JSON) Twilio
// adds a bodySHA256 query parameter, the hex SHA-256 of the body, to the URL and signs the URL
// alone; the verifier adds the hash of the body it received the same way, so a changed body
// fails like a changed signature.
//
// Twilio signs the URL it was configured with, which a server behind a proxy cannot rebuild
// from the request (scheme, host and port differ), so the verifier is given that URL. Twilio
// signs no timestamp and no id; the id is the I-Twilio-Idempotency-Token header, unsigned like
// GitHub's delivery id. Names and values are joined without a separator, so the signature
// binds the parameters as parsed, not the raw body: read the parameters, never the bytes. It
// is safe for concurrent use.
type TwilioVerifier struct {
	keys [][]byte
	url  string
}

// NewTwilioVerifier returns a verifier for the account's auth tokens (the primary and the
// secondary one while a token is rotated) and webhookURL, the absolute http or https URL
// configured in Twilio for this webhook, query string included, exactly as configured there.
func NewTwilioVerifier(authTokens []string, webhookURL string) (*TwilioVerifier, error) {
	keys, err := plainSecrets("Twilio", authTokens)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(webhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
		return nil, fmt.Errorf("webhook: Twilio webhook URL %q must be an absolute http or https URL without a fragment", truncate(webhookURL))
	}
	if u.Query().Has("bodySHA256") {
		return nil, errors.New("webhook: the Twilio webhook URL must not carry bodySHA256; Twilio adds it to each request")
	}
	return &TwilioVerifier{keys: keys, url: webhookURL}, nil
}

// VerifyRequest checks X-Twilio-Signature over the configured URL and body; the Message carries
// I-Twilio-Idempotency-Token as its ID and no type (Twilio names none in a header).
func (v *TwilioVerifier) VerifyRequest(h http.Header, body []byte) (Message, error) {
	if err := missing(h, HeaderTwilioSignature); err != nil {
		return Message{}, err
	}
	sig, err := canonicalBase64(h, HeaderTwilioSignature)
	if err != nil {
		return Message{}, err
	}
	signed, err := v.signedContent(h.Get("Content-Type"), body)
	if err != nil {
		return Message{}, err
	}
	if !anyMatch(v.keys, [][]byte{sig}, func(key []byte) []byte {
		m := hmac.New(sha1.New, key)
		_, _ = m.Write(signed) // hash.Hash writes never fail
		return m.Sum(nil)
	}) {
		return Message{}, ErrNoMatchingSignature
	}
	return Message{ID: h.Get(HeaderTwilioIdempotencyToken)}, nil
}

// signedContent is what Twilio signs for a request with this content type and body.
func (v *TwilioVerifier) signedContent(contentType string, body []byte) ([]byte, error) {
	media, _, _ := mime.ParseMediaType(contentType)
	switch {
	case media == "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			// Not what Twilio sends, so not what it signed.
			return nil, fmt.Errorf("%w: the form body does not parse", ErrNoMatchingSignature)
		}
		var b strings.Builder
		b.WriteString(v.url)
		names := make([]string, 0, len(form))
		for name := range form {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			values := slices.Clone(form[name])
			slices.Sort(values) // a repeated name signs its values in order too
			for _, value := range values {
				b.WriteString(name)
				b.WriteString(value)
			}
		}
		return []byte(b.String()), nil
	case len(body) == 0:
		return []byte(v.url), nil
	}
	sum := sha256.Sum256(body)
	sep := "?"
	if strings.Contains(v.url, "?") {
		sep = "&"
	}
	return []byte(v.url + sep + "bodySHA256=" + hex.EncodeToString(sum[:])), nil
}

// canonicalBase64 decodes the standard base64 signature in header name of h. Only the
// canonical encoding is a signature: the decoder alone would also take line breaks and nonzero
// padding bits, so the value must read back exactly as it was sent.
func canonicalBase64(h http.Header, name string) ([]byte, error) {
	encoded := h.Get(name)
	sig, err := base64.StdEncoding.Strict().DecodeString(encoded)
	if err == nil && base64.StdEncoding.EncodeToString(sig) != encoded {
		err = errors.New("not canonical")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not canonical standard base64", ErrMalformedHeader, name)
	}
	return sig, nil
}
