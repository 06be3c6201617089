// Package sender delivers delivery records over HTTP as Standard Webhooks requests: signed over
// the exact bytes sent (R15), through the egress guard (R26, R27), with per-endpoint concurrency,
// rate limits and circuit breakers so one bad receiver never slows the others (R21). Every
// attempt is reported to the attempts topic; the sender never connects to PostgreSQL (R28).
package sender
