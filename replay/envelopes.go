package replay

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/outbox"
)

// MarshalEnvelope serialises an envelope the way cdc does when it publishes an outbox row
// (cdc/events.go): encoding/json in struct field order, HTML characters unescaped, data compacted,
// no trailing newline. The replay test checks the two agree byte for byte, so a replay body is
// the body of the original delivery (R15).
func MarshalEnvelope(env outbox.Envelope) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Envelopes finds the envelopes of a partner's events: from the outbox while it holds them,
// else from the partner's partition of the events topic (R33: replays reach back as far as
// the longer of the two retentions). Events of other partners are never returned; ids found
// in neither place are absent from the result.
func (e *Engine) Envelopes(ctx context.Context, partnerID string, ids []string) (map[string]eventlog.Event, error) {
	found, err := outboxEvents(ctx, e.pool, partnerID, ids)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return found, nil
	}
	fromLog, err := e.cfg.Log.Find(ctx, partnerID, missing)
	if err != nil {
		return nil, err
	}
	for id, ev := range fromLog {
		found[id] = ev
	}
	return found, nil
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
		body, err := MarshalEnvelope(env)
		if err != nil {
			return err
		}
		out[env.EventID] = eventlog.Event{EventID: env.EventID, PartnerID: env.PartnerID, Type: env.Type,
			SchemaVersion: env.SchemaVersion, Body: body}
		return nil
	})
	return out, err
}

// querier is what reads need: the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
