package console

import (
	"net/http"
	"sort"

	"github.com/hookstream/hookstream/adminclient"
)

// The operator pages call operator-only routes of the API; with a partner's key the API answers
// 403 and so does the page: the console decides nothing about scope itself.

const operatorScan = 1000 // partners, and endpoints per partner, read by the failing-endpoints page

type partnersView struct {
	Partners []adminclient.Partner
	Next     string
}

func (c *Console) operatorPartners(w http.ResponseWriter, r *http.Request, ss *session) error {
	limit := 200
	params := &adminclient.ListPartnersParams{Limit: &limit}
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		params.Cursor = &cur
	}
	res, err := c.api(ss).ListPartnersWithResponse(r.Context(), params)
	if err := check(res, err); err != nil {
		return err
	}
	v := partnersView{Partners: res.JSON200.Data}
	if res.JSON200.HasMore {
		v.Next = res.JSON200.NextCursor
	}
	return c.render(w, r, ss, http.StatusOK, "partners.html", "Partners", v)
}

type failingView struct {
	Endpoints []adminclient.Endpoint
	Partners  int
	Truncated bool
}

// operatorFailing lists, across partners, the endpoints failing now (failing_since set: failures
// and no success since) and the disabled ones, longest failing first.
func (c *Console) operatorFailing(w http.ResponseWriter, r *http.Request, ss *session) error {
	api := c.api(ss)
	v := failingView{}
	limit := operatorScan
	var partners []adminclient.Partner
	pp := &adminclient.ListPartnersParams{Limit: &limit}
	res, err := api.ListPartnersWithResponse(r.Context(), pp)
	if err := check(res, err); err != nil {
		return err
	}
	partners = res.JSON200.Data
	v.Truncated = res.JSON200.HasMore
	v.Partners = len(partners)
	for _, p := range partners {
		eps, err := api.ListEndpointsWithResponse(r.Context(), p.ID, &adminclient.ListEndpointsParams{Limit: &limit})
		if err := check(eps, err); err != nil {
			return err
		}
		v.Truncated = v.Truncated || eps.JSON200.HasMore
		for _, e := range eps.JSON200.Data {
			if e.FailingSince != nil || e.Status == adminclient.EndpointStatusDisabled {
				v.Endpoints = append(v.Endpoints, e)
			}
		}
	}
	sort.SliceStable(v.Endpoints, func(i, j int) bool {
		a, b := v.Endpoints[i].FailingSince, v.Endpoints[j].FailingSince
		switch {
		case a == nil:
			return false
		case b == nil:
			return true
		}
		return a.Before(*b)
	})
	return c.render(w, r, ss, http.StatusOK, "failing.html", "Failing endpoints", v)
}

type deadLettersView struct {
	Rows      []adminclient.OutboxDeadLetter
	PartnerID string
	Reason    string
	Reasons   []string
	Next      string
}

var deadLetterReasons = []string{"malformed", "too_large", "unknown_type", "schema_version", "invalid_data"}

func (c *Console) operatorDeadLetters(w http.ResponseWriter, r *http.Request, ss *session) error {
	q := r.URL.Query()
	v := deadLettersView{PartnerID: q.Get("partner_id"), Reason: q.Get("reason"), Reasons: deadLetterReasons}
	limit := 100
	params := &adminclient.ListOutboxDeadLettersParams{Limit: &limit}
	if v.PartnerID != "" {
		params.PartnerID = &v.PartnerID
	}
	if v.Reason != "" {
		reason := adminclient.ListOutboxDeadLettersParamsReason(v.Reason)
		params.Reason = &reason
	}
	if cur := q.Get("cursor"); cur != "" {
		params.Cursor = &cur
	}
	res, err := c.api(ss).ListOutboxDeadLettersWithResponse(r.Context(), params)
	if err := check(res, err); err != nil {
		return err
	}
	v.Rows = res.JSON200.Data
	if res.JSON200.HasMore {
		v.Next = res.JSON200.NextCursor
	}
	return c.render(w, r, ss, http.StatusOK, "dead_letters.html", "Outbox dead letters", v)
}
