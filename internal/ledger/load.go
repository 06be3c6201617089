package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Querier is what the checker needs of PostgreSQL: a *pgxpool.Pool or a *pgx.Conn.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// endpoint is one row of `endpoint` with its first disable time.
type endpoint struct {
	id, partner, status  string
	types                []string
	createdAt, updatedAt time.Time
	disabledAt           time.Time // first endpoint.disabled event, else updated_at if disabled; zero: never
}

// event is one committed outbox row.
type event struct {
	partner, typ string
	at           time.Time // occurred_at
	refused      bool      // cdc refused the row (outbox_dead_letter): it was never published
}

// delivery is one row of `delivery`.
type delivery struct {
	id, partner, state string
}

// attempt is one row of `delivery_attempt`.
type attempt struct {
	no        int
	trigger   string
	startedAt time.Time
	latency   time.Duration
	status    int    // 0: no response
	category  string // error category, empty on success
	matched   bool   // a receipt was matched to it
}

func (a attempt) succeeded() bool { return a.status >= 200 && a.status < 300 }

// loadEndpoints reads every endpoint and when it was first disabled.
func loadEndpoints(ctx context.Context, db Querier) (map[string]*endpoint, error) {
	rows, err := db.Query(ctx, `SELECT id, partner_id, status, event_types, created_at, updated_at FROM endpoint`)
	if err != nil {
		return nil, fmt.Errorf("ledger: endpoints: %w", err)
	}
	out := map[string]*endpoint{}
	for rows.Next() {
		ep := &endpoint{}
		if err := rows.Scan(&ep.id, &ep.partner, &ep.status, &ep.types, &ep.createdAt, &ep.updatedAt); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ledger: endpoints: %w", err)
		}
		if ep.status == "disabled" {
			ep.disabledAt = ep.updatedAt // unless an endpoint.disabled event says when
		}
		out[ep.id] = ep
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: endpoints: %w", err)
	}
	return out, loadDisables(ctx, db, out)
}

// loadDisables sets each endpoint's disabledAt to its first endpoint.disabled event, the one
// record of a disable every path (operator, 410, failure window) writes.
func loadDisables(ctx context.Context, db Querier, eps map[string]*endpoint) error {
	rows, err := db.Query(ctx, `SELECT partner_id, payload->>'endpoint_id', min(occurred_at) FROM outbox_event
		WHERE type = 'endpoint.disabled' GROUP BY 1, 2`)
	if err != nil {
		return fmt.Errorf("ledger: endpoint.disabled events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var partner string
		var id *string
		var at time.Time
		if err := rows.Scan(&partner, &id, &at); err != nil {
			return fmt.Errorf("ledger: endpoint.disabled events: %w", err)
		}
		if id == nil {
			continue
		}
		if ep := eps[*id]; ep != nil && ep.partner == partner {
			ep.disabledAt = at
		}
	}
	return rows.Err()
}

// loadEvents reads the committed outbox rows that occurred in [since, until) (zero: unbounded),
// calling each for every row, in no particular order.
func loadEvents(ctx context.Context, db Querier, since, until time.Time, each func(id string, ev event)) error {
	lo, hi := since, until
	if lo.IsZero() {
		lo = time.Unix(0, 0)
	}
	if hi.IsZero() {
		hi = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	rows, err := db.Query(ctx, `SELECT event_id, partner_id, type, occurred_at,
		EXISTS (SELECT 1 FROM outbox_dead_letter d WHERE d.event_id = o.event_id AND d.occurred_at = o.occurred_at)
		FROM outbox_event o WHERE occurred_at >= $1 AND occurred_at < $2`, lo, hi)
	if err != nil {
		return fmt.Errorf("ledger: outbox events: %w", err)
	}
	defer rows.Close()
	var id string
	var ev event
	for rows.Next() {
		if err := rows.Scan(&id, &ev.partner, &ev.typ, &ev.at, &ev.refused); err != nil {
			return fmt.Errorf("ledger: outbox events: %w", err)
		}
		each(id, ev)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ledger: outbox events: %w", err)
	}
	return nil
}

// knownEvents returns which of ids some outbox row cdc published has, whatever its time.
func knownEvents(ctx context.Context, db Querier, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.Query(ctx, `SELECT DISTINCT event_id FROM outbox_event o WHERE event_id = ANY($1)
		AND NOT EXISTS (SELECT 1 FROM outbox_dead_letter d WHERE d.event_id = o.event_id AND d.occurred_at = o.occurred_at)`, ids)
	if err != nil {
		return nil, fmt.Errorf("ledger: look up events: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("ledger: look up events: %w", err)
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// loadDeliveries calls each for every delivery row.
func loadDeliveries(ctx context.Context, db Querier, each func(eventID, endpointID string, d delivery)) error {
	rows, err := db.Query(ctx, `SELECT delivery_id, event_id, endpoint_id, partner_id, state FROM delivery`)
	if err != nil {
		return fmt.Errorf("ledger: deliveries: %w", err)
	}
	defer rows.Close()
	var eventID, endpointID string
	var d delivery
	for rows.Next() {
		if err := rows.Scan(&d.id, &eventID, &endpointID, &d.partner, &d.state); err != nil {
			return fmt.Errorf("ledger: deliveries: %w", err)
		}
		each(eventID, endpointID, d)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ledger: deliveries: %w", err)
	}
	return nil
}

// loadAttempts calls each for every attempt row.
func loadAttempts(ctx context.Context, db Querier, each func(deliveryID string, a attempt)) error {
	rows, err := db.Query(ctx, `SELECT delivery_id, attempt_no, trigger, started_at, coalesce(status, 0),
			coalesce(latency_ms, 0), coalesce(error_category, '') FROM delivery_attempt`)
	if err != nil {
		return fmt.Errorf("ledger: attempts: %w", err)
	}
	defer rows.Close()
	var id string
	var a attempt
	var latency int
	for rows.Next() {
		if err := rows.Scan(&id, &a.no, &a.trigger, &a.startedAt, &a.status, &latency, &a.category); err != nil {
			return fmt.Errorf("ledger: attempts: %w", err)
		}
		a.latency = time.Duration(latency) * time.Millisecond
		each(id, a)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ledger: attempts: %w", err)
	}
	return nil
}
