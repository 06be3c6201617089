package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/outbox"
)

// A platform revokes an API key and records the event in the same transaction: either both
// commit or neither does (R9).
func ExampleAppend() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:54329/hookstream")
	if err != nil {
		panic(err)
	}
	defer pool.Close()

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE api_key SET status = 'revoked' WHERE id = $1`, "key_123"); err != nil {
			return err
		}
		id, err := outbox.Append(ctx, tx, outbox.Event{
			PartnerID: "partner_a",
			Type:      "api_key.status_changed",
			Subject:   outbox.Subject{Type: "api_key", ID: "key_123"},
			// The data of the published api_key.status_changed schema (package eventcatalog).
			Data: json.RawMessage(`{"api_key_id":"key_123","customer_id":"cus_8f2k1",
				"previous_status":"active","status":"revoked","reason":"customer_request","version":5}`),
		})
		fmt.Println("recorded", id)
		return err
	})
	if err != nil {
		panic(err)
	}
}

// The same revocation sent as one batch: its statements run as one implicit transaction, which
// commits the state change and the event together in one round trip, or neither.
func ExampleQueue() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:54329/hookstream")
	if err != nil {
		panic(err)
	}
	defer pool.Close()

	b := &pgx.Batch{}
	b.Queue(`UPDATE api_key SET status = 'revoked' WHERE id = $1`, "key_123")
	id, err := outbox.Queue(ctx, b, outbox.Event{
		PartnerID: "partner_a",
		Type:      "api_key.status_changed",
		Subject:   outbox.Subject{Type: "api_key", ID: "key_123"},
		Data: json.RawMessage(`{"api_key_id":"key_123","customer_id":"cus_8f2k1",
			"previous_status":"active","status":"revoked","reason":"customer_request","version":5}`),
	})
	if err != nil {
		panic(err) // refused before anything was sent: nothing is queued
	}
	if err := pool.SendBatch(ctx, b).Close(); err != nil {
		panic(err)
	}
	fmt.Println("recorded", id)
}

// Bad events are refused before anything is written, with an error to branch on.
func ExampleValidationError() {
	_, err := outbox.Append(context.Background(), nil, outbox.Event{
		PartnerID: "partner_a",
		Type:      "APIKey Revoked",
		Subject:   outbox.Subject{Type: "api_key", ID: "key_123"},
	})
	var verr *outbox.ValidationError
	if errors.As(err, &verr) && errors.Is(err, outbox.ErrInvalidType) {
		fmt.Println("refused field:", verr.Field)
	}
	// Output: refused field: type
}

// A job that finalizes a usage period made its event's id once, when it was planned, and stores
// it beside the state change. A rerun of a job whose transaction had in fact committed writes the
// same id again, and Append refuses it: one event_id is one event. The transaction is aborted and
// rolls back with everything in it.
func ExampleErrDuplicateEventID() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:54329/hookstream")
	if err != nil {
		panic(err)
	}
	defer pool.Close()

	id := outbox.NewEventID() // in a real job: read from the job's record, made when it was planned
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE usage_period SET finalized_event_id = $1 WHERE id = $2`, id, "up_2026_11"); err != nil {
			return err
		}
		_, err := outbox.Append(ctx, tx, outbox.Event{
			ID:        id,
			PartnerID: "partner_a",
			Type:      "usage.finalized",
			Subject:   outbox.Subject{Type: "usage_period", ID: "up_2026_11"},
		})
		return err
	})
	if errors.Is(err, outbox.ErrDuplicateEventID) {
		fmt.Println("already recorded:", id)
	}
}
