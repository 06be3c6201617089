package retrytopics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/internal/periodic"
	"github.com/hookstream/hookstream/outbox"
)

// FailureWindowConfig configures the failure window (R23).
type FailureWindowConfig struct {
	// WarnAfter is how long an endpoint fails with no success before endpoint.failing is sent.
	WarnAfter time.Duration
	// DisableAfter is how long it fails before it is disabled with endpoint.disabled.
	DisableAfter time.Duration
	// Interval is how often endpoints are checked.
	Interval   time.Duration
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// DefaultFailureWindowConfig returns the documented window: warned after 24 hours, disabled
// after 5 days, checked every minute.
func DefaultFailureWindowConfig() FailureWindowConfig {
	return FailureWindowConfig{WarnAfter: 24 * time.Hour, DisableAfter: 5 * 24 * time.Hour, Interval: time.Minute, Logger: slog.Default()}
}

// Validate reports a window that cannot work.
func (c FailureWindowConfig) Validate() error {
	switch {
	case c.WarnAfter <= 0 || c.DisableAfter <= 0 || c.Interval <= 0:
		return errors.New("retrytopics: failure window durations must be positive")
	case c.WarnAfter >= c.DisableAfter:
		return fmt.Errorf("retrytopics: failure window warns after %s, not before disabling after %s", c.WarnAfter, c.DisableAfter)
	case c.Logger == nil:
		return errors.New("retrytopics: failure window logger is nil")
	}
	return nil
}

// FailureWindow warns about and then disables endpoints that keep failing. The recorder keeps
// endpoint.failing_since (set at the first failure after a success, cleared by a success); this
// reads it. Both operational events go through the outbox in the same transaction as the change,
// so they are ordinary events the partner's other endpoints can subscribe to.
type FailureWindow struct {
	cfg      FailureWindowConfig
	pool     *pgxpool.Pool
	log      *slog.Logger
	warned   prometheus.Counter
	disabled prometheus.Counter
}

// NewFailureWindow returns a FailureWindow over pool.
func NewFailureWindow(cfg FailureWindowConfig, pool *pgxpool.Pool) (*FailureWindow, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	set := &metrics.Set{Registerer: cfg.Registerer, Subsystem: "retry"}
	w := &FailureWindow{cfg: cfg, pool: pool, log: cfg.Logger.With("component", "failure-window"),
		warned:   set.Counter("endpoints_warned_total", "endpoint.failing warnings sent."),
		disabled: set.Counter("endpoints_disabled_total", "Endpoints disabled after failing for the whole failure window."),
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("retrytopics: failure window metrics: %w", err)
	}
	return w, nil
}

// Run checks endpoints every Interval until ctx ends.
func (w *FailureWindow) Run(ctx context.Context) error {
	periodic.NowAndEvery(ctx, w.cfg.Interval, func(ctx context.Context) {
		if err := w.Check(ctx, time.Now()); err != nil && ctx.Err() == nil {
			w.log.Error("failure window check", "err", err)
		}
	})
	return nil
}

// Check sends the due warnings and disables the endpoints past the window, as of now.
func (w *FailureWindow) Check(ctx context.Context, now time.Time) error {
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		ids, err := lockFailing(ctx, tx, now.Add(-w.cfg.WarnAfter))
		if err != nil || len(ids) == 0 {
			return err
		}
		warned, err := w.warn(ctx, tx, ids, now)
		if err != nil {
			return err
		}
		// An endpoint found past the whole window at once (the checker was down) is warned above
		// and disabled here, in the same transaction: its owner still hears both.
		disabled, err := w.disable(ctx, tx, ids, now)
		if err != nil {
			return err
		}
		w.warned.Add(float64(warned))
		w.disabled.Add(float64(disabled))
		return nil
	})
}

// lockFailing locks every active endpoint failing since before cutoff, the rows both the warning
// and the disabling may write, and returns their ids. The recorder writes the same rows
// (failing_since, 410 disables), so they are locked in its lock order (design.md section 4): all
// at once, before any is written, by id in byte order (COLLATE "C", Go's order, which the
// recorder sorts by). An UPDATE would lock them in the order it reads them, which a recorder
// locking two of them the other way round would deadlock against. The statements after it touch
// only these rows: an endpoint that starts to qualify meanwhile waits for the next check.
func lockFailing(ctx context.Context, tx pgx.Tx, cutoff time.Time) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM endpoint WHERE status = 'active' AND failing_since <= $1
		ORDER BY id COLLATE "C" FOR NO KEY UPDATE`, cutoff)
	if err != nil {
		return nil, fmt.Errorf("retrytopics: failing endpoints: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("retrytopics: failing endpoints: %w", err)
	}
	return ids, nil
}

// warn sends endpoint.failing once per failing period for each of the locked endpoints (ids)
// failing for WarnAfter, in the order of their ids.
func (w *FailureWindow) warn(ctx context.Context, tx pgx.Tx, ids []string, now time.Time) (int, error) {
	hits, err := failing(ctx, tx, `UPDATE endpoint SET failing_warned_at = $1
		WHERE id = ANY($3) AND status = 'active' AND failing_since <= $2
		  AND (failing_warned_at IS NULL OR failing_warned_at < failing_since)
		RETURNING id, partner_id, failing_since`, now, now.Add(-w.cfg.WarnAfter), ids)
	if err != nil {
		return 0, fmt.Errorf("retrytopics: endpoint.failing: %w", err)
	}
	slices.SortFunc(hits, func(a, b failingEndpoint) int { return strings.Compare(a.id, b.id) })
	for _, h := range hits {
		if h.partner == outbox.OperatorPartnerID {
			// endpoint.failing is a partner's event: the operator's own endpoints are warned of
			// in the log only (design.md section 8, "Operator events").
			w.log.Warn("operator endpoint failing", "endpoint_id", h.id, "failing_since", h.since)
			continue
		}
		b, _ := json.Marshal(map[string]any{"endpoint_id": h.id, "failing_since": h.since.UTC()})
		if _, err := outbox.Append(ctx, tx, outbox.Event{PartnerID: h.partner, Type: "endpoint.failing",
			Subject: outbox.Subject{Type: "endpoint", ID: h.id}, Data: b}); err != nil {
			return 0, err
		}
		w.log.Warn("endpoint.failing", "endpoint_id", h.id, "partner_id", h.partner, "failing_since", h.since)
	}
	return len(hits), nil
}

// disable disables each of the locked endpoints (ids) failing for DisableAfter, through
// endpoints.Disable, in the order of their ids.
func (w *FailureWindow) disable(ctx context.Context, tx pgx.Tx, ids []string, now time.Time) (int, error) {
	hits, err := failing(ctx, tx, `SELECT id, partner_id, failing_since FROM endpoint
		WHERE id = ANY($2) AND status = 'active' AND failing_since <= $1
		ORDER BY id COLLATE "C"`, now.Add(-w.cfg.DisableAfter), ids)
	if err != nil {
		return 0, fmt.Errorf("retrytopics: endpoint.disabled: %w", err)
	}
	reason := fmt.Sprintf("failing with no success for %s", w.cfg.DisableAfter)
	disabled := 0
	for _, h := range hits {
		changed, err := endpoints.Disable(ctx, tx, endpoints.Disabling{PartnerID: h.partner, EndpointID: h.id, Reason: reason, At: now})
		if err != nil {
			return 0, fmt.Errorf("retrytopics: %w", err)
		}
		if changed {
			disabled++
			w.log.Warn(endpoints.DisabledEventType, "endpoint_id", h.id, "partner_id", h.partner, "failing_since", h.since)
		}
	}
	return disabled, nil
}

// failingEndpoint is an endpoint the window acts on.
type failingEndpoint struct {
	id, partner string
	since       time.Time
}

// failing runs a statement returning id, partner_id, failing_since.
func failing(ctx context.Context, tx pgx.Tx, sql string, args ...any) ([]failingEndpoint, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	var hits []failingEndpoint
	var h failingEndpoint
	if _, err := pgx.ForEachRow(rows, []any{&h.id, &h.partner, &h.since}, func() error { hits = append(hits, h); return nil }); err != nil {
		return nil, err
	}
	return hits, nil
}
