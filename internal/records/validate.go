package records

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The one rule of what a delivery or an attempt record must be before a component acts on it
// (design.md section 5). Producers make delivery records with NewDelivery; every consumer that
// checks a record calls Validate, and adds only what is its own (the sender's request size
// limit and envelope check, the recorder's UTF-8 check of the raw value).

// MaxIDBytes bounds the ids a record names; hookstream's own are far shorter.
const MaxIDBytes = 256

// NewDelivery is the delivery record of the event eventID, of partnerID and type eventType, to
// endpointID, asking for the first attempt (a replay sets the number it reserved), made by
// trigger at createdAt with body, the envelope the endpoint receives. The version and the
// delivery id, derived from the event and the endpoint, are set here and by no caller.
func NewDelivery(eventID, endpointID, partnerID, eventType, trigger string, body []byte, createdAt time.Time) Delivery {
	return Delivery{
		V: DeliveryVersion, DeliveryID: DeliveryID(eventID, endpointID),
		EventID: eventID, EndpointID: endpointID, PartnerID: partnerID, EventType: eventType,
		AttemptNo: 1, Trigger: trigger, Body: body, CreatedAt: createdAt,
	}
}

// Validate reports why d is not a delivery record a component may act on: a version this code
// does not read, a missing field or body, an id that is no id, an attempt number below 1, an
// unknown trigger, or a delivery id not derived from its event and endpoint.
func (d Delivery) Validate() error {
	if d.V != DeliveryVersion {
		return fmt.Errorf("delivery record version %d; this reader reads version %d", d.V, DeliveryVersion)
	}
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"delivery_id", d.DeliveryID}, {"event_id", d.EventID}, {"endpoint_id", d.EndpointID},
		{"partner_id", d.PartnerID}, {"event_type", d.EventType},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(d.Body) == 0 {
		missing = append(missing, "body")
	}
	if len(missing) > 0 {
		return errors.New("delivery record lacks " + strings.Join(missing, ", "))
	}
	if err := checkIDs(idField{"delivery id", d.DeliveryID}, idField{"event id", d.EventID}, idField{"endpoint id", d.EndpointID},
		idField{"partner id", d.PartnerID}, idField{"event type", d.EventType}); err != nil {
		return err
	}
	switch {
	case d.AttemptNo < 1:
		return fmt.Errorf("attempt_no %d is below 1", d.AttemptNo)
	case !ValidTrigger(d.Trigger):
		return fmt.Errorf("unknown trigger %q", d.Trigger)
	case d.DeliveryID != DeliveryID(d.EventID, d.EndpointID):
		return errors.New("delivery_id is not the id of (event_id, endpoint_id)")
	}
	return nil
}

// Validate reports why a is not an attempt record a component may act on: a version this code
// does not read, a missing or malformed event, endpoint or partner id, a delivery id not derived
// from them, an attempt number or HTTP status out of range, an unknown trigger, error category
// or outcome, or no start time. Values only PostgreSQL can judge (text it cannot hold, such as
// a NUL byte in the excerpt or the event type) are left to it.
func (a Attempt) Validate() error {
	if a.V != AttemptVersion {
		return fmt.Errorf("attempt record version %d; this reader reads version %d", a.V, AttemptVersion)
	}
	if a.EventID == "" || a.EndpointID == "" || a.PartnerID == "" {
		return errors.New("event, endpoint and partner ids are required")
	}
	// The ids are looked up before anything is stored: a NUL byte would fail the lookup of the
	// recorder's whole batch.
	if err := checkIDs(idField{"event id", a.EventID}, idField{"endpoint id", a.EndpointID}, idField{"partner id", a.PartnerID}); err != nil {
		return err
	}
	switch {
	case a.DeliveryID != DeliveryID(a.EventID, a.EndpointID):
		return fmt.Errorf("delivery id %q is not derived from event %s and endpoint %s", a.DeliveryID, a.EventID, a.EndpointID)
	case a.AttemptNo < 1 || a.AttemptNo > math.MaxInt32:
		return fmt.Errorf("attempt number %d", a.AttemptNo)
	case a.Status != 0 && (a.Status < 100 || a.Status > 999):
		return fmt.Errorf("HTTP status %d", a.Status)
	case !ValidTrigger(a.Trigger):
		return fmt.Errorf("unknown trigger %q", a.Trigger)
	case !validCategory(a.ErrorCategory):
		return fmt.Errorf("unknown error category %q", a.ErrorCategory)
	case a.Outcome != OutcomeDelivered && a.Outcome != OutcomeRetrying && a.Outcome != OutcomeFailed:
		return fmt.Errorf("unknown outcome %q", a.Outcome)
	case a.StartedAt.IsZero():
		return errors.New("started_at is required")
	}
	return nil
}

// ValidTrigger reports whether t is one of the delivery triggers.
func ValidTrigger(t string) bool {
	switch t {
	case TriggerInitial, TriggerRetry, TriggerReplay, TriggerTest:
		return true
	}
	return false
}

// validCategory reports whether c is an attempt's error category or none.
func validCategory(c string) bool {
	return c == "" || slices.Contains(ErrorCategories, c)
}

type idField struct{ name, value string }

// checkIDs reports the first field that is no id: longer than MaxIDBytes, not UTF-8, or
// holding a NUL byte (PostgreSQL's text cannot).
func checkIDs(fields ...idField) error {
	for _, f := range fields {
		if len(f.value) > MaxIDBytes || !utf8.ValidString(f.value) || strings.IndexByte(f.value, 0) >= 0 {
			return fmt.Errorf("%s %q is not an id", f.name, f.value)
		}
	}
	return nil
}
