package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hookstream/hookstream/adminclient"
)

// endpointRow is one endpoint with what the list shows about its health.
type endpointRow struct {
	E           adminclient.Endpoint
	Health      health
	LastSuccess *time.Time
}

// Circuit is the sender's circuit state of the endpoint as the API's health states it (the
// newest recorded attempt's), with the next probe while it is open.
func (r endpointRow) Circuit() string {
	h := r.E.Health
	if h.Circuit == "" {
		return "unknown"
	}
	if h.NextProbeAt != nil && h.Circuit == "open" {
		return fmt.Sprintf("open, next probe %s", h.NextProbeAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	return string(h.Circuit)
}

type endpointsView struct {
	PID     string
	Rows    []endpointRow
	HasMore bool
	Next    string
}

func (c *Console) endpoints(w http.ResponseWriter, r *http.Request, ss *session) error {
	pid := r.PathValue("pid")
	api := c.api(ss)
	limit := 100
	params := &adminclient.ListEndpointsParams{Limit: &limit}
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		params.Cursor = &cur
	}
	res, err := api.ListEndpointsWithResponse(r.Context(), pid, params)
	if err := check(res, err); err != nil {
		return err
	}
	v := endpointsView{PID: pid, HasMore: res.JSON200.HasMore, Next: res.JSON200.NextCursor}
	for _, e := range res.JSON200.Data {
		row, err := c.endpointHealth(r, ss, e)
		if err != nil {
			return err
		}
		v.Rows = append(v.Rows, row)
	}
	return c.render(w, r, ss, http.StatusOK, "endpoints.html", "Endpoints", v)
}

// endpointHealth reads an endpoint's last 24 hours of history (one page of up to 1,000
// deliveries, the API's largest) and its newest success.
func (c *Console) endpointHealth(r *http.Request, ss *session, e adminclient.Endpoint) (endpointRow, error) {
	api := c.api(ss)
	now := c.now()
	since := now.Truncate(time.Hour).Add(time.Hour - healthWindow)
	limit := 1000
	res, err := api.ListDeliveriesWithResponse(r.Context(), e.PartnerID, e.ID, &adminclient.ListDeliveriesParams{Limit: &limit, Since: &since})
	if err := check(res, err); err != nil {
		return endpointRow{}, err
	}
	row := endpointRow{E: e, Health: computeHealth(res.JSON200.Data, now, res.JSON200.HasMore)}
	one := 1
	state := adminclient.ListDeliveriesParamsState(adminclient.DeliveryStateSucceeded)
	last, err := api.ListDeliveriesWithResponse(r.Context(), e.PartnerID, e.ID, &adminclient.ListDeliveriesParams{Limit: &one, State: &state})
	if err := check(last, err); err != nil {
		return endpointRow{}, err
	}
	if len(last.JSON200.Data) > 0 {
		t := last.JSON200.Data[0].UpdatedAt
		row.LastSuccess = &t
	}
	return row, nil
}

// deliveryFilter is the attempt filter of an endpoint's page. state, type and the time range go
// to the API; status and category are not API filters (yet), so the console applies them to the
// pages it reads, scanning at most maxScan deliveries per page shown.
type deliveryFilter struct {
	State, Category, Status, Type, Since, Until, Cursor string
}

const (
	pageSize = 50
	maxScan  = 1000
)

var errorCategories = []string{"dns", "connection_refused", "connection_reset", "tls", "timeout", "http_status",
	"invalid_response", "redirect", "blocked_destination", "endpoint_disabled", "tenant_mismatch", "internal"}

var deliveryStates = []string{"pending", "retrying", "succeeded", "failed", "skipped"}

func (f deliveryFilter) local() bool { return f.Category != "" || f.Status != "" }

func (f deliveryFilter) matches(d adminclient.Delivery) bool {
	if f.Category != "" && (d.LastErrorCategory == nil || *d.LastErrorCategory != f.Category) {
		return false
	}
	switch f.Status {
	case "":
	case "none":
		return d.LastStatus == nil
	case "2xx", "3xx", "4xx", "5xx":
		return d.LastStatus != nil && *d.LastStatus/100 == int(f.Status[0]-'0')
	default:
		n, _ := strconv.Atoi(f.Status)
		return d.LastStatus != nil && *d.LastStatus == n
	}
	return true
}

// parseTime reads a filter's time: RFC 3339, or a datetime-local value read as UTC.
func parseTime(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return &t, nil
		}
	}
	return nil, &pageError{status: http.StatusBadRequest, msg: fmt.Sprintf("%q is not a time: use 2026-01-02T15:04 (UTC) or RFC 3339", s)}
}

func readFilter(r *http.Request) (deliveryFilter, error) {
	q := r.URL.Query()
	f := deliveryFilter{State: q.Get("state"), Category: q.Get("category"), Status: q.Get("status"),
		Type: strings.TrimSpace(q.Get("type")), Since: q.Get("since"), Until: q.Get("until"), Cursor: q.Get("cursor")}
	switch f.Status {
	case "", "none", "2xx", "3xx", "4xx", "5xx":
	default:
		if n, err := strconv.Atoi(f.Status); err != nil || n < 100 || n > 599 {
			return f, &pageError{status: http.StatusBadRequest, msg: "status must be 2xx, 3xx, 4xx, 5xx, none or an HTTP status code"}
		}
	}
	if f.Category != "" && !contains(errorCategories, f.Category) {
		return f, &pageError{status: http.StatusBadRequest, msg: "category must be one of " + strings.Join(errorCategories, ", ")}
	}
	return f, nil
}

func contains(ss []string, s string) bool {
	for _, v := range ss {
		if v == s {
			return true
		}
	}
	return false
}

type endpointView struct {
	endpointRow
	Filter       deliveryFilter
	Deliveries   []adminclient.Delivery
	Next         string
	Scanned      int
	States       []string
	Categories   []string
	Rotating     bool
	DefaultSince string
}

func (c *Console) endpoint(w http.ResponseWriter, r *http.Request, ss *session) error {
	pid, eid := r.PathValue("pid"), r.PathValue("eid")
	api := c.api(ss)
	res, err := api.GetEndpointWithResponse(r.Context(), pid, eid)
	if err := check(res, err); err != nil {
		return err
	}
	row, err := c.endpointHealth(r, ss, *res.JSON200)
	if err != nil {
		return err
	}
	f, err := readFilter(r)
	if err != nil {
		return err
	}
	v := endpointView{endpointRow: row, Filter: f, States: deliveryStates, Categories: errorCategories,
		DefaultSince: c.now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")}
	for _, s := range row.E.Secrets {
		if s.ExpiresAt != nil {
			v.Rotating = true
		}
	}
	params := &adminclient.ListDeliveriesParams{}
	if f.State != "" {
		st := adminclient.ListDeliveriesParamsState(f.State)
		params.State = &st
	}
	if f.Type != "" {
		params.Type = &f.Type
	}
	if params.Since, err = parseTime(f.Since); err != nil {
		return err
	}
	if params.Until, err = parseTime(f.Until); err != nil {
		return err
	}
	limit := pageSize
	if f.local() {
		limit = 200
	}
	params.Limit = &limit
	cursor := f.Cursor
	for {
		if cursor != "" {
			cur := cursor
			params.Cursor = &cur
		}
		page, err := api.ListDeliveriesWithResponse(r.Context(), pid, eid, params)
		if err := check(page, err); err != nil {
			return err
		}
		v.Scanned += len(page.JSON200.Data)
		for _, d := range page.JSON200.Data {
			if f.matches(d) {
				v.Deliveries = append(v.Deliveries, d)
			}
		}
		cursor = ""
		if page.JSON200.HasMore {
			cursor = page.JSON200.NextCursor
		}
		if cursor == "" || !f.local() || len(v.Deliveries) >= pageSize || v.Scanned >= maxScan {
			break
		}
	}
	v.Next = cursor
	return c.render(w, r, ss, http.StatusOK, "endpoint.html", "Endpoint "+eid, v)
}

// NextURL is the link to the next page of deliveries with the same filter.
func (v endpointView) NextURL() string {
	f := v.Filter
	q := url.Values{}
	for k, val := range map[string]string{"state": f.State, "category": f.Category, "status": f.Status,
		"type": f.Type, "since": f.Since, "until": f.Until, "cursor": v.Next} {
		if val != "" {
			q.Set(k, val)
		}
	}
	return pathOf("partners", v.E.PartnerID, "endpoints", v.E.ID) + "?" + q.Encode()
}

// catalogInfo is what the endpoint form offers from the catalog: the known types, for the
// event types field's suggestions, and the schema versions an endpoint may be pinned to (1
// through the newest of any type).
func (c *Console) catalogInfo(r *http.Request, ss *session) (types []string, versions []int) {
	res, err := c.api(ss).ListEventTypesWithResponse(r.Context())
	if check(res, err) != nil {
		return nil, nil
	}
	newest := 0
	for _, t := range res.JSON200.Data {
		types = append(types, t.Type)
		newest = max(newest, t.SchemaVersion)
	}
	for v := 1; v <= newest; v++ {
		versions = append(versions, v)
	}
	return types, versions
}

func (c *Console) showEndpointForm(w http.ResponseWriter, r *http.Request, ss *session, status int, f endpointForm) error {
	f.KnownTypes, f.Versions = c.catalogInfo(r, ss)
	title := "New endpoint"
	if f.Edit {
		title = "Edit endpoint"
	}
	return c.render(w, r, ss, status, "endpoint_form.html", title, f)
}

func (c *Console) newEndpointPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	f := endpointForm{PID: r.PathValue("pid"), EventTypes: "*", Ordering: "none", SignatureScheme: "v1", AuthType: "none"}
	return c.showEndpointForm(w, r, ss, http.StatusOK, f)
}

func (c *Console) createEndpoint(w http.ResponseWriter, r *http.Request, ss *session) error {
	pid := r.PathValue("pid")
	f := readEndpointForm(r.PostForm)
	f.PID = pid
	var res *adminclient.CreateEndpointResponse
	if sent, err := c.submitEndpointForm(w, r, ss, f, func(body io.Reader) (adminclient.Response, error) {
		var err error
		res, err = c.api(ss).CreateEndpointWithBodyWithResponse(r.Context(), pid, "application/json", body)
		return res, err
	}); !sent {
		return err
	}
	e := res.JSON201
	done := &flash{Message: "Endpoint created. This is its signing secret; it is shown only now, copy it:", Secret: e.Secret}
	if e.Secret == "" {
		done = &flash{Message: "Endpoint created. It signs with ed25519 (v1a): receivers verify with its public key, listed under Secrets; the signing key is never shown."}
	}
	return c.redirect(w, r, ss, pathOf("partners", pid, "endpoints", e.ID), done)
}

func (c *Console) editEndpointPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	pid, eid := r.PathValue("pid"), r.PathValue("eid")
	res, err := c.api(ss).GetEndpointWithResponse(r.Context(), pid, eid)
	if err := check(res, err); err != nil {
		return err
	}
	f := endpointForm{PID: pid, EID: eid, Edit: true}
	f.fillFrom(*res.JSON200)
	return c.showEndpointForm(w, r, ss, http.StatusOK, f)
}

func (c *Console) editEndpoint(w http.ResponseWriter, r *http.Request, ss *session) error {
	pid, eid := r.PathValue("pid"), r.PathValue("eid")
	f := readEndpointForm(r.PostForm)
	f.PID, f.EID, f.Edit = pid, eid, true
	// What the form keeps (the authentication, the certificate) is described again if the form
	// is shown again.
	if cur, err := c.api(ss).GetEndpointWithResponse(r.Context(), pid, eid); check(cur, err) == nil {
		var was endpointForm
		was.fillFrom(*cur.JSON200)
		f.CurrentAuth, f.CurrentCertificate = was.CurrentAuth, was.CurrentCertificate
	}
	var res *adminclient.UpdateEndpointResponse
	if sent, err := c.submitEndpointForm(w, r, ss, f, func(body io.Reader) (adminclient.Response, error) {
		var err error
		res, err = c.api(ss).UpdateEndpointWithBodyWithResponse(r.Context(), pid, eid, "application/json", body)
		return res, err
	}); !sent {
		return err
	}
	done := &flash{Message: "Endpoint saved."}
	if res.JSON200 != nil && res.JSON200.Secret != "" {
		done = &flash{Message: "Endpoint saved. It signs with HMAC (v1) now; this is its new signing secret, shown only now, copy it:",
			Secret: res.JSON200.Secret}
	}
	return c.redirect(w, r, ss, pathOf("partners", pid, "endpoints", eid), done)
}

// submitEndpointForm sends the endpoint form f as the API's request body with send. What the
// console cannot read, or the API refuses (a 4xx other than 404 and 403), shows the form again
// with the reasons beside their fields. sent is false when the form was shown again (err is then
// that page's) or the call failed otherwise (err).
func (c *Console) submitEndpointForm(w http.ResponseWriter, r *http.Request, ss *session, f endpointForm,
	send func(body io.Reader) (adminclient.Response, error)) (sent bool, err error) {
	body := f.body()
	if len(f.Errors) > 0 {
		f.Error = "The console could not read some fields; the reasons are shown beside them. Nothing was sent."
		return false, c.showEndpointForm(w, r, ss, http.StatusUnprocessableEntity, f)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return false, fmt.Errorf("endpoint form: %w", err)
	}
	res, err := send(bytes.NewReader(raw))
	if err := check(res, err); err != nil {
		if pe, ok := err.(*pageError); ok && pe.status >= 400 && pe.status < 500 && pe.status != http.StatusNotFound &&
			pe.status != http.StatusForbidden && pe.status != http.StatusUnauthorized {
			f.refusedBy(pe)
			return false, c.showEndpointForm(w, r, ss, http.StatusUnprocessableEntity, f)
		}
		return false, err
	}
	return true, nil
}

// act runs one endpoint action and returns to the endpoint's page with its outcome: a refusal
// of the API (a 409, a 429 with its quota) is shown there as the API phrased it.
func (c *Console) act(w http.ResponseWriter, r *http.Request, ss *session, res adminclient.Response, err error, done flash) error {
	pid, eid := r.PathValue("pid"), r.PathValue("eid")
	back := pathOf("partners", pid, "endpoints", eid)
	if err := check(res, err); err != nil {
		pe, ok := err.(*pageError)
		if ok && pe.status != http.StatusNotFound && pe.status != http.StatusUnauthorized && pe.status < 500 {
			return c.redirect(w, r, ss, back, &flash{Message: pe.msg, Error: true})
		}
		return err
	}
	return c.redirect(w, r, ss, back, &done)
}

func (c *Console) disableEndpoint(w http.ResponseWriter, r *http.Request, ss *session) error {
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	if reason == "" {
		reason = "disabled in the console"
	}
	res, err := c.api(ss).DisableEndpointWithResponse(r.Context(), r.PathValue("pid"), r.PathValue("eid"), adminclient.Disable{Reason: reason})
	return c.act(w, r, ss, res, err, flash{Message: "Endpoint disabled: nothing is delivered to it until it is enabled."})
}

func (c *Console) enableEndpoint(w http.ResponseWriter, r *http.Request, ss *session) error {
	res, err := c.api(ss).EnableEndpointWithResponse(r.Context(), r.PathValue("pid"), r.PathValue("eid"), adminclient.Empty{})
	return c.act(w, r, ss, res, err, flash{Message: "Endpoint enabled."})
}

func (c *Console) rotateSecret(w http.ResponseWriter, r *http.Request, ss *session) error {
	var body adminclient.RotateRequest
	if s := strings.TrimSpace(r.PostForm.Get("overlap")); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return c.redirect(w, r, ss, pathOf("partners", r.PathValue("pid"), "endpoints", r.PathValue("eid")),
				&flash{Message: fmt.Sprintf("overlap %q is not a duration such as 1h or 30m", s), Error: true})
		}
		n := int(d.Seconds())
		body.OverlapSeconds = &n
	}
	res, err := c.api(ss).RotateSecretWithResponse(r.Context(), r.PathValue("pid"), r.PathValue("eid"), body)
	done := flash{}
	if err == nil && res.JSON200 != nil {
		done.Secret = res.JSON200.Secret
		done.Message = "Secret rotated. This is the new signing secret; it is shown only now, copy it. " +
			"Until " + templateFuncs["when"].(func(any) string)(res.JSON200.PreviousSecretsExpireAt) +
			" every request is signed with the old and the new secret:"
		if pub := res.JSON200.PublicKey; pub != nil { // v1a: the signing key is never shown
			done.Secret = *pub
			done.Message = "Key rotated. Receivers verify with this new public key (the endpoint's keys list it too). " +
				"Until " + templateFuncs["when"].(func(any) string)(res.JSON200.PreviousSecretsExpireAt) +
				" every request is signed with the old and the new key:"
		}
	}
	return c.act(w, r, ss, res, err, done)
}

func (c *Console) endRotation(w http.ResponseWriter, r *http.Request, ss *session) error {
	res, err := c.api(ss).EndRotationWithResponse(r.Context(), r.PathValue("pid"), r.PathValue("eid"), adminclient.Empty{})
	return c.act(w, r, ss, res, err, flash{Message: "Rotation ended: only the newest secret signs now."})
}

func (c *Console) sendTest(w http.ResponseWriter, r *http.Request, ss *session) error {
	pid := r.PathValue("pid")
	res, err := c.api(ss).SendTestEventWithResponse(r.Context(), pid, r.PathValue("eid"), adminclient.Empty{})
	done := flash{}
	if err == nil && res.JSON202 != nil {
		done.Message = "Test event " + res.JSON202.EventID + " sent."
		done.Link = pathOf("partners", pid, "deliveries", res.JSON202.DeliveryID) + "?await=1"
		done.LinkText = "Follow its delivery"
	}
	return c.act(w, r, ss, res, err, done)
}

func (c *Console) replayRange(w http.ResponseWriter, r *http.Request, ss *session) error {
	pid, eid := r.PathValue("pid"), r.PathValue("eid")
	back := pathOf("partners", pid, "endpoints", eid)
	f := r.PostForm
	since, err := parseTime(f.Get("since"))
	if err == nil && since == nil {
		err = &pageError{msg: "a replay needs its start (since)"}
	}
	var until *time.Time
	if err == nil {
		until, err = parseTime(f.Get("until"))
	}
	if err != nil {
		return c.redirect(w, r, ss, back, &flash{Message: err.(*pageError).msg, Error: true})
	}
	body := adminclient.ReplayJobRequest{Since: *since, Until: until}
	if s := f.Get("state"); s != "" {
		body.State = &s
	}
	if s := f.Get("source"); s != "" {
		src := adminclient.ReplayJobRequestSource(s)
		body.Source = &src
	}
	res, err := c.api(ss).CreateReplayJobWithResponse(r.Context(), pid, eid, body)
	if err := check(res, err); err != nil {
		if pe, ok := err.(*pageError); ok && pe.status != http.StatusNotFound && pe.status < 500 {
			return c.redirect(w, r, ss, back, &flash{Message: pe.msg, Error: true})
		}
		return err
	}
	return c.redirect(w, r, ss, pathOf("partners", pid, "replay-jobs", res.JSON202.JobID), &flash{Message: "Replay job queued."})
}
