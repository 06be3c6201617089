package webhook

import (
	"net/http"
)

// Shopify webhook headers.
const (
	HeaderShopifyHmac      = "X-Shopify-Hmac-Sha256" // standard base64 HMAC-SHA256 of the body
	HeaderShopifyWebhookID = "X-Shopify-Webhook-Id"  // one per webhook, kept by Shopify's retries
	HeaderShopifyTopic     = "X-Shopify-Topic"       // such as "orders/create"
)

// ShopifyVerifier checks Shopify's X-Shopify-Hmac-Sha256: the standard base64 HMAC-SHA256 of
// the raw body under the app's client secret. Shopify signs no timestamp; as with GitHub, the
// webhook id stops a replay and is not signed. It is safe for concurrent use.
type ShopifyVerifier struct {
	keys [][]byte
}

// NewShopifyVerifier returns a verifier for the app's client secrets (the new and the old one
// while the secret is rotated).
func NewShopifyVerifier(secrets []string) (*ShopifyVerifier, error) {
	keys, err := plainSecrets("Shopify", secrets)
	if err != nil {
		return nil, err
	}
	return &ShopifyVerifier{keys: keys}, nil
}

// VerifyRequest checks X-Shopify-Hmac-Sha256 over body; the Message carries
// X-Shopify-Webhook-Id as its ID and X-Shopify-Topic as its Type.
func (v *ShopifyVerifier) VerifyRequest(h http.Header, body []byte) (Message, error) {
	if err := missing(h, HeaderShopifyHmac); err != nil {
		return Message{}, err
	}
	sig, err := canonicalBase64(h, HeaderShopifyHmac)
	if err != nil {
		return Message{}, err
	}
	if !anyMatch(v.keys, [][]byte{sig}, func(key []byte) []byte { return hmacSHA256(key, body) }) {
		return Message{}, ErrNoMatchingSignature
	}
	return Message{ID: h.Get(HeaderShopifyWebhookID), Type: h.Get(HeaderShopifyTopic)}, nil
}
