// Package webhook is the public Standard Webhooks library shared by hookstream and its partners:
// signing and constant-time verification of webhook-id, webhook-timestamp and webhook-signature
// over the raw body (R15, R17, R29), and a receiver inbox that stores each event id once.
package webhook
