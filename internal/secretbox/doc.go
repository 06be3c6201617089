// Package secretbox seals endpoint signing secrets with AES-256-GCM under the processes' key
// (HOOKSTREAM_SECRET_KEY), so the secrets at rest in PostgreSQL and on the endpoints topic are
// useless without it, and the key itself is never stored beside the data (design.md section 4,
// R16).
//
// # Contract
//
// The key is 32 random bytes, given to the processes as standard base64 (ParseKey). A sealed
// value is the 12-byte random nonce followed by the GCM ciphertext and tag:
//
//	sealed = nonce (12 bytes) || AES-256-GCM(key, nonce, plaintext, aad)
//
// The plaintext is the secret exactly as shown to the partner ("whsec_" + base64). The
// additional authenticated data binds a ciphertext to its row:
//
//	aad = endpoint_id + "/" + secret_id   (see AAD)
//
// so a ciphertext copied to another endpoint or another secret row does not open. The admin API
// seals with this AAD when it creates or rotates a secret; the sender opens with it.
package secretbox
