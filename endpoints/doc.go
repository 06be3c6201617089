// Package endpoints owns the endpoint concept that the rooms above it share: the in-memory View
// of the endpoints topic (fanout and the sender each run one), the rule of which endpoint
// receives which event (Receives, Subscribed: R13, checked again at every asynchronous
// boundary), and the envelope in the schema version an endpoint is pinned to (ConvertEnvelope,
// R14). It knows nothing of fanout, the sender, the retry tiers or the admin API.
package endpoints
