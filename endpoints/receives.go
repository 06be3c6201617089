package endpoints

import (
	"github.com/hookstream/hookstream/internal/eventtype"
	"github.com/hookstream/hookstream/internal/records"
)

// Subscribed reports whether a subscription list covers eventType: an exact type, a "prefix.*"
// wildcard covering every type under prefix, or "*" for all (the patterns of eventtype). An
// empty list covers nothing.
func Subscribed(eventTypes []string, eventType string) bool {
	return eventtype.MatchesAny(eventTypes, eventType)
}

// Receives is the tenancy and subscription rule, checked again at every asynchronous boundary
// (R13): the endpoint belongs to the event's partner, is active, and is subscribed to the type.
// Fanout adds the creation rule (the endpoint existed when the event committed).
func Receives(e *records.Endpoint, partnerID, eventType string) bool {
	return e != nil && e.PartnerID == partnerID && e.Status == "active" && Subscribed(e.EventTypes, eventType)
}
