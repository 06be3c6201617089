// Package webhook is the public Standard Webhooks library shared by hookstream and its partners.
//
// A sender signs with a [Signer] built once per endpoint from its active secrets: the
// webhook-signature header carries one v1 signature per secret, so a receiver holding either the
// old or the new secret accepts the message during a rotation (R15, R17). A receiver verifies
// with a [Verifier]: webhook-id, webhook-timestamp and webhook-signature over the raw body, a
// timestamp tolerance (5 minutes either way by default) and constant-time comparison (R29).
// Verification failures are typed errors (ErrMissingHeader, ErrTimestampTooOld, ...) that callers
// tell apart with errors.Is.
//
// Secrets are "whsec_" followed by the standard base64 encoding of 24 to 64 random bytes;
// [NewSecret] makes 32. Package webhook/inbox builds a receiver on the Verifier that stores each
// event id once and hands it to the application's processor.
package webhook
