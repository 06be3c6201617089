package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// Operator events (design.md section 8, "Operator events"): the operator subscribes endpoints
// of its own to the operator.* event types. They are endpoints of the reserved partner
// outbox.OperatorPartnerID, managed under /v1/operator/ with the operator token only, by the
// same handlers as a partner's endpoints (so the same checks, egress guard, secrets and
// history), and delivered by the same pipeline. No partner key reaches them: a key belongs to
// a real partner, whose id can never be the reserved one, and these routes need the operator.

// operatorRoutes are the operator's own endpoints, deliveries and catalog.
func (a *API) operatorRoutes() []route {
	const (
		root     = "/v1/operator"
		endpoint = root + "/endpoints/{eid}"
	)
	op := func(method, path string, h handlerFunc) route {
		return route{method, path, operator, asOperatorPartner(h)}
	}
	return []route{
		{"GET", root + "/event-types", operator, a.listOperatorEventTypes},
		op("POST", root+"/endpoints", a.createEndpoint),
		op("GET", root+"/endpoints", a.listEndpoints),
		op("GET", endpoint, a.getEndpoint),
		op("PATCH", endpoint, a.patchEndpoint),
		op("DELETE", endpoint, a.deleteEndpoint),
		op("POST", endpoint+"/disable", a.disableEndpoint),
		op("POST", endpoint+"/enable", a.enableEndpoint),
		op("POST", endpoint+"/secret/rotate", a.rotateSecret),
		op("POST", endpoint+"/secret/end-rotation", a.endRotation),
		op("POST", endpoint+"/test", a.sendTestEvent),
		op("GET", endpoint+"/deliveries", a.listDeliveries),
		op("GET", root+"/deliveries", a.searchDeliveries),
		op("GET", root+"/deliveries/{did}", a.getDelivery),
		op("POST", root+"/deliveries/{did}/replay", a.replayDelivery),
	}
}

// asOperatorPartner runs a partner route's handler for the operator's reserved partner.
func asOperatorPartner(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		r.SetPathValue("pid", outbox.OperatorPartnerID)
		return h(w, r, c)
	}
}

// listOperatorEventTypes publishes the operator's catalog, in the shape of GET /v1/event-types.
func (a *API) listOperatorEventTypes(w http.ResponseWriter, _ *http.Request, _ caller) error {
	respond(w, http.StatusOK, catalogPage{Data: eventcatalog.OperatorTypes(), Envelope: eventcatalog.EnvelopeSchema()})
	return nil
}

// quotaTold remembers when this process last told the operator of each partner's refusals by
// each quota: a partner that keeps knocking raises one operator.quota.refused a minute, while
// hookstream_admin_quota_refusals_total counts every refusal.
type quotaTold struct {
	mu  sync.Mutex
	at  map[quotaKey]time.Time
	now func() time.Time // time.Now; tests move it
}

type quotaKey struct{ partner, quota string }

// quotaToldEvery is how often one partner's refusals by one quota are told, at most.
const quotaToldEvery = time.Minute

// due reports whether k's refusal is to be told now, and if so counts it as told. Entries older
// than the interval are forgotten, so memory holds the partners refused in the last minute.
func (q *quotaTold) due(k quotaKey) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	if last, ok := q.at[k]; ok && now.Sub(last) < quotaToldEvery {
		return false
	}
	for old, at := range q.at {
		if now.Sub(at) >= quotaToldEvery {
			delete(q.at, old)
		}
	}
	q.at[k] = now
	return true
}

// forget undoes due when the event could not be written, so the next refusal tries again.
func (q *quotaTold) forget(k quotaKey) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.at, k)
}

// quotaRefused is the data of an operator.quota.refused event.
type quotaRefused struct {
	PartnerID string `json:"partner_id"`
	Quota     string `json:"quota"`
	Limit     int    `json:"limit"`
	Usage     int    `json:"usage"`
	Route     string `json:"route"`
}

// tellOperatorOfQuota writes operator.quota.refused when ae refused a partner's request for a
// quota. The refusal changed nothing in PostgreSQL, so the event is its own transaction, written
// before the answer goes out; a failure to write it is logged and the answer is the same.
func (a *API) tellOperatorOfQuota(r *http.Request, pattern string, ae *apiError) {
	pid := r.PathValue("pid")
	if ae == nil || ae.Quota == nil || pid == "" {
		return
	}
	k := quotaKey{partner: pid, quota: ae.Quota.Name}
	if !a.quotaTold.due(k) {
		return
	}
	b, err := json.Marshal(quotaRefused{PartnerID: pid, Quota: ae.Quota.Name, Limit: ae.Quota.Limit, Usage: ae.Quota.Usage, Route: pattern})
	if err == nil {
		// The request's context may end with the answer; the event is bounded on its own.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		defer cancel()
		err = pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
			_, err := outbox.Append(ctx, tx, outbox.Event{PartnerID: outbox.OperatorPartnerID, Type: eventcatalog.OperatorQuotaRefused,
				Subject: outbox.Subject{Type: "partner", ID: pid}, Data: b, CorrelationID: requestID(r.Context())})
			return err
		})
	}
	if err != nil {
		a.quotaTold.forget(k)
		a.log.Error("operator event of a quota refusal not written", "partner_id", pid, "quota", ae.Quota.Name, "err", err)
	}
}
