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

// decodeDelivery reads a deliveries record and checks it (records.Delivery.Validate), then
// what is the sender's own: the request size limit and the envelope the body must be. A
// non-empty reason says why the record cannot be
// delivered at all; it then goes to the dlq topic.
func decodeDelivery(value []byte, maxBody int) (d records.Delivery, head envelopeHead, reason string) {
	d, err := records.UnmarshalDelivery(value)
	if err != nil {
		return d, head, fmt.Sprintf("not a delivery record: %v", err)
	}
	if err := d.Validate(); err != nil {
		return d, head, err.Error()
	}
	if len(d.Body) > maxBody {
		return d, head, fmt.Sprintf("body of %d bytes exceeds the %d-byte request limit", len(d.Body), maxBody)
	}
	if head, err = readHead(d.Body); err != nil {
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

// readHead reads the head of an event envelope exactly as json.Unmarshal(body, &head) would:
// the same value, the same error. It runs once per delivery; a general decoder would spend
// most of its time on the body's data, which the head does not need, so a fast path walks
// the top-level members of a valid body and declines (to json.Unmarshal) anything unusual:
// an escaped or non-ASCII key, a key that matches a head field only case-insensitively, a
// head value that is not a plain string.
func readHead(body []byte) (envelopeHead, error) {
	if h, ok := readHeadFast(body); ok {
		return h, nil
	}
	var h envelopeHead
	err := json.Unmarshal(body, &h)
	return h, err
}

func readHeadFast(body []byte) (h envelopeHead, ok bool) {
	if !json.Valid(body) {
		return h, false
	}
	// Valid JSON from here on: every index below stays in range and every token is well formed.
	i := skipSpace(body, 0)
	if body[i] != '{' {
		return h, false
	}
	i++
	for {
		i = skipSpace(body, i)
		switch body[i] {
		case '}':
			return h, true
		case ',':
			i++
			continue
		}
		key, end, plain := jsonString(body, i)
		if !plain {
			return h, false
		}
		i = skipSpace(body, end) + 1 // the colon
		i = skipSpace(body, i)
		var field *string
		switch string(key) {
		case "event_id":
			field = &h.EventID
		case "partner_id":
			field = &h.PartnerID
		case "type":
			field = &h.Type
		default:
			for _, name := range []string{"event_id", "partner_id", "type"} {
				if strings.EqualFold(string(key), name) {
					return h, false // encoding/json would take it for the field
				}
			}
			i = skipValue(body, i)
			continue
		}
		if body[i] != '"' {
			return h, false
		}
		value, end, plain := jsonString(body, i)
		if !plain {
			return h, false
		}
		*field = string(value)
		i = end
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonString returns the contents of the valid JSON string starting at b[i] and the index
// past it. plain says the contents are printable ASCII without escapes, so they are its value.
func jsonString(b []byte, i int) (contents []byte, end int, plain bool) {
	plain = true
	for j := i + 1; ; j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, plain
		case c == '\\':
			plain = false
			j++ // the escaped byte, which may be a quote
		case c < 0x20 || c > 0x7e:
			plain = false
		}
	}
}

// skipValue returns the index past the valid JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		_, end, _ := jsonString(b, i)
		return end
	case '{', '[':
		for depth := 0; ; {
			switch b[i] {
			case '"':
				_, i, _ = jsonString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[i])) { // a number or a literal
		i++
	}
	return i
}

// deadLetterOf is the dead letter of a record that cannot be delivered, with at most 64 KiB of
// it (records.ClipOriginal).
func deadLetterOf(value []byte, d records.Delivery, reason string, at time.Time) records.DeadLetter {
	dl := records.NewDeadLetter("sender", reason, records.ClipOriginal(value))
	dl.EventID, dl.Partner, dl.LSN, dl.At = d.EventID, d.PartnerID, d.EventLSN, at.UTC()
	return dl
}
