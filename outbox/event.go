package outbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"

	"github.com/hookstream/hookstream/internal/eventtype"
)

// MaxDataBytes is the largest data payload Append accepts (256 KiB). Webhooks are notifications
// (R3): large state belongs behind the platform's APIs, not in the event.
const MaxDataBytes = 256 << 10

// maxIDLength bounds partner ids, subject fields and correlation ids.
const maxIDLength = 255

// Subject names the resource an event is about, e.g. {Type: "api_key", ID: "key_123"}.
type Subject struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Event is what a platform hands to Append.
type Event struct {
	// ID is the event's id (R1), "evt_" and a ULID in upper case (a lower-case one is refused,
	// not rewritten); empty means Append makes a new one. Set it,
	// from NewEventID at the time of the state change, when the platform needs the id before
	// Append, e.g. to store it beside the state change; the admin API looks old events up by
	// their id's time. An id the outbox already holds is refused with ErrDuplicateEventID.
	ID string
	// PartnerID scopes the event: only this partner's endpoints receive it (R13). Required.
	PartnerID string
	// Type is lowercase dotted words, e.g. "api_key.status_changed". Required.
	Type string
	// Subject is the resource the event is about. Required.
	Subject Subject
	// Data is the event's JSON object: identifiers and minimal state only (R6). Nil means {}.
	Data json.RawMessage
	// OccurredAt is when the state change happened; zero means now. Stored in UTC.
	OccurredAt time.Time
	// SchemaVersion of Data; zero means 1 (R14, R31).
	SchemaVersion int
	// CorrelationID ties the event to the request or job that caused it. Optional.
	CorrelationID string
}

// Envelope is the JSON document partners receive for every event (R8). Field order is fixed
// by the struct, so one Envelope always serialises to the same bytes.
type Envelope struct {
	EventID       string          `json:"event_id"`
	Type          string          `json:"type"`
	OccurredAt    time.Time       `json:"occurred_at"`
	PartnerID     string          `json:"partner_id"`
	Subject       Subject         `json:"subject"`
	SchemaVersion int             `json:"schema_version"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	Data          json.RawMessage `json:"data"`
}

// Sentinel errors that *ValidationError wraps; branch on them with errors.Is.
var (
	ErrMissingPartner  = errors.New("missing partner id")
	ErrInvalidType     = errors.New("invalid event type")
	ErrMissingSubject  = errors.New("missing subject")
	ErrInvalidData     = errors.New("invalid data")
	ErrPayloadTooLarge = errors.New("payload too large")
	ErrInvalidField    = errors.New("invalid field")
)

// ValidationError says which field of an Event was refused and why.
type ValidationError struct {
	Field  string
	Reason string
	Err    error // one of the sentinel errors above
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("outbox: %s: %s: %s", e.Err, e.Field, e.Reason)
}

func (e *ValidationError) Unwrap() error { return e.Err }

func invalid(sentinel error, field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...), Err: sentinel}
}

// ValidType reports whether name is a well-formed event type: lowercase dotted words, at least
// two, each starting with a letter, at most 128 bytes.
func ValidType(name string) bool {
	return eventtype.Valid(name)
}

// NewEventID returns a fresh event id: "evt_" and a ULID, so ids sort by creation time.
func NewEventID() string {
	return "evt_" + ulid.Make().String()
}

// validate checks ev and returns it with defaults filled and Data compacted.
func (ev Event) validate() (Event, error) {
	if ev.ID != "" && !ValidEventID(ev.ID) {
		return ev, invalid(ErrInvalidField, "id", "%q is not evt_ followed by a ULID in upper case", ev.ID)
	}
	if ev.PartnerID == "" {
		return ev, invalid(ErrMissingPartner, "partner_id", "required")
	}
	if err := checkText("partner_id", ev.PartnerID, ErrMissingPartner); err != nil {
		return ev, err
	}
	if !ValidType(ev.Type) {
		return ev, invalid(ErrInvalidType, "type", "%q is not lowercase dotted words like \"api_key.status_changed\"", ev.Type)
	}
	if ev.Subject.Type == "" || ev.Subject.ID == "" {
		return ev, invalid(ErrMissingSubject, "subject", "type and id are both required")
	}
	if err := checkText("subject.type", ev.Subject.Type, ErrMissingSubject); err != nil {
		return ev, err
	}
	if err := checkText("subject.id", ev.Subject.ID, ErrMissingSubject); err != nil {
		return ev, err
	}
	if err := checkText("correlation_id", ev.CorrelationID, ErrInvalidField); err != nil {
		return ev, err
	}
	if ev.SchemaVersion < 0 {
		return ev, invalid(ErrInvalidField, "schema_version", "must be positive, got %d", ev.SchemaVersion)
	}
	if ev.SchemaVersion == 0 {
		ev.SchemaVersion = 1
	}
	if ev.OccurredAt.IsZero() {
		ev.OccurredAt = time.Now()
	}
	// Microseconds in UTC: what PostgreSQL stores, so the envelope built from the row matches.
	ev.OccurredAt = ev.OccurredAt.UTC().Truncate(time.Microsecond)

	if len(ev.Data) > MaxDataBytes {
		return ev, invalid(ErrPayloadTooLarge, "data", "%d bytes, limit %d", len(ev.Data), MaxDataBytes)
	}
	if len(ev.Data) == 0 {
		ev.Data = json.RawMessage(`{}`)
	}
	if !json.Valid(ev.Data) {
		return ev, invalid(ErrInvalidData, "data", "not valid JSON")
	}
	if first := firstByte(ev.Data); first != '{' {
		return ev, invalid(ErrInvalidData, "data", "must be a JSON object")
	}
	if hasNULString(ev.Data) {
		// PostgreSQL's jsonb cannot store U+0000; refuse it here with a typed error.
		return ev, invalid(ErrInvalidData, "data", "strings must not contain U+0000")
	}
	return ev, nil
}

// hasNULString reports whether any key or string value of the valid JSON document b holds U+0000.
func hasNULString(b []byte) bool {
	if !bytes.Contains(b, []byte(`\u0000`)) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
}

func checkText(field, value string, sentinel error) error {
	if len(value) > maxIDLength {
		return invalid(sentinel, field, "longer than %d bytes", maxIDLength)
	}
	if !utf8.ValidString(value) || bytes.IndexByte([]byte(value), 0) >= 0 {
		return invalid(sentinel, field, "must be valid UTF-8 without NUL bytes")
	}
	return nil
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// Validate checks an envelope built from an outbox row. Rows written by Append always pass; cdc
// uses it for rows inserted some other way, and dead-letters those that fail (design.md
// section 6).
func (e Envelope) Validate() error {
	if !ValidEventID(e.EventID) {
		return invalid(ErrInvalidField, "event_id", "%q is not evt_ followed by a ULID in upper case", e.EventID)
	}
	if e.SchemaVersion < 1 {
		return invalid(ErrInvalidField, "schema_version", "must be positive, got %d", e.SchemaVersion)
	}
	if e.OccurredAt.IsZero() {
		return invalid(ErrInvalidField, "occurred_at", "required")
	}
	_, err := e.Event().validate()
	return err
}

// Event is the event an envelope carries, as a Catalog checks it (cdc checks every row it
// publishes this way).
func (e Envelope) Event() Event {
	return Event{
		PartnerID:     e.PartnerID,
		Type:          e.Type,
		Subject:       e.Subject,
		Data:          e.Data,
		OccurredAt:    e.OccurredAt,
		SchemaVersion: e.SchemaVersion,
		CorrelationID: e.CorrelationID,
	}
}

// ValidEventID reports whether id is "evt_" followed by a ULID in upper case, as NewEventID
// makes it. An id has one spelling: its lower case, which a ULID parser would read as the same
// ULID, is not an event id (design.md section 1), and the outbox refuses it (migration 0016).
func ValidEventID(id string) bool {
	rest, ok := strings.CutPrefix(id, "evt_")
	if !ok || strings.ToUpper(rest) != rest {
		return false
	}
	_, err := ulid.ParseStrict(rest)
	return err == nil
}
