package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/internal/filter"
	"github.com/hookstream/hookstream/internal/records"
)

// limitName is the name the admin API gives the limit of deliveries per job (GET /v1/limits),
// which a job that stops at it names.
const limitName = "replay_deliveries"

// stepHistory counts a history job's selection on its first step, then replays the next batch of
// its deliveries in (created_at, delivery_id) order.
func (e *Engine) stepHistory(ctx context.Context, j *job, ep Endpoint) (bool, error) {
	f := j.Filter
	if !j.Pos.Started {
		n, err := e.CountHistory(ctx, j.PartnerID, j.EndpointID, f)
		if err != nil {
			return false, err
		}
		j.Total, j.Pos = n, jobPosition{Started: true, After: f.Since}
		if limit := e.cfg.MaxDeliveries; n > limit {
			// Queued before the limit was lowered, or grown by deliveries recorded late.
			return false, fmt.Errorf("%w: the replay selects %d deliveries, more than the %d one replay job may replay (%s): split it into smaller time ranges",
				errJobFailed, n, limit, limitName)
		}
		return false, nil
	}
	rows, err := e.pool.Query(ctx, `SELECT delivery_id, event_id, event_type, created_at FROM delivery
		WHERE `+historyWhere+` AND (created_at, delivery_id) > ($6, $7)
		ORDER BY created_at, delivery_id LIMIT $8`,
		j.EndpointID, j.PartnerID, f.Since, f.Until, f.State, j.Pos.After, j.Pos.AfterID, e.stepSize())
	if err != nil {
		return false, err
	}
	var (
		targets     []Target
		lastAt      time.Time // the last delivery read
		lastID, did string
		t           Target
	)
	if _, err := pgx.ForEachRow(rows, []any{&did, &t.EventID, &t.EventType, &t.CreatedAt}, func() error {
		targets = append(targets, t)
		lastAt, lastID = t.CreatedAt, did
		return nil
	}); err != nil {
		return false, err
	}
	if len(targets) == 0 {
		j.Total = j.Done + j.Failed // the final count of what the job went through
		return true, nil
	}
	if err := e.pacers.wait(ctx, j.PartnerID, len(targets)); err != nil {
		return false, err
	}
	out, err := e.replay(ctx, ep, targets, nil)
	if err != nil {
		return false, err
	}
	j.Done += len(out.Produced)
	j.Failed += out.Failed
	if out.Reason != "" {
		j.LastError = out.Reason
	}
	j.Pos.After, j.Pos.AfterID = lastAt, lastID
	j.Total = max(j.Total, j.Done+j.Failed)
	return false, nil
}

// stepLog finds a log job's partition and range on its first step, then scans the next part of
// the range for the partner's events the endpoint receives and replays them.
func (e *Engine) stepLog(ctx context.Context, j *job, ep Endpoint) (bool, error) {
	if !j.Pos.Started {
		return e.startLog(ctx, j)
	}
	if n, err := e.cfg.Log.Partitions(ctx); err != nil {
		return false, err
	} else if n != j.Pos.Partitions {
		return false, fmt.Errorf("%w: the events topic was repartitioned while the job ran", errJobFailed)
	}
	// room keeps the job within the limit of replayed deliveries; targets only shrink after the
	// scan (the state filter), so the job's total never passes it.
	limit := e.cfg.MaxDeliveries
	room := min(e.stepSize(), limit-j.Total)
	if room <= 0 {
		// Queued before the limit was lowered.
		return false, fmt.Errorf("%w: stopped at the limit of %d deliveries one replay job may replay (%s)", errJobFailed, limit, limitName)
	}
	found, err := e.scanLog(ctx, j, ep, room)
	if err != nil {
		return false, err
	}
	targets := found.targets
	if f := j.Filter; f.State != "" && len(targets) > 0 {
		if targets, err = e.filterByState(ctx, ep.ID, targets, f.State); err != nil {
			return false, err
		}
	}
	if len(targets) > 0 {
		if err := e.replayLogBatch(ctx, j, ep, targets, found.known); err != nil {
			return false, err
		}
	}
	j.Pos.Next = found.next
	if found.past {
		j.Pos.Next = j.Pos.End
	}
	finished := j.Pos.Next >= j.Pos.End
	if !finished && j.Total >= limit {
		last := found.known[targets[len(targets)-1].EventID].CommitTime.UTC().Format(time.RFC3339Nano)
		return false, fmt.Errorf("%w: stopped at the limit of %d deliveries one replay job may replay (%s) after the events committed up to %s: replay the rest with a job from since=%s",
			errJobFailed, limit, limitName, last, last)
	}
	return finished, nil
}

// startLog is a log job's first step: it finds the partner's partition and the offsets its time
// range may span, and says whether that range is empty.
func (e *Engine) startLog(ctx context.Context, j *job) (bool, error) {
	p, n, err := e.cfg.Log.PartitionOf(ctx, j.PartnerID)
	if err != nil {
		return false, err
	}
	start, end, err := e.cfg.Log.Bounds(ctx, p)
	if err != nil {
		return false, err
	}
	// Records are written after their commit, so none committed at or after since was
	// written before since (less clock differences).
	from, err := e.cfg.Log.OffsetAt(ctx, p, j.Filter.Since.Add(-eventlog.ClockSlack))
	if err != nil {
		return false, err
	}
	j.Pos = jobPosition{Started: true, Partition: p, Partitions: n, Next: max(from, start), End: end}
	return j.Pos.Next >= j.Pos.End, nil
}

// logScan is what one step of a log job found in the partner's partition.
type logScan struct {
	targets []Target
	known   map[string]eventlog.Event // the envelopes of targets, by event id
	next    int64                     // the offset after the last record read
	past    bool                      // a record committed after the range was read: the job is through
}

// scanLog reads the job's partition from its position for at most room events of the partner
// in the job's time range that the endpoint receives, stopping early at the scan and byte bounds
// of a step.
func (e *Engine) scanLog(ctx context.Context, j *job, ep Endpoint, room int) (logScan, error) {
	refused, err := filterOf(ep)
	if err != nil {
		return logScan{}, fmt.Errorf("%w: %v", errJobFailed, err)
	}
	release, err := e.cfg.Log.Acquire(ctx)
	if err != nil {
		return logScan{}, err
	}
	var (
		f       = j.Filter
		found   = logScan{known: map[string]eventlog.Event{}}
		scanned int
		size    int
	)
	found.next, err = e.cfg.Log.Scan(ctx, j.Pos.Partition, j.Pos.Next, j.Pos.End, func(rec *kgo.Record) bool {
		scanned++
		ev, ok := eventlog.FromRecord(rec)
		switch {
		case !ok || ev.PartnerID != j.PartnerID:
		case ev.CommitTime.After(f.Until.Add(eventlog.ClockSlack)):
			// Commit order is log order: nothing later is in range.
			found.past = true
			return false
		case ev.CommitTime.Before(f.Since) || !ev.CommitTime.Before(f.Until):
		case !endpoints.Subscribed(ep.EventTypes, ev.Type), refused(ev):
		case !ev.BodyAgrees():
			e.log.Error("events record whose envelope disagrees with its key or headers not replayed",
				"job_id", j.ID, "partition", rec.Partition, "offset", rec.Offset)
		default:
			if _, dup := found.known[ev.EventID]; !dup {
				found.known[ev.EventID] = ev
				found.targets = append(found.targets, Target{EventID: ev.EventID, EventType: ev.Type})
				size += len(ev.Body)
			}
		}
		return len(found.targets) < room && scanned < e.cfg.MaxScan && size < maxStepBytes
	})
	release()
	if errors.Is(err, eventlog.ErrOffsetExpired) {
		return logScan{}, fmt.Errorf("%w: the events topic's retention removed events the job had not read yet", errJobFailed)
	}
	if err != nil {
		return logScan{}, err
	}
	return found, nil
}

// replayLogBatch replays the targets a log job's step selected and counts them in the job.
func (e *Engine) replayLogBatch(ctx context.Context, j *job, ep Endpoint, targets []Target, known map[string]eventlog.Event) error {
	if err := e.pacers.wait(ctx, j.PartnerID, len(targets)); err != nil {
		return err
	}
	out, err := e.replay(ctx, ep, targets, known)
	if err != nil {
		return err
	}
	j.Total += len(targets)
	j.Done += len(out.Produced)
	j.Failed += out.Failed
	if out.Reason != "" {
		j.LastError = out.Reason
	}
	return nil
}

// filterByState keeps the targets whose delivery at endpoint eid is in state ("missing": has
// no delivery at all).
func (e *Engine) filterByState(ctx context.Context, eid string, targets []Target, state string) ([]Target, error) {
	ids := make([]string, len(targets))
	for i, t := range targets {
		ids[i] = records.DeliveryID(t.EventID, eid)
	}
	rows, err := e.pool.Query(ctx, `SELECT delivery_id, state, created_at FROM delivery WHERE delivery_id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	type row struct {
		state   string
		created time.Time
	}
	have := map[string]row{}
	var (
		id string
		rw row
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &rw.state, &rw.created}, func() error { have[id] = rw; return nil }); err != nil {
		return nil, err
	}
	out := targets[:0]
	for i, t := range targets {
		got, ok := have[ids[i]]
		switch {
		case state == StateMissing && !ok:
			out = append(out, t)
		case state != StateMissing && ok && got.state == state:
			t.CreatedAt = got.created
			out = append(out, t)
		}
	}
	return out, nil
}

// filterOf returns what a log replay asks of each event: whether the endpoint's payload filter
// refuses it, as fanout would have (in the envelope version the endpoint is pinned to), so a
// replay from the log sends only what the endpoint would have received. Stored filters were
// parsed at registration (ParseStored reads them whatever that release's cost limits); one
// that no longer parses (written past the API) fails the job rather than be skipped.
func filterOf(ep Endpoint) (func(eventlog.Event) bool, error) {
	if ep.Filter == nil {
		return func(eventlog.Event) bool { return false }, nil
	}
	flt, err := filter.ParseStored(*ep.Filter)
	if err != nil {
		return nil, fmt.Errorf("the endpoint's filter does not parse: %w", err)
	}
	return func(ev eventlog.Event) bool {
		body, err := eventcatalog.ConvertEnvelope(ev.Body, ev.Type, ev.SchemaVersion, ep.SchemaVersion)
		if err != nil {
			return false // prepareReplay refuses it with the reason
		}
		doc, err := filter.Decode(body)
		return err != nil || !flt.Match(doc)
	}, nil
}
