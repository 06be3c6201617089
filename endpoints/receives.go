package endpoints

import (
	"strings"

	"github.com/hookstream/hookstream/internal/records"
)

// Subscribed reports whether a subscription list covers eventType: an exact type, a "prefix.*"
// wildcard covering every type under prefix, or "*" for all. An empty list covers nothing.
func Subscribed(eventTypes []string, eventType string) bool {
	for _, s := range eventTypes {
		switch {
		case s == "*", s == eventType:
			return true
		case strings.HasSuffix(s, ".*") && strings.HasPrefix(eventType, s[:len(s)-1]):
			return true
		}
	}
	return false
}

// Receives is the tenancy and subscription rule, checked again at every asynchronous boundary
// (R13): the endpoint belongs to the event's partner, is active, and is subscribed to the type.
// Fanout adds the creation rule (the endpoint existed when the event committed).
func Receives(e *records.Endpoint, partnerID, eventType string) bool {
	return e != nil && e.PartnerID == partnerID && e.Status == "active" && Subscribed(e.EventTypes, eventType)
}
