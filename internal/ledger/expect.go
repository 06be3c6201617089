package ledger

import (
	"time"

	"github.com/hookstream/hookstream/internal/eventtype"
)

// class is what the expected set says of one (event, endpoint) pair of one partner.
type class uint8

const (
	required       class = iota // must be delivered
	excused                     // the endpoint was disabled with this work pending: either way
	boundary                    // the event occurred within Boundary of the endpoint's creation
	beforeCreation              // the event occurred before the endpoint existed: never delivered
	afterDisable                // the event occurred while the endpoint was disabled: not expected
	unsubscribed                // the endpoint is not subscribed to the type: never delivered
)

// classify places the pair of ev and ep (of one partner) in the expected set (see doc.go).
func classify(ev event, ep *endpoint, margin time.Duration) class {
	if !eventtype.MatchesAny(ep.types, ev.typ) {
		return unsubscribed
	}
	switch created := ep.createdAt; {
	case ev.at.Before(created.Add(-margin)):
		return beforeCreation
	case ev.at.Before(created.Add(margin)):
		return boundary
	}
	if ep.disabledAt.IsZero() || ev.at.Before(ep.disabledAt.Add(-margin)) {
		if ep.status == "disabled" {
			return excused
		}
		return required
	}
	if ep.status == "active" {
		if ev.at.After(ep.updatedAt.Add(margin)) {
			return required // re-enabled before its last update
		}
		return excused
	}
	return afterDisable
}
