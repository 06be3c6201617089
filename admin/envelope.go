package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// storedEvent is an event found for a replay or the feed: its envelope bytes exactly as the
// events topic holds them, and the facts replays need.
type storedEvent struct {
	EventID       string
	PartnerID     string
	Type          string
	SchemaVersion int
	Body          []byte
	LSN           records.LSN // zero when read from the outbox (not yet known there)
	CommitTime    time.Time   // zero when read from the outbox
}

// marshalEnvelope serialises an envelope the way cdc does when it publishes an outbox row
// (cdc/events.go): encoding/json in struct field order, HTML characters unescaped, data compacted,
// no trailing newline. The replay test checks the two agree byte for byte, so a replay body is
// the body of the original delivery (R15).
func marshalEnvelope(env outbox.Envelope) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// outboxEvents reads the envelopes of one partner's events from the outbox, where they stay for
// the outbox retention (7 days by default). The partner is part of the query, not a filter on
// its answer: rows committed before event ids were unique (migration 0008) may share an id
// across partners, and another partner's row must neither be returned nor hide this partner's
// (R13). payload::text is jsonb's text form, the same text cdc receives through logical
// replication, so the envelope comes out identical.
func outboxEvents(ctx context.Context, q querier, partnerID string, ids []string) (map[string]storedEvent, error) {
	out := map[string]storedEvent{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT event_id, partner_id, type, subject_type, subject_id, occurred_at,
		schema_version, payload::text, correlation_id FROM outbox_event WHERE partner_id = $1 AND event_id = ANY($2)`,
		partnerID, ids)
	if err != nil {
		return nil, err
	}
	var (
		env     outbox.Envelope
		version int32
		payload string
	)
	_, err = pgx.ForEachRow(rows, []any{&env.EventID, &env.PartnerID, &env.Type, &env.Subject.Type, &env.Subject.ID,
		&env.OccurredAt, &version, &payload, &env.CorrelationID}, func() error {
		env.SchemaVersion = int(version)
		env.OccurredAt = env.OccurredAt.UTC()
		env.Data = json.RawMessage(payload)
		body, err := marshalEnvelope(env)
		if err != nil {
			return err
		}
		out[env.EventID] = storedEvent{EventID: env.EventID, PartnerID: env.PartnerID, Type: env.Type,
			SchemaVersion: env.SchemaVersion, Body: body}
		return nil
	})
	return out, err
}

// envelopeHead is what the API reads from an envelope when a record lacks cdc's headers.
type envelopeHead struct {
	EventID       string `json:"event_id"`
	PartnerID     string `json:"partner_id"`
	Type          string `json:"type"`
	SchemaVersion int    `json:"schema_version"`
}

// eventFromRecord reads an events-topic record: the headers cdc writes (partner_id, type,
// schema_version, commit_lsn, commit_time), or the envelope itself where a header is missing.
// ok is false for a record that is not an event envelope.
func eventFromRecord(r *kgo.Record) (storedEvent, bool) {
	ev := storedEvent{EventID: string(r.Key), Body: r.Value, CommitTime: r.Timestamp}
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

// bodyAgrees reports whether an event record's envelope says what its key and headers say.
// Readers select records by header; before an envelope is handed to a partner (feed, replay)
// its own event_id, partner_id and type are checked too, so a record whose headers and body
// disagree never crosses tenants (R13).
func bodyAgrees(ev storedEvent) bool {
	var head envelopeHead
	if json.Unmarshal(ev.Body, &head) != nil {
		return false
	}
	return head.EventID == ev.EventID && head.PartnerID == ev.PartnerID && head.Type == ev.Type
}
