package sender

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hookstream/hookstream/internal/records"
)

// envelopeHead is the part of an event envelope the sender checks against the delivery record:
// the body must be the event the record names, of the partner it names (R13).
type envelopeHead struct {
	EventID   string `json:"event_id"`
	PartnerID string `json:"partner_id"`
	Type      string `json:"type"`
}

// decodeDelivery reads a deliveries record. A non-empty reason says why the record cannot be
// delivered at all; it then goes to the dlq topic.
func decodeDelivery(value []byte, maxBody int) (d records.Delivery, head envelopeHead, reason string) {
	d, err := records.UnmarshalDelivery(value)
	if err != nil {
		return d, head, fmt.Sprintf("not a delivery record: %v", err)
	}
	if d.V != records.DeliveryVersion {
		return d, head, fmt.Sprintf("delivery record version %d; this sender reads version %d", d.V, records.DeliveryVersion)
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
		return d, head, "delivery record lacks " + strings.Join(missing, ", ")
	}
	switch {
	case d.AttemptNo < 1:
		return d, head, fmt.Sprintf("attempt_no %d is below 1", d.AttemptNo)
	case !validTrigger(d.Trigger):
		return d, head, fmt.Sprintf("unknown trigger %q", d.Trigger)
	case d.DeliveryID != records.DeliveryID(d.EventID, d.EndpointID):
		return d, head, "delivery_id is not the id of (event_id, endpoint_id)"
	case len(d.Body) > maxBody:
		return d, head, fmt.Sprintf("body of %d bytes exceeds the %d-byte request limit", len(d.Body), maxBody)
	}
	if err := json.Unmarshal(d.Body, &head); err != nil {
		return d, head, fmt.Sprintf("body is not an event envelope: %v", err)
	}
	switch {
	case head.EventID != d.EventID:
		return d, head, "body event_id differs from the record's event_id"
	case head.Type != d.EventType:
		return d, head, "body type differs from the record's event_type"
	case head.PartnerID == "":
		return d, head, "body has no partner_id"
	}
	return d, head, ""
}

func validTrigger(t string) bool {
	switch t {
	case records.TriggerInitial, records.TriggerRetry, records.TriggerReplay, records.TriggerTest:
		return true
	}
	return false
}

// maxDeadLetterOriginal bounds the copy of an offending record kept in the dlq topic.
const maxDeadLetterOriginal = 64 << 10

// deadLetterValue builds the dlq value for a record that cannot be delivered. The original is kept
// as JSON when it is JSON, else as a JSON string; either way at most 64 KiB.
func deadLetterValue(value []byte, d records.Delivery, reason string, at time.Time) ([]byte, error) {
	var original json.RawMessage
	if len(value) <= maxDeadLetterOriginal && json.Valid(value) {
		original = value
	} else {
		v := value
		if len(v) > maxDeadLetterOriginal {
			v = v[:maxDeadLetterOriginal]
		}
		s, err := json.Marshal(strings.ToValidUTF8(string(v), "\uFFFD"))
		if err != nil {
			return nil, err
		}
		original = s
	}
	return json.Marshal(records.DeadLetter{
		V:        records.DeadLetterVersion,
		Source:   "sender",
		Reason:   reason,
		EventID:  d.EventID,
		Partner:  d.PartnerID,
		LSN:      d.EventLSN,
		At:       at.UTC(),
		Original: original,
	})
}
