package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/internal/records"
)

// Attempt numbers of replays (R24, design.md section 8).
//
// A replay is a new attempt of the same (event, endpoint) pair: same event id, same delivery
// id, the next attempt number, trigger replay. The recorder keys attempts by (delivery_id,
// attempt_no), so a replay must never take a number an automatic attempt will also take, or one
// of the two attempts would vanish from the history. Automatic attempts are numbered 1 to
// AutomaticAttempts (the retry schedule's length) and each follows the one before it.
//
// The number is chosen under the delivery's replay_reservation row lock:
//
//   - settled: the delivery's newest recorded attempt is final (succeeded, failed, skipped) and
//     every number reserved before has been recorded. No automatic attempt can follow a final
//     one, so the replay takes the next number: highest recorded + 1.
//   - otherwise an automatic attempt may still be in flight (state pending or retrying, a
//     replay reserved but not yet recorded, or no recorded attempt at all: the initial attempt
//     may still be on its way), so the replay takes a number above every automatic one:
//     max(highest recorded or reserved, AutomaticAttempts) + 1.
//
// A replay numbered at or below AutomaticAttempts that fails is retried by the schedule like any
// attempt (its chain shows as retrying, so the next replay jumps above it); one numbered above
// AutomaticAttempts is not retried (the schedule has no delay after its last attempt). One limit
// remains: an ordered endpoint retries a held head in process with growing numbers, which can
// pass AutomaticAttempts; a replay made during such a hold may share a number with it.
func nextAttempt(state *string, attemptCount, highestRecorded, reserved, automatic int) int {
	recorded := max(attemptCount, highestRecorded)
	known := max(recorded, reserved)
	settled := state != nil && (*state == "succeeded" || *state == "failed" || *state == "skipped") && reserved <= recorded
	if settled {
		return known + 1
	}
	return max(known, automatic) + 1
}

// reserveAttempts assigns each delivery id the attempt number of one replay, inside tx; the
// numbers are durable once tx commits, before anything is produced, so a crash can skip a
// number but never hand one out twice.
func reserveAttempts(ctx context.Context, tx pgx.Tx, ids []string, automatic int) (map[string]int, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make(map[string]int, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// Sorted inserts and locks: concurrent reservations take rows in one order, never deadlock.
	if _, err := tx.Exec(ctx, `INSERT INTO replay_reservation (delivery_id, attempt_no)
		SELECT unnest($1::text[]), 0 ON CONFLICT (delivery_id) DO NOTHING`, ids); err != nil {
		return nil, fmt.Errorf("reserve attempts: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT r.delivery_id, r.attempt_no, d.state, COALESCE(d.attempt_count, 0),
			COALESCE((SELECT max(a.attempt_no) FROM delivery_attempt a WHERE a.delivery_id = r.delivery_id), 0)
		FROM replay_reservation r LEFT JOIN delivery d ON d.delivery_id = r.delivery_id
		WHERE r.delivery_id = ANY($1) ORDER BY r.delivery_id FOR UPDATE OF r`, ids)
	if err != nil {
		return nil, fmt.Errorf("reserve attempts: %w", err)
	}
	var (
		id                       string
		reserved, count, highest int32
		state                    *string
		updateIDs                []string
		updateNos                []int32
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &reserved, &state, &count, &highest}, func() error {
		n := nextAttempt(state, int(count), int(highest), int(reserved), automatic)
		out[id] = n
		updateIDs, updateNos = append(updateIDs, id), append(updateNos, int32(n))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reserve attempts: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE replay_reservation r SET attempt_no = u.n, reserved_at = now()
		FROM unnest($1::text[], $2::int[]) AS u(id, n) WHERE r.delivery_id = u.id`, updateIDs, updateNos); err != nil {
		return nil, fmt.Errorf("reserve attempts: %w", err)
	}
	return out, nil
}

// replayTarget is one event to replay at an endpoint.
type replayTarget struct {
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

// prepareReplay builds the delivery record of one replay, without its attempt number, or says
// why the event cannot be replayed at ep. The body is the event's exact envelope, in the schema
// version the endpoint is pinned to (R14), as fanout would have sent it.
func prepareReplay(ep endpointView, t replayTarget, ev eventlog.Event, now time.Time) (records.Delivery, string) {
	switch {
	case ev.PartnerID != ep.PartnerID:
		return records.Delivery{}, reasonWrongPartner
	case !endpoints.Subscribed(ep.EventTypes, ev.Type):
		return records.Delivery{}, reasonNotSubscribed
	}
	body, err := endpoints.ConvertEnvelope(ev.Body, ev.SchemaVersion, ep.SchemaVersion)
	if err != nil {
		return records.Delivery{}, err.Error()
	}
	created := t.CreatedAt
	if created.IsZero() {
		created = now
	}
	return records.Delivery{
		V: records.DeliveryVersion, DeliveryID: records.DeliveryID(ev.EventID, ep.ID),
		EventID: ev.EventID, EndpointID: ep.ID, PartnerID: ep.PartnerID, EventType: ev.Type,
		Trigger: records.TriggerReplay, Body: body, EventLSN: ev.LSN, CreatedAt: created.UTC(),
		EndpointVersion: ep.Version, // read-your-writes: never sent with an older configuration
	}, ""
}

// envelopes finds the envelopes of a partner's events: from the outbox while it holds them,
// else from the partner's partition of the events topic (R33: replays reach back as far as
// the longer of the two retentions). Events of other partners are never returned.
func (a *API) envelopes(ctx context.Context, partnerID string, ids []string) (map[string]eventlog.Event, error) {
	found, err := outboxEvents(ctx, a.pool, partnerID, ids)
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
	fromLog, err := a.events.Find(ctx, partnerID, missing)
	if err != nil {
		return nil, err
	}
	for id, ev := range fromLog {
		found[id] = ev
	}
	return found, nil
}

// replayOutcome is the result of replaying a batch.
type replayOutcome struct {
	Produced []records.Delivery
	Failed   int
	Reason   string // the last reason a target was not replayed
}

// replay replays targets at ep: it prepares each record, reserves the attempt numbers in one
// transaction, then produces the records to the deliveries topic keyed by endpoint_id.
// known holds envelopes already in hand; the others are looked up.
func (a *API) replay(ctx context.Context, ep endpointView, targets []replayTarget, known map[string]eventlog.Event) (replayOutcome, error) {
	var out replayOutcome
	var lookup []string
	for _, t := range targets {
		if _, ok := known[t.EventID]; !ok {
			lookup = append(lookup, t.EventID)
		}
	}
	events := known
	if len(lookup) > 0 {
		found, err := a.envelopes(ctx, ep.PartnerID, lookup)
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
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		var err error
		numbers, err = reserveAttempts(ctx, tx, ids, a.cfg.AutomaticAttempts)
		return err
	})
	if err != nil {
		return out, err
	}
	for i := range ds {
		ds[i].AttemptNo = numbers[ds[i].DeliveryID]
	}
	if err := a.produce(ctx, records.TriggerReplay, ds); err != nil {
		return out, err
	}
	out.Produced = ds
	return out, nil
}

// produce writes delivery records to the deliveries topic, keyed by endpoint_id with the default
// partitioner as fanout does, and waits for the acknowledgements.
func (a *API) produce(ctx context.Context, trigger string, ds []records.Delivery) error {
	recs := make([]*kgo.Record, len(ds))
	for i, d := range ds {
		value, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("admin: delivery record: %w", err)
		}
		recs[i] = &kgo.Record{Topic: a.names.Deliveries, Key: []byte(d.EndpointID), Value: value}
	}
	if err := a.kafka.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("%w: produce to %s: %v", errUnavailable, a.names.Deliveries, err)
	}
	a.metrics.replayed.WithLabelValues(trigger).Add(float64(len(ds)))
	return nil
}

// replayAccepted is the answer to a single replay.
type replayAccepted struct {
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
	AttemptNo  int    `json:"attempt_no"`
	Trigger    string `json:"trigger"`
}

// replayDelivery makes one new attempt of a delivery (R24): 202 with its attempt number. The
// attempt itself happens asynchronously and shows up in the delivery's attempts.
func (a *API) replayDelivery(w http.ResponseWriter, r *http.Request, _ caller) error {
	pid, did := r.PathValue("pid"), r.PathValue("did")
	var req struct{}
	if e := decodeBody(r, &req, false); e != nil {
		return e
	}
	d, err := loadDelivery(r.Context(), a.pool, pid, did)
	if err != nil {
		return err
	}
	if d.EventType == testEventType {
		return conflict("test deliveries are not replayed; send a new test event")
	}
	ep, err := loadEndpoint(r.Context(), a.pool, pid, d.EndpointID, false)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return conflict("the endpoint of this delivery was deleted")
	}
	if err != nil {
		return err
	}
	if ep.Status != "active" {
		return conflict("endpoint is disabled; enable it before replaying")
	}
	if !endpoints.Subscribed(ep.EventTypes, d.EventType) {
		return conflict("endpoint is no longer subscribed to %s", d.EventType)
	}
	out, err := a.replay(r.Context(), ep, []replayTarget{{EventID: d.EventID, EventType: d.EventType, CreatedAt: d.CreatedAt}}, nil)
	if err != nil {
		return err
	}
	if len(out.Produced) == 0 {
		if out.Reason == reasonNotRetained {
			return errorf(http.StatusGone, CodeGone, "event %s is older than the replay window (%s): reconcile through the platform's state APIs",
				d.EventID, a.cfg.ReplayWindow)
		}
		return conflict("%s", out.Reason)
	}
	p := out.Produced[0]
	a.log.Info("delivery replayed", "partner_id", pid, "delivery_id", did, "attempt_no", p.AttemptNo)
	respond(w, http.StatusAccepted, replayAccepted{DeliveryID: p.DeliveryID, EventID: p.EventID,
		EndpointID: p.EndpointID, AttemptNo: p.AttemptNo, Trigger: p.Trigger})
	return nil
}
