// Package secretbox seals endpoint secrets with AES-256-GCM under the processes' keyring
// (HOOKSTREAM_SECRET_KEY, HOOKSTREAM_SECRET_KEYS), so the secrets at rest in PostgreSQL and on
// the endpoints topic are useless without it, and the keys themselves are never stored beside
// the data (design.md section 4, R16).
//
// # Contract
//
// A key is 32 random bytes, given to the processes as standard base64 (ParseKey). A Keyring
// holds one or more keys, each with an id (1 to 64 letters, digits, '.', '_', '-'): the active
// key seals, every key opens. HOOKSTREAM_SECRET_KEY alone is a keyring of one key with id
// "default" (KeyringOf).
//
// A value sealed by Keyring.Seal (the keyed format, version 1) names its key:
//
//	header = "hsb" || 0x01 || len(id) (1 byte) || id
//	sealed = header || nonce (12 bytes) || AES-256-GCM(key[id], nonce, plaintext, header || aad)
//
// The header is authenticated with the caller's aad, so changing the id, the version or any
// other byte makes the value fail to open. A value sealed before key ids existed (the legacy
// format: nonce || AES-256-GCM(key, nonce, plaintext, aad)) has no header; Open tries it under
// every key of the keyring, the active one first. A legacy value whose random nonce happens to
// begin like a header (1 in 2^32) fails as keyed and opens as legacy. A keyed value naming an
// id the keyring lacks is an *UnknownKeyError naming the id, never the value.
//
// The plaintext is the secret exactly as shown to the partner ("whsec_" + base64). The
// additional authenticated data binds a ciphertext to its row:
//
//	aad = endpoint_id + "/" + secret_id   (see AAD)
//
// so a ciphertext copied to another endpoint or another secret row does not open. The admin API
// seals with this AAD when it creates or rotates a secret; the sender opens with it.
// Keyring.Reseal turns any value the keyring opens into one sealed by the active key (and says
// whether it changed), which is how `hookstream secrets reseal` moves stored values off an old key.
package secretbox
