// Package partnerkeys is the partner API key (R36): the bearer token a partner's software uses
// on the admin API and on the platform services beside it, such as the reseller reference
// platform. It owns the key's format (Prefix), its creation (New, Create) and its verification
// against PostgreSQL (Verify), so every service that accepts the keys accepts exactly the same
// ones without importing the admin server.
//
// Guarantees:
//   - A key is Prefix and 32 random bytes (base64url); it is returned once, by New or Create,
//     and only its SHA-256 hash is stored (partner_api_key.key_hash). Nothing here logs a key.
//   - Verify answers ErrUnknown for every token that is no live key — malformed, too long,
//     unknown or revoked — with no difference a caller could tell them apart by, and a wrapped
//     error only when PostgreSQL failed.
//   - last_used_at is written at most once a minute per key, and a failure to write it never
//     refuses the key.
package partnerkeys
