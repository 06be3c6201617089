// Package webhook signs and verifies webhooks: Standard Webhooks for hookstream and its partners,
// and the schemes of the other providers partners receive from.
//
// A sender signs with a [Signer] built once per endpoint from its active secrets: the
// webhook-signature header carries one signature per secret, so a receiver holding either the
// old or the new secret accepts the message during a rotation (R15, R17). Two schemes exist:
// v1, HMAC-SHA256 under a shared "whsec_" secret, and v1a, ed25519 under a "whsk_" signing key
// the sender alone holds, verified with its "whpk_" public key ([NewKeyPair]), so that what a
// receiver keeps cannot forge a message. A receiver verifies with a [Verifier] given secrets,
// public keys or both: webhook-id, webhook-timestamp and webhook-signature over the raw body, a
// timestamp tolerance (5 minutes either way by default) and constant-time comparison of HMACs (R29).
// Verification failures are typed errors (ErrMissingHeader, ErrTimestampTooOld, ...) that callers
// tell apart with errors.Is.
//
// Partners also receive webhooks from other providers, and each signs differently, so each has
// its own verifier behind one interface, [RequestVerifier], whose VerifyRequest checks a
// request's headers over its raw body and returns the [Message] it carries (the event id to
// deduplicate on, the type, the signed time):
//
//   - [Verifier]: Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature), as
//     hookstream, and Svix-based senders, sign.
//   - [GitHubVerifier]: X-Hub-Signature-256, "sha256=" and the hex HMAC of the body; the id is
//     X-GitHub-Delivery.
//   - [StripeVerifier]: Stripe-Signature "t=…,v1=…", the hex HMAC of "t.body", one v1 per
//     active secret, with the timestamp tolerance; the id is the event's "id" in the body.
//   - [SlackVerifier]: X-Slack-Signature "v0=" and the hex HMAC of "v0:ts:body" with
//     X-Slack-Request-Timestamp and the tolerance; the id is the callback's event_id.
//   - [ShopifyVerifier]: X-Shopify-Hmac-Sha256, the base64 HMAC of the body; the id is
//     X-Shopify-Webhook-Id.
//   - [TwilioVerifier]: X-Twilio-Signature, the base64 HMAC-SHA1 of the configured URL and the
//     sorted form parameters (or, for a JSON body, the URL with its bodySHA256); the id is
//     I-Twilio-Idempotency-Token.
//
// Every comparison is constant-time, every verifier takes several secrets for a rotation, and
// a bad header is an error, never a panic. GitHub, Shopify and Twilio sign neither a timestamp nor the
// id header: a captured request verifies for ever and can be resent under a fresh id, so keep
// those endpoints on TLS and make the effects idempotent by the resource they change.
//
// Standard Webhooks secrets are "whsec_" followed by the standard base64 encoding of 24 to 64 random bytes;
// [NewSecret] makes 32. Package webhook/inbox builds a receiver on the Verifier that stores each
// event id once and hands it to the application's processor.
package webhook
