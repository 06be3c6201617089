package console

import (
	"net/http"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/eventtype"
)

// The event catalog page: every type of GET /v1/event-types with its schema and example, and
// for a partner the endpoints subscribed to it. Which endpoint a type reaches is the
// subscription rule of package eventtype (an exact type, a "prefix.*" wildcard, "*"), the one
// fanout applies; an endpoint's payload filter may still pass over some events of the type, so
// the page says which endpoints filter.

type catalogType struct {
	adminclient.EventType
	Endpoints []adminclient.Endpoint // the partner's endpoints subscribed to the type
	// OnRequest: the type is sent to one endpoint when its owner asks (webhook.test), whatever
	// the endpoint's subscription.
	OnRequest bool
}

// testEventType is the catalog's test event: the API sends it to the one endpoint it is asked
// for, with trigger test, whatever that endpoint subscribes to.
const testEventType = "webhook.test"

type catalogView struct {
	PID       string // empty: the operator's catalog, without subscriptions
	Types     []catalogType
	Envelope  any
	Truncated bool // the partner has more endpoints than the page read
}

// eventTypes is the catalog for whoever is signed in: a partner's own page, or the catalog
// alone for the operator (who opens a partner's from the partner's pages).
func (c *Console) eventTypes(w http.ResponseWriter, r *http.Request, ss *session) error {
	if !ss.operator {
		http.Redirect(w, r, pathOf("partners", ss.partnerID, "event-types"), http.StatusSeeOther)
		return nil
	}
	return c.catalog(w, r, ss, "")
}

func (c *Console) partnerEventTypes(w http.ResponseWriter, r *http.Request, ss *session) error {
	return c.catalog(w, r, ss, r.PathValue("pid"))
}

func (c *Console) catalog(w http.ResponseWriter, r *http.Request, ss *session, pid string) error {
	api := c.api(ss)
	res, err := api.ListEventTypesWithResponse(r.Context())
	if err := check(res, err); err != nil {
		return err
	}
	v := catalogView{PID: pid}
	if res.JSON200.EnvelopeSchema != nil {
		v.Envelope = *res.JSON200.EnvelopeSchema
	}
	var eps []adminclient.Endpoint
	if pid != "" {
		limit := operatorScan
		list, err := api.ListEndpointsWithResponse(r.Context(), pid, &adminclient.ListEndpointsParams{Limit: &limit})
		if err := check(list, err); err != nil {
			return err
		}
		eps, v.Truncated = list.JSON200.Data, list.JSON200.HasMore
	}
	for _, t := range res.JSON200.Data {
		ct := catalogType{EventType: t, OnRequest: t.Type == testEventType}
		for _, e := range eps {
			if ct.OnRequest {
				break
			}
			if eventtype.MatchesAny(e.EventTypes, t.Type) {
				ct.Endpoints = append(ct.Endpoints, e)
			}
		}
		v.Types = append(v.Types, ct)
	}
	return c.render(w, r, ss, http.StatusOK, "event_types.html", "Event types", v)
}
