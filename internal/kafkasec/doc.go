// Package kafkasec is how hookstream's Kafka connections are encrypted and authenticated: TLS
// (a CA file or the system roots, an optional client certificate for mTLS) and SASL (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM), made into franz-go client options in
// one place (Config.Options), which every client of the binary takes through component.Base.
//
// Guarantees:
//   - A Config that cannot work is refused at start with every reason (Validate, Options): an
//     unknown mechanism, SASL without its credentials, a certificate without its key, a file
//     that cannot be read or parsed, named by its path.
//   - Secrets (passwords, tokens, private keys, AWS secret keys) appear in no error, no log line
//     and no String of a Config: only user names, mechanisms and file paths do.
//   - The password file and the OAuth token file are read again at each authentication, so a
//     rotated Kubernetes secret or a sidecar's refreshed token is used without a restart, and a
//     client refused for a wrong password connects once the file or the broker is corrected.
//   - Explain turns a handshake or authentication failure into a reason an operator can act on
//     ("SASL authentication failed for user hookstream-cdc", "TLS handshake: certificate signed
//     by unknown authority"), for the log and /readyz.
package kafkasec
