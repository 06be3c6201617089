// Package endpoints owns the endpoint concept that the rooms above it share: the in-memory View
// of the endpoints topic (fanout and the sender each run one), the rule of which endpoint
// receives which event (Receives, Subscribed: R13, checked again at every asynchronous
// boundary), and Disable. The envelope in the schema version an endpoint is pinned to (R14) is
// the event catalog's (eventcatalog.ConvertEnvelope), which knows the versions. It knows
// nothing of fanout, the sender, the retry tiers or the admin API.
package endpoints
