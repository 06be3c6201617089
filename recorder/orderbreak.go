package recorder

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// OrderBrokenType is the event a partner gets when a strict ordered endpoint's order gives way
// (design.md section 7): its head failed for good, and the records held behind it go on.
const OrderBrokenType = "endpoint.order_broken"

// insertedBreaks reads the rows the attempt insert returned (a delivery id for an order break,
// null otherwise, and the attempt number) and returns the attempts of the batch they name.
func insertedBreaks(rows pgx.Rows, attempts []records.Attempt) ([]records.Attempt, error) {
	type key struct {
		id string
		no int32
	}
	inserted := map[key]bool{}
	var (
		id *string
		no int32
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &no}, func() error {
		if id != nil {
			inserted[key{*id, no}] = true
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var breaks []records.Attempt
	for _, a := range attempts {
		k := key{a.DeliveryID, int32(a.AttemptNo)}
		if a.OrderBroken && inserted[k] {
			breaks = append(breaks, a)
			delete(inserted, k) // the same attempt twice in a batch: announced once
		}
	}
	return breaks, nil
}

// announceOrderBreaks writes an endpoint.order_broken event through the outbox for each order
// break, in the transaction that records its attempt, so the partner hears of it once the
// history shows it, and only then.
func announceOrderBreaks(ctx context.Context, tx pgx.Tx, breaks []records.Attempt) error {
	for _, a := range breaks {
		b, err := json.Marshal(map[string]any{
			"endpoint_id": a.EndpointID, "delivery_id": a.DeliveryID, "event_id": a.EventID,
			"event_type": a.EventType, "attempts": a.AttemptNo, "failed_at": a.StartedAt.UTC(),
		})
		if err != nil {
			return fmt.Errorf("%s: %w", OrderBrokenType, err)
		}
		if _, err := outbox.Append(ctx, tx, outbox.Event{PartnerID: a.PartnerID, Type: OrderBrokenType,
			Subject: outbox.Subject{Type: "endpoint", ID: a.EndpointID}, Data: b}); err != nil {
			return fmt.Errorf("%s: %w", OrderBrokenType, err)
		}
	}
	return nil
}
