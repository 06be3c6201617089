package recorder

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// Pending rows: a delivery is in the history from the moment fanout emits it, not only from its
// first attempt (design.md section 4). A delivery that waits (an open circuit, a receiver that is down, a
// busy endpoint) is listed as pending, and "did endpoint E get event V?" has an answer before
// the first request is made.
//
// The recorder reads the deliveries topic under a group of its own (<group>.pending) and
// writes a pending row for each delivery fanout emitted, once the record is PendingDelay old.
// Most deliveries are attempted within that delay and already have their row from the attempt,
// so their pending insert finds the row and writes nothing: the common case costs PostgreSQL
// one index probe per delivery, not a row written and then rewritten. The insert never changes
// a row that exists, so it cannot move a delivery's state back, whatever order the two streams
// are read in.

// pendingRow is the pending row of one delivery.
type pendingRow struct {
	id, event, endpoint, partner, eventType string
	created                                 time.Time
}

// pendingOf reads a deliveries record: the row of a delivery fanout emitted, or why it gets
// none. Only first requests get one (attempt 1, not back from a retry tier): a retry's or a
// deferral's record comes back after the delivery's first record, whose row is already there. A record
// older than stale (zero: none is) is skipped, since its delivery's history may have expired
// meanwhile and must not come back as pending. A record that is no valid delivery
// (records.Delivery.Validate) gets none: the sender dead-letters it.
func pendingOf(rec *kgo.Record, stale time.Time) (row pendingRow, skip string) {
	d, err := records.UnmarshalDelivery(rec.Value)
	switch {
	case err != nil:
		return row, "invalid"
	case d.AttemptNo != 1 || backFromATier(rec):
		return row, "" // not a first request: skipped silently
	case !rec.Timestamp.After(stale):
		return row, "stale"
	}
	if d.Validate() != nil {
		return row, "invalid"
	}
	created := d.CreatedAt
	if created.IsZero() {
		created = rec.Timestamp
	}
	return pendingRow{d.DeliveryID, d.EventID, d.EndpointID, d.PartnerID, d.EventType, created}, ""
}

// recordPending writes pending rows until ctx ends.
func (r *Recorder) recordPending(ctx context.Context) error {
	_, pending := r.Groups()
	return r.consume(ctx, pending, r.names.Deliveries, func(_ *kgo.Client, recs []*kgo.Record) bool {
		return r.storePending(ctx, recs)
	})
}

// storePending waits until the batch's newest record is PendingDelay old, then writes the
// rows of the batch, trying again with growing waits until they are stored. It reports false
// only when ctx ends first.
func (r *Recorder) storePending(ctx context.Context, recs []*kgo.Record) bool {
	var stale time.Time
	if r.cfg.HistoryRetention > 0 {
		// An hour's margin over the retention: a row is expired only when its last change is
		// older than the retention, and that change came after the record.
		stale = time.Now().Add(-r.cfg.HistoryRetention + time.Hour)
	}
	var rows []pendingRow
	newest := time.Time{}
	for _, rec := range recs {
		row, skip := pendingOf(rec, stale)
		switch {
		case skip != "":
			r.metrics.pendingSkipped.WithLabelValues(skip).Inc()
			if skip == "invalid" {
				r.log.Warn("deliveries record not readable; no pending row", "partition", rec.Partition, "offset", rec.Offset)
			}
		case row.id != "":
			rows = append(rows, row)
			newest = maxTime(newest, rec.Timestamp)
		}
	}
	if len(rows) == 0 {
		return true
	}
	if wait := time.Until(newest.Add(r.cfg.PendingDelay)); wait > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
	return r.untilStored(ctx, "pending rows not stored", len(rows), func() error {
		n, bad, err := r.writePending(ctx, rows)
		if err == nil {
			r.metrics.pendingRows.Add(float64(n))
			if bad > 0 {
				r.metrics.pendingSkipped.WithLabelValues("unstorable").Add(float64(bad))
			}
		}
		return err
	})
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// writePending inserts the rows that do not exist yet, for endpoints of the partner they name
// (tenancy is checked again here, R13: a delivery naming another partner's endpoint gets no
// row). It returns how many it wrote. When PostgreSQL refuses the statement for what a row
// holds, the rows are written one by one and those it refuses are counted in bad: one row never
// holds back the others.
func (r *Recorder) writePending(ctx context.Context, rows []pendingRow) (written int, bad int, err error) {
	// The lock order (recorder.go): rows by delivery_id, strings by their bytes, as the
	// attempts' writer takes them, so that no two writers inserting the same rows deadlock.
	slices.SortFunc(rows, func(a, b pendingRow) int { return strings.Compare(a.id, b.id) })
	n, err := insertPending(ctx, r.pool, rows)
	if err == nil || !refusedForData(err) {
		return n, 0, err
	}
	for _, row := range rows {
		n, err := insertPending(ctx, r.pool, []pendingRow{row})
		switch {
		case err == nil:
			written += n
		case refusedForData(err):
			bad++
			r.log.Warn("pending row refused by PostgreSQL", "delivery", row.id, "err", err)
		default:
			return written, bad, err
		}
	}
	return written, bad, nil
}

// insertPending inserts the rows in one statement and returns how many it wrote.
func insertPending(ctx context.Context, pool *pgxpool.Pool, rows []pendingRow) (int, error) {
	var c struct {
		id, event, endpoint, partner, eventType []string
		created                                 []time.Time
	}
	for _, row := range rows {
		c.id, c.event, c.endpoint = append(c.id, row.id), append(c.event, row.event), append(c.endpoint, row.endpoint)
		c.partner, c.eventType, c.created = append(c.partner, row.partner), append(c.eventType, row.eventType), append(c.created, row.created)
	}
	tag, err := pool.Exec(ctx, `INSERT INTO delivery
		(delivery_id, event_id, endpoint_id, partner_id, event_type, state, created_at, updated_at)
		SELECT u.id, u.event, u.endpoint, u.partner, u.event_type, 'pending', u.created, now()
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
			WITH ORDINALITY AS u(id, event, endpoint, partner, event_type, created, n)
		JOIN endpoint e ON e.id = u.endpoint AND e.partner_id = u.partner
		ORDER BY u.n
		ON CONFLICT DO NOTHING`, c.id, c.event, c.endpoint, c.partner, c.eventType, c.created)
	if err != nil {
		return 0, fmt.Errorf("recorder: pending rows: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// backFromATier reports a record a retry tier released (a retry or a deferral that came back),
// whose delivery's first record came before it.
func backFromATier(rec *kgo.Record) bool {
	for _, h := range rec.Headers {
		if h.Key == records.HeaderReleasedAt {
			return true
		}
	}
	return false
}
