package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/eventtype"
)

// deliveryStates are the states of the delivery table.
var deliveryStates = []string{"pending", "retrying", "succeeded", "failed", "skipped"}

func validState(s string) bool {
	for _, v := range deliveryStates {
		if s == v {
			return true
		}
	}
	return false
}

// deliveryView is a delivery of the searchable history (R18). A latency is in microseconds
// (latency_us) beside whole milliseconds (latency_ms); the microseconds are null where the
// history has only milliseconds: attempts recorded before migration 0022.
type deliveryView struct {
	DeliveryID        string     `json:"delivery_id"`
	EventID           string     `json:"event_id"`
	EndpointID        string     `json:"endpoint_id"`
	PartnerID         string     `json:"partner_id"`
	EventType         string     `json:"event_type"`
	State             string     `json:"state"`
	AttemptCount      int        `json:"attempt_count"`
	NextAttemptAt     *timestamp `json:"next_attempt_at"`
	LastStatus        *int32     `json:"last_status"`
	LastLatencyMS     *int32     `json:"last_latency_ms"`
	LastLatencyUS     *int64     `json:"last_latency_us"`
	LastErrorCategory *string    `json:"last_error_category"`
	CreatedAt         timestamp  `json:"created_at"`
	UpdatedAt         timestamp  `json:"updated_at"`
}

type attemptView struct {
	AttemptNo       int        `json:"attempt_no"`
	Trigger         string     `json:"trigger"`
	StartedAt       timestamp  `json:"started_at"`
	Status          *int32     `json:"status"`
	LatencyMS       *int32     `json:"latency_ms"`
	LatencyUS       *int64     `json:"latency_us"`
	ErrorCategory   *string    `json:"error_category"`
	ResponseExcerpt string     `json:"response_excerpt"`
	NextAttemptAt   *timestamp `json:"next_attempt_at"`
	// OrderBroken: this attempt's final failure broke a strict ordered endpoint's order
	// (design.md section 7).
	OrderBroken bool `json:"order_broken"`
}

type deliveryDetail struct {
	deliveryView
	Attempts []attemptView `json:"attempts"`
}

const deliveryColumns = `delivery_id, event_id, endpoint_id, partner_id, event_type, state, attempt_count,
	` + nextAttemptColumn + `, last_status, last_latency_ms, last_latency_us, last_error_category, created_at, updated_at`

func scanDelivery(row pgx.Row) (deliveryView, error) {
	var (
		v     deliveryView
		count int32
	)
	err := row.Scan(&v.DeliveryID, &v.EventID, &v.EndpointID, &v.PartnerID, &v.EventType, &v.State, &count,
		&v.NextAttemptAt, &v.LastStatus, &v.LastLatencyMS, &v.LastLatencyUS, &v.LastErrorCategory, &v.CreatedAt, &v.UpdatedAt)
	v.AttemptCount = int(count)
	return v, err
}

func loadDelivery(ctx context.Context, q querier, pid, did string) (deliveryView, error) {
	if !validDeliveryID(did) {
		return deliveryView{}, notFound("delivery")
	}
	v, err := scanDelivery(q.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM delivery WHERE delivery_id = $1 AND partner_id = $2`, did, pid))
	if errors.Is(err, pgx.ErrNoRows) {
		return v, notFound("delivery")
	}
	return v, err
}

// typeFilter is a list of event types and "prefix.*" wildcards as SQL arguments: exact types
// and LIKE patterns. A "*" matches everything, so it clears the filter.
type typeFilter struct {
	exact, like []string
}

func parseTypeFilter(raw string) (typeFilter, *apiError) {
	var f typeFilter
	if raw == "" {
		return f, nil
	}
	var p problems
	types := p.eventTypes(strings.Split(raw, ","), false)
	if len(p) > 0 {
		return f, invalidField("type", "type: a comma-separated list of event types like \"api_key.created\" or wildcards like \"api_key.*\"")
	}
	for _, t := range types {
		if t == eventtype.All {
			return typeFilter{}, nil
		}
		if prefix, ok := eventtype.Wildcard(t); ok {
			f.like = append(f.like, strings.ReplaceAll(prefix, "_", `\_`)+".%")
			continue
		}
		f.exact = append(f.exact, t)
	}
	return f, nil
}

func (f typeFilter) empty() bool { return len(f.exact) == 0 && len(f.like) == 0 }

type deliveryCursor struct {
	CreatedAt time.Time `json:"t"`
	ID        string    `json:"id"`
}

// historyWindow is what both delivery listings (an endpoint's, the partner's search) read from
// the query beside their own filters: the creation time (since inclusive, until exclusive),
// the event types, and the page's cursor (of cursorKind, so one listing's cursor is refused by
// the other).
type historyWindow struct {
	since, until time.Time
	types        typeFilter
	after        deliveryCursor
}

func parseHistoryWindow(q url.Values, cursorKind string) (historyWindow, *apiError) {
	var w historyWindow
	var e *apiError
	if w.since, e = queryTime(q, "since"); e != nil {
		return w, e
	}
	if w.until, e = queryTime(q, "until"); e != nil {
		return w, e
	}
	if w.types, e = parseTypeFilter(q.Get("type")); e != nil {
		return w, e
	}
	return w, queryCursor(q, cursorKind, &w.after, func() bool { return validDeliveryID(w.after.ID) })
}

// listDeliveries is the endpoint's history, newest first, filtered by state, creation time
// (since inclusive, until exclusive) and event type.
func (a *API) listDeliveries(w http.ResponseWriter, r *http.Request, _ caller) error {
	pid, eid := r.PathValue("pid"), r.PathValue("eid")
	q := r.URL.Query()
	limit, e := pageLimit(q)
	if e != nil {
		return e
	}
	state := q.Get("state")
	if state != "" && !validState(state) {
		return invalidField("state", "state must be one of %s", strings.Join(deliveryStates, ", "))
	}
	win, e := parseHistoryWindow(q, "deliveries")
	if e != nil {
		return e
	}
	since, until, types, after := win.since, win.until, win.types, win.after
	if _, err := loadEndpoint(r.Context(), a.pool, pid, eid, false); err != nil {
		return err
	}
	out, err := queryPage(r.Context(), a.pool, limit, scanDelivery, func(last deliveryView) string {
		return encodeCursor("deliveries", deliveryCursor{CreatedAt: last.CreatedAt.Time, ID: last.DeliveryID})
	}, `SELECT `+deliveryColumns+` FROM delivery
		WHERE endpoint_id = $1 AND partner_id = $2
		  AND ($3 = '' OR state = $3)
		  AND ($4::timestamptz IS NULL OR created_at >= $4)
		  AND ($5::timestamptz IS NULL OR created_at < $5)
		  AND ($6 OR event_type = ANY($7::text[]) OR event_type LIKE ANY($8::text[]))
		  AND ($9 = '' OR (created_at, delivery_id) < ($10, $9))
		ORDER BY created_at DESC, delivery_id DESC LIMIT $11`,
		eid, pid, state, nullTime(since), nullTime(until), types.empty(), types.exact, types.like,
		after.ID, after.CreatedAt, limit+1)
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, out)
	return nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// getDelivery is one delivery with every attempt, oldest first.
func (a *API) getDelivery(w http.ResponseWriter, r *http.Request, _ caller) error {
	d, err := loadDelivery(r.Context(), a.pool, r.PathValue("pid"), r.PathValue("did"))
	if err != nil {
		return err
	}
	rows, err := a.pool.Query(r.Context(), `SELECT attempt_no, trigger, started_at, status, latency_ms, latency_us, error_category,
		response_excerpt, next_attempt_at, order_broken FROM delivery_attempt WHERE delivery_id = $1 ORDER BY attempt_no, started_at`, d.DeliveryID)
	if err != nil {
		return err
	}
	attempts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (attemptView, error) {
		var (
			v attemptView
			n int32
		)
		err := row.Scan(&n, &v.Trigger, &v.StartedAt, &v.Status, &v.LatencyMS, &v.LatencyUS, &v.ErrorCategory, &v.ResponseExcerpt,
			&v.NextAttemptAt, &v.OrderBroken)
		v.AttemptNo = int(n)
		return v, err
	})
	if err != nil {
		return err
	}
	if attempts == nil {
		attempts = []attemptView{}
	}
	respond(w, http.StatusOK, deliveryDetail{deliveryView: d, Attempts: attempts})
	return nil
}
