package cdc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hookstream/hookstream/outbox"
)

// envelopeFromRow builds the envelope of an outbox row and serialises it: the only place the
// envelope bytes are made (R8); every later stage passes these bytes on untouched.
func envelopeFromRow(rels *relations, rw row) (outbox.Envelope, []byte, error) {
	var (
		env     outbox.Envelope
		version int32
	)
	for _, f := range []struct {
		name string
		dst  any
	}{
		{"event_id", &env.EventID}, {"partner_id", &env.PartnerID}, {"type", &env.Type},
		{"subject_type", &env.Subject.Type}, {"subject_id", &env.Subject.ID},
		{"occurred_at", &env.OccurredAt}, {"schema_version", &version}, {"correlation_id", &env.CorrelationID},
	} {
		if _, err := rels.scan(rw, f.name, f.dst); err != nil {
			return env, nil, err
		}
	}
	env.SchemaVersion = int(version)
	env.OccurredAt = env.OccurredAt.UTC()
	payload, ok := rw["payload"]
	if !ok || payload.null || payload.unchanged {
		return env, nil, fmt.Errorf("payload missing")
	}
	// jsonb's text form is the JSON document itself.
	env.Data = bytes.Clone(payload.text)
	if err := env.Validate(); err != nil {
		return env, nil, err
	}
	b, err := marshalEnvelope(env)
	return env, b, err
}

func marshalEnvelope(env outbox.Envelope) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep the partner's data as written: no \u003c for '<'
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// rowForDeadLetter renders a row as a JSON object of its text values, bounded in size, so the
// dead letter shows what was refused.
func rowForDeadLetter(rw row, limit int) json.RawMessage {
	m := map[string]any{}
	for name, c := range rw {
		switch {
		case c.null:
			m[name] = nil
		case c.unchanged:
			m[name] = "(unchanged toast)"
		default:
			s := string(c.text)
			if len(s) > limit {
				s = s[:limit] + fmt.Sprintf("… (%d bytes)", len(c.text))
			}
			m[name] = s
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// traceparentOf is the outbox row's traceparent column (migration 0014): the trace context the
// platform stored with the event, "" when none.
func traceparentOf(rw row) string {
	c, ok := rw["traceparent"]
	if !ok || c.null || c.unchanged {
		return ""
	}
	return string(c.text)
}
