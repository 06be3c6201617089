package admin

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/outbox"
)

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
func outboxEvents(ctx context.Context, q querier, partnerID string, ids []string) (map[string]eventlog.Event, error) {
	out := map[string]eventlog.Event{}
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
		out[env.EventID] = eventlog.Event{EventID: env.EventID, PartnerID: env.PartnerID, Type: env.Type,
			SchemaVersion: env.SchemaVersion, Body: body}
		return nil
	})
	return out, err
}
