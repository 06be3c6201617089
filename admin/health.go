package admin

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// endpointHealth is what the endpoint resource shows of its deliveries' health (design.md section 10). The
// circuit breaker lives in the sender, which reaches no database: every attempt record states
// the circuit after it, and the recorder keeps the newest statement in endpoint_health, so the
// circuit shown is the one the newest recorded attempt left.
type endpointHealth struct {
	// Circuit is closed (deliveries flow), open (new work is deferred until NextProbeAt,
	// without counting attempts) or half_open (the next delivery is the probe whose outcome
	// closes or reopens it); unknown before the first recorded attempt.
	Circuit       string     `json:"circuit"`
	NextProbeAt   *timestamp `json:"next_probe_at"`
	LastSuccessAt *timestamp `json:"last_success_at"`
	LastAttemptAt *timestamp `json:"last_attempt_at"`
	FailingSince  *timestamp `json:"failing_since"`
	// Order is an ordered endpoint's hold as its newest attempt stated it (design.md section 7);
	// null for an endpoint whose attempts never stated one (not ordered, or none recorded).
	Order *orderHealth `json:"order"`
}

// orderHealth is an ordered endpoint's hold: the records waiting behind its head in the sender
// and, while a head is held, since when and for how long as of the read.
type orderHealth struct {
	Held           int        `json:"held"`
	HeadSince      *timestamp `json:"head_since"`
	HeadAgeSeconds *float64   `json:"head_age_seconds"`
	StatedAt       timestamp  `json:"stated_at"`
}

// circuitUnknown is the circuit of an endpoint with no recorded attempt.
const circuitUnknown = "unknown"

// circuitShown is the circuit as of now: an open circuit whose probe time has passed lets the
// next delivery through as its probe, which is half open.
func circuitShown(state *string, probeAt *time.Time, now time.Time) (string, *time.Time) {
	switch {
	case state == nil:
		return circuitUnknown, nil
	case *state == "open" && probeAt != nil && !probeAt.After(now):
		return "half_open", nil
	case *state == "open":
		return "open", probeAt
	}
	return *state, nil
}

// attachHealth fills the Health of eps from endpoint_health, and their failing_since with it:
// the recorder writes both in one transaction, so they are read in one statement (one snapshot).
// Read apart, a recorder commit between the two reads showed an open circuit with no
// failing_since.
func attachHealth(ctx context.Context, q querier, eps []*endpointView) error {
	byID := map[string]*endpointView{}
	ids := make([]string, 0, len(eps))
	for _, e := range eps {
		e.Health = endpointHealth{Circuit: circuitUnknown, FailingSince: e.FailingSince}
		byID[e.ID] = e
		ids = append(ids, e.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := q.Query(ctx, `SELECT e.id, e.failing_since, h.circuit_state, h.circuit_probe_at, h.last_success_at,
			h.last_attempt_at, h.order_held, h.order_head_since, h.order_at, now()
		FROM endpoint e LEFT JOIN endpoint_health h ON h.endpoint_id = e.id WHERE e.id = ANY($1)`, ids)
	if err != nil {
		return err
	}
	var (
		id          string
		failing     *time.Time
		state       *string
		probe, succ *time.Time
		last        *time.Time
		held        *int32
		head, at    *time.Time
		now         time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &failing, &state, &probe, &succ, &last, &held, &head, &at, &now}, func() error {
		if e := byID[id]; e != nil {
			e.FailingSince, e.Health.FailingSince = stampPtr(failing), stampPtr(failing)
			circuit, next := circuitShown(state, probe, now)
			e.Health.Circuit, e.Health.NextProbeAt = circuit, stampPtr(next)
			e.Health.LastSuccessAt, e.Health.LastAttemptAt = stampPtr(succ), stampPtr(last)
			if held != nil && at != nil {
				o := &orderHealth{Held: int(*held), HeadSince: stampPtr(head), StatedAt: stamp(*at)}
				if head != nil {
					age := max(now.Sub(*head), 0).Seconds()
					o.HeadAgeSeconds = &age
				}
				e.Health.Order = o
			}
		}
		return nil
	})
	return err
}

// nextAttemptColumn is a delivery's next_attempt_at as it will be, in every state: none once it
// is finished, or while its endpoint is disabled or deleted (nothing will be attempted); at
// least the next probe while its endpoint's circuit is open (the sender defers it until then);
// for a pending delivery with no time of its own, now-due since its creation. Used with FROM
// delivery.
const nextAttemptColumn = `CASE WHEN delivery.state NOT IN ('pending', 'retrying') THEN NULL ELSE (
	SELECT CASE WHEN e.status <> 'active' THEN NULL
		WHEN h.circuit_state = 'open' THEN GREATEST(coalesce(delivery.next_attempt_at, delivery.created_at), h.circuit_probe_at)
		ELSE coalesce(delivery.next_attempt_at, delivery.created_at) END
	FROM endpoint e LEFT JOIN endpoint_health h ON h.endpoint_id = e.id
	WHERE e.id = delivery.endpoint_id AND e.partner_id = delivery.partner_id) END`
