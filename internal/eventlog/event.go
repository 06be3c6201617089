package eventlog

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// Event is an event found for a replay or the feed: its envelope bytes exactly as the events
// topic holds them, and the facts replays need.
type Event struct {
	EventID       string
	PartnerID     string
	Type          string
	SchemaVersion int
	Body          []byte
	LSN           records.LSN // zero when read from the outbox (not yet known there)
	CommitTime    time.Time   // zero when read from the outbox
}

// envelopeHead is what a reader takes from an envelope when a record lacks cdc's headers.
type envelopeHead struct {
	EventID       string `json:"event_id"`
	PartnerID     string `json:"partner_id"`
	Type          string `json:"type"`
	SchemaVersion int    `json:"schema_version"`
}

// FromRecord reads an events-topic record: the headers cdc writes (partner_id, type,
// schema_version, commit_lsn, commit_time), or the envelope itself where a header is missing.
// ok is false for a record that is not an event envelope.
func FromRecord(r *kgo.Record) (Event, bool) {
	ev := Event{EventID: string(r.Key), Body: r.Value, CommitTime: r.Timestamp}
	for _, h := range r.Headers {
		switch h.Key {
		case records.HeaderPartnerID:
			ev.PartnerID = string(h.Value)
		case records.HeaderType:
			ev.Type = string(h.Value)
		case records.HeaderSchemaVersion:
			ev.SchemaVersion, _ = strconv.Atoi(string(h.Value))
		case records.HeaderCommitLSN:
			if lsn, err := records.ParseLSN(string(h.Value)); err == nil {
				ev.LSN = lsn
			}
		case records.HeaderCommitTime:
			if t, err := time.Parse(time.RFC3339Nano, string(h.Value)); err == nil {
				ev.CommitTime = t
			}
		}
	}
	if ev.PartnerID == "" || ev.Type == "" || ev.SchemaVersion == 0 {
		var head envelopeHead
		if json.Unmarshal(r.Value, &head) != nil {
			return ev, false
		}
		if ev.PartnerID == "" {
			ev.PartnerID = head.PartnerID
		}
		if ev.Type == "" {
			ev.Type = head.Type
		}
		if ev.SchemaVersion == 0 {
			ev.SchemaVersion = head.SchemaVersion
		}
	}
	return ev, ev.EventID != "" && ev.PartnerID != "" && ev.Type != "" && len(ev.Body) > 0
}

// BodyAgrees reports whether an event record's envelope says what its key and headers say.
// Readers select records by header; before an envelope is handed to a partner (feed, replay)
// its own event_id, partner_id and type are checked too, so a record whose headers and body
// disagree never crosses tenants (R13).
func (ev Event) BodyAgrees() bool {
	var head envelopeHead
	if json.Unmarshal(ev.Body, &head) != nil {
		return false
	}
	return head.EventID == ev.EventID && head.PartnerID == ev.PartnerID && head.Type == ev.Type
}
