package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/clip"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// Why cdc refuses an outbox row: the reason label of hookstream_cdc_dead_letters_total and the
// reason column of outbox_dead_letter.
const (
	// ReasonMalformed: the row is no valid envelope (event id, type, subject, data not a JSON
	// object, ...).
	ReasonMalformed = "malformed"
	// ReasonTooLarge: the envelope is over Config.MaxEventBytes.
	ReasonTooLarge = "too_large"
	// ReasonUnknownType: the catalog has no such type (R4).
	ReasonUnknownType = "unknown_type"
	// ReasonSchemaVersion: the type is not published at the row's schema version (R31).
	ReasonSchemaVersion = "schema_version"
	// ReasonInvalidData: the data breaks the type's JSON Schema.
	ReasonInvalidData = "invalid_data"
)

// Reasons lists every reason cdc refuses a row for.
func Reasons() []string {
	return []string{ReasonMalformed, ReasonTooLarge, ReasonUnknownType, ReasonSchemaVersion, ReasonInvalidData}
}

// catalogReason names what the catalog refused (eventcatalog.Catalog.CheckEvent's errors).
func catalogReason(err error) string {
	var verr *outbox.ValidationError
	switch {
	case errors.Is(err, outbox.ErrInvalidType):
		return ReasonUnknownType
	case errors.As(err, &verr) && verr.Field == "schema_version":
		return ReasonSchemaVersion
	default:
		return ReasonInvalidData
	}
}

// Bounds of what outbox_dead_letter keeps of a refused row: a raw-SQL row may hold text of any
// length, and the unique index on (event_id, occurred_at) cannot hold a value of many kilobytes.
const (
	maxRecordedText   = 255
	maxRecordedDetail = 2048
)

// deadLetter refuses an outbox row: it is recorded in outbox_dead_letter at once, for the
// operator, and goes to the dlq topic in the open Kafka transaction; the stream goes on.
//
// The table row is written before the Kafka transaction commits, so a crash in between loses
// neither: the next session streams the row again, its dlq record is produced again and the
// table insert finds the row already there (R10: the dlq topic and the table hold it once).
func (s *session) deadLetter(ctx context.Context, env outbox.Envelope, rw row, reason string, cause error) error {
	if err := s.recordDeadLetter(ctx, env, reason, cause); err != nil {
		return err
	}
	dl := records.NewDeadLetter("cdc", reason+": "+cause.Error(), rowForDeadLetter(rw, 64<<10))
	dl.EventID, dl.Partner, dl.LSN = env.EventID, env.PartnerID, s.commitLSN
	key := env.EventID
	if key == "" {
		key = s.commitLSN.String()
	}
	rec := records.DeadLetterRecord(s.c.names.DLQ, key, dl)
	rec.Partition = records.EventPartition(key, s.parts[rec.Topic])
	s.produce(rec, nil)
	s.deadLetters[reason]++
	s.c.log.Warn("outbox row dead-lettered", "event_id", env.EventID, "partner_id", env.PartnerID, "type", env.Type,
		"reason", reason, "detail", cause.Error())
	return nil
}

// recordDeadLetter inserts the operator's row of a refused outbox row, keyed like the outbox
// row itself so that streaming it again changes nothing, and, in the same transaction and only
// when the row is new, the operator's operator.cdc.dead_lettered event (design.md section 8,
// "Operator events"): that event is an outbox row like any other, which this cdc streams and
// publishes in turn, so it is written once per refused row and delivered at least once.
func (s *session) recordDeadLetter(ctx context.Context, env outbox.Envelope, reason string, cause error) error {
	detail := clip.Bytes(cause.Error(), maxRecordedDetail)
	err := pgx.BeginFunc(ctx, s.lock, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO outbox_dead_letter
			(event_id, occurred_at, partner_id, type, schema_version, subject_type, subject_id, reason, detail, commit_lsn)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text::pg_lsn)
			ON CONFLICT (event_id, occurred_at) DO NOTHING`,
			clip.Bytes(env.EventID, maxRecordedText), env.OccurredAt, clip.Bytes(env.PartnerID, maxRecordedText), clip.Bytes(env.Type, maxRecordedText),
			env.SchemaVersion, clip.Bytes(env.Subject.Type, maxRecordedText), clip.Bytes(env.Subject.ID, maxRecordedText),
			reason, detail, s.commitLSN.String())
		// A refused operator.cdc.dead_lettered is not told again: that could only repeat itself.
		if err != nil || tag.RowsAffected() == 0 || env.Type == operatorDeadLettered {
			return err
		}
		b, err := json.Marshal(rowDeadLettered{PartnerID: clip.Bytes(env.PartnerID, maxRecordedText),
			EventID: clip.Bytes(env.EventID, maxRecordedText), Type: clip.Bytes(env.Type, maxRecordedText),
			Reason: reason, Detail: detail})
		if err != nil {
			return err
		}
		subject := clip.Bytes(env.EventID, maxRecordedText)
		if subject == "" {
			subject = s.commitLSN.String()
		}
		_, err = outbox.Append(ctx, tx, outbox.Event{PartnerID: outbox.OperatorPartnerID, Type: operatorDeadLettered,
			Subject: outbox.Subject{Type: "outbox_event", ID: subject}, Data: b})
		return err
	})
	if err != nil {
		return fmt.Errorf("cdc: record dead letter of %s in outbox_dead_letter: %w", env.EventID, err)
	}
	return nil
}

// operatorDeadLettered is eventcatalog.OperatorOutboxRowDeadLettered.
const operatorDeadLettered = "operator.cdc.dead_lettered"

// rowDeadLettered is the data of an operator.cdc.dead_lettered event.
type rowDeadLettered struct {
	PartnerID string `json:"partner_id"`
	EventID   string `json:"event_id"`
	Type      string `json:"type"`
	Reason    string `json:"reason"`
	Detail    string `json:"detail"`
}

// expireDeadLetters deletes the operator's rows older than the outbox retention: the outbox
// rows they describe are gone by then.
func (s *session) expireDeadLetters(ctx context.Context, before time.Time) error {
	tag, err := s.lock.Exec(ctx, `DELETE FROM outbox_dead_letter WHERE created_at < $1`, before)
	if err != nil {
		return fmt.Errorf("cdc: expire outbox dead letters: %w", err)
	}
	if n := tag.RowsAffected(); n > 0 {
		s.c.log.Info("expired outbox dead letters deleted", "rows", n)
	}
	return nil
}
