// Package admin is hookstream's HTTP API for operators and partners (design.md section 10, R36):
// endpoints, secrets and rotation, delivery history, replay, disablement, the cursor feed, and
// the probes and metrics routes. Every partner-scoped route filters by the authenticated partner.
package admin
