package recorder

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/periodic"
)

// historyBatch bounds one expiry statement, so that no transaction holds many row locks or
// writes a large WAL burst at once.
const historyBatch = 5000

// ExpireHistory deletes the finished deliveries (succeeded, failed, skipped) last changed before
// before, with their attempts, in batches, and returns how many it deleted (R33). Deliveries still
// pending or retrying are live and never expire, unless their endpoint was deleted: nothing
// will ever attempt them. Rows locked by the recorder meanwhile are left for the next sweep; a
// late attempt of an expired delivery records it anew.
func ExpireHistory(ctx context.Context, pool *pgxpool.Pool, before time.Time) (int64, error) {
	var total int64
	for {
		tag, err := pool.Exec(ctx, `
			DELETE FROM delivery WHERE delivery_id IN (
				SELECT delivery_id FROM delivery
				WHERE updated_at < $1 AND (state IN ('succeeded', 'failed', 'skipped')
					OR NOT EXISTS (SELECT 1 FROM endpoint e WHERE e.id = delivery.endpoint_id))
				LIMIT $2 FOR UPDATE SKIP LOCKED)`, before, historyBatch)
		if err != nil {
			return total, fmt.Errorf("recorder: expire history before %s: %w", before.Format(time.RFC3339), err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < historyBatch {
			return total, nil
		}
	}
}

// sweepHistory expires history older than the retention now and then every interval, until
// ctx ends. A failed sweep is logged and tried again at the next interval.
func (r *Recorder) sweepHistory(ctx context.Context) {
	periodic.NowAndEvery(ctx, r.cfg.HistorySweepInterval, func(ctx context.Context) {
		n, err := ExpireHistory(ctx, r.pool, time.Now().Add(-r.cfg.HistoryRetention))
		switch {
		case ctx.Err() != nil:
		case err != nil:
			r.metrics.expiryErr.Inc()
			r.log.Warn("history expiry failed; trying again at the next sweep", "err", err)
		case n > 0:
			r.metrics.expired.Add(float64(n))
			r.log.Info("delivery history expired", "deliveries", n, "retention", r.cfg.HistoryRetention)
		}
	})
}
