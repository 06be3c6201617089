package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/internal/records"
)

// Target is one event to replay at an endpoint.
type Target struct {
	EventID   string
	EventType string
	CreatedAt time.Time // the delivery's creation; zero when the pair was never delivered
}

// Reasons a target is not replayed; a job counts them as failed.
const (
	reasonNotRetained   = "event is no longer retained (outbox and events topic both expired)"
	reasonNotSubscribed = "endpoint is no longer subscribed to the event's type"
	reasonWrongPartner  = "event belongs to another partner"
)

// RefusedError is an event that cannot be replayed at the endpoint; Reason says why.
type RefusedError struct {
	Reason string
}

func (e *RefusedError) Error() string { return "replay refused: " + e.Reason }

// ErrNotRetained is the refusal of an event whose envelope neither the outbox nor the events
// topic holds any more: it is older than both retentions.
var ErrNotRetained error = &RefusedError{Reason: reasonNotRetained}

// refusal is the error of reason: ErrNotRetained itself when it is that one.
func refusal(reason string) error {
	if reason == reasonNotRetained {
		return ErrNotRetained
	}
	return &RefusedError{Reason: reason}
}

// prepareReplay builds the delivery record of one replay, whose attempt number replay sets once
// it is reserved, or says why the event cannot be replayed at ep. The body is the event's exact
// envelope, in the schema version the endpoint is pinned to (R14), as fanout would have sent it.
func prepareReplay(ep Endpoint, t Target, ev eventlog.Event, now time.Time) (records.Delivery, string) {
	switch {
	case ev.PartnerID != ep.PartnerID:
		return records.Delivery{}, reasonWrongPartner
	case !endpoints.Subscribed(ep.EventTypes, ev.Type):
		return records.Delivery{}, reasonNotSubscribed
	}
	body, err := eventcatalog.ConvertEnvelope(ev.Body, ev.Type, ev.SchemaVersion, ep.SchemaVersion)
	if err != nil {
		return records.Delivery{}, err.Error()
	}
	created := t.CreatedAt
	if created.IsZero() {
		created = now
	}
	d := records.NewDelivery(ev.EventID, ep.ID, ep.PartnerID, ev.Type, records.TriggerReplay, body, created.UTC())
	d.EventLSN = ev.LSN
	d.CommitTime = ev.CommitTime.UTC() // zero (omitted) when the event was read from the outbox
	d.EndpointVersion = ep.Version     // read-your-writes: never sent with an older configuration
	return d, ""
}

// One replays one event at ep (R24): a new attempt of its delivery, with the next attempt
// number. It returns the record produced, or a *RefusedError (ErrNotRetained among them) when
// the event cannot be replayed there. The caller checks that ep is active and subscribed.
func (e *Engine) One(ctx context.Context, ep Endpoint, t Target) (records.Delivery, error) {
	out, err := e.replay(ctx, ep, []Target{t}, nil)
	if err != nil {
		return records.Delivery{}, err
	}
	if len(out.Produced) == 0 {
		return records.Delivery{}, refusal(out.Reason)
	}
	return out.Produced[0], nil
}

// outcome is the result of replaying a batch.
type outcome struct {
	Produced []records.Delivery
	Failed   int
	Reason   string // the last reason a target was not replayed
}

// replay replays targets at ep: it prepares each record, reserves the attempt numbers in one
// transaction, then produces the records to the deliveries topic keyed by endpoint_id.
// known holds envelopes already in hand; the others are looked up.
func (e *Engine) replay(ctx context.Context, ep Endpoint, targets []Target, known map[string]eventlog.Event) (outcome, error) {
	var out outcome
	var lookup []string
	for _, t := range targets {
		if _, ok := known[t.EventID]; !ok {
			lookup = append(lookup, t.EventID)
		}
	}
	events := known
	if len(lookup) > 0 {
		found, err := e.Envelopes(ctx, ep.PartnerID, lookup)
		if err != nil {
			return out, err
		}
		events = make(map[string]eventlog.Event, len(known)+len(found))
		for id, ev := range known {
			events[id] = ev
		}
		for id, ev := range found {
			events[id] = ev
		}
	}
	now := time.Now()
	ds := make([]records.Delivery, 0, len(targets))
	seen := map[string]bool{}
	for _, t := range targets {
		ev, ok := events[t.EventID]
		if !ok {
			out.Failed++
			out.Reason = reasonNotRetained
			continue
		}
		d, reason := prepareReplay(ep, t, ev, now)
		if reason != "" {
			out.Failed++
			out.Reason = reason
			continue
		}
		if seen[d.DeliveryID] {
			continue
		}
		seen[d.DeliveryID] = true
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		return out, nil
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.DeliveryID
	}
	var numbers map[string]int
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		var err error
		numbers, err = reserveAttempts(ctx, tx, ids, e.cfg.AutomaticAttempts)
		return err
	})
	if err != nil {
		return out, err
	}
	for i := range ds {
		ds[i].AttemptNo = numbers[ds[i].DeliveryID]
	}
	if err := e.Produce(ctx, records.TriggerReplay, ds); err != nil {
		return out, err
	}
	out.Produced = ds
	return out, nil
}

// Produce writes delivery records (replays, and the admin API's test events) to the deliveries
// topic, keyed by endpoint_id with the default partitioner as fanout does, and waits for the
// acknowledgements. A failure to produce wraps ErrUnavailable.
func (e *Engine) Produce(ctx context.Context, trigger string, ds []records.Delivery) error {
	recs := make([]*kgo.Record, len(ds))
	for i, d := range ds {
		value, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("replay: delivery record: %w", err)
		}
		recs[i] = &kgo.Record{Topic: e.cfg.Deliveries, Key: []byte(d.EndpointID), Value: value}
	}
	if err := e.cfg.Client.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("%w: produce to %s: %v", ErrUnavailable, e.cfg.Deliveries, err)
	}
	e.metrics.produced.WithLabelValues(trigger).Add(float64(len(ds)))
	return nil
}
