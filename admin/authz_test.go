package admin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// TestAuthorizationMatrix calls every route as each kind of caller and checks the status: no
// token and a bad token get 401; a partner key gets 403 on operator routes and 404 on another
// partner's resources; the operator and the partner's own key succeed.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	// No runner runs here, so every replay job stays queued: room for the matrix's.
	e := newEnv(t, func(c *Config) { c.Limits.ReplayJobs = 5 })
	ownKey := e.partner("acme")
	otherKey := e.partner("globex")
	const pid = "acme"

	ep := e.endpoint(pid)
	disableEP := e.endpoint(pid)
	evID := e.appendEvent(pid, "customer.created", `{"customer_id":"cus_1"}`)
	dids := e.seedDeliveries(pid, ep.ID, "customer.created", "failed", 2, []string{evID}, []time.Time{time.Now()})
	var job jobAccepted
	e.must(202, operatorToken, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/replay",
		map[string]string{"since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}).json(t, &job)

	n := 0
	fresh := func() int { n++; return n }
	epPath := "/v1/partners/acme/endpoints/" + ep.ID
	// The operator's own endpoints (operator events): operator token only, partner keys 403.
	newOpEndpoint := func() createdEndpoint {
		var ep createdEndpoint
		e.must(201, operatorToken, "POST", "/v1/operator/endpoints", map[string]any{
			"url": "https://hooks.example.com/ops", "event_types": []string{"operator.*"},
		}).json(t, &ep)
		return ep
	}
	opEP, opDisableEP := newOpEndpoint(), newOpEndpoint()
	opPath := "/v1/operator/endpoints/" + opEP.ID
	opEvent := e.appendEvent(outbox.OperatorPartnerID, eventcatalog.OperatorQuotaRefused,
		`{"partner_id":"acme","quota":"endpoints","limit":1,"usage":1}`)
	opDids := e.seedDeliveries(outbox.OperatorPartnerID, opEP.ID, eventcatalog.OperatorQuotaRefused, "failed", 2, []string{opEvent}, []time.Time{time.Now()})
	rows := []struct {
		pattern string
		want    int
		req     func() (path string, body any)
	}{
		{"GET /v1/openapi.json", 200, func() (string, any) { return "/v1/openapi.json", nil }},
		{"GET /v1/event-types", 200, func() (string, any) { return "/v1/event-types", nil }},
		{"GET /v1/limits", 200, func() (string, any) { return "/v1/limits", nil }},
		{"POST /v1/partners", 201, func() (string, any) {
			return "/v1/partners", map[string]string{"id": fmt.Sprintf("new-%d", fresh())}
		}},
		{"GET /v1/partners", 200, func() (string, any) { return "/v1/partners", nil }},
		{"GET /v1/partners/{pid}", 200, func() (string, any) { return "/v1/partners/acme", nil }},
		{"POST /v1/partners/{pid}/api-keys", 201, func() (string, any) { return "/v1/partners/acme/api-keys", nil }},
		{"GET /v1/partners/{pid}/api-keys", 200, func() (string, any) { return "/v1/partners/acme/api-keys", nil }},
		{"GET /v1/outbox/dead-letters", 200, func() (string, any) { return "/v1/outbox/dead-letters?partner_id=acme", nil }},
		{"GET /v1/partners/{pid}/api-keys/{kid}", 200, func() (string, any) {
			var k createdAPIKey
			e.must(201, operatorToken, "POST", "/v1/partners/acme/api-keys", nil).json(t, &k)
			return "/v1/partners/acme/api-keys/" + k.ID, nil
		}},
		{"DELETE /v1/partners/{pid}/api-keys/{kid}", 204, func() (string, any) {
			var k createdAPIKey
			e.must(201, operatorToken, "POST", "/v1/partners/acme/api-keys", nil).json(t, &k)
			return "/v1/partners/acme/api-keys/" + k.ID, nil
		}},
		{"POST /v1/partners/{pid}/endpoints", 201, func() (string, any) {
			return "/v1/partners/acme/endpoints", map[string]any{"url": "https://hooks.example.com/x", "event_types": []string{"customer.*"}}
		}},
		{"GET /v1/partners/{pid}/endpoints", 200, func() (string, any) { return "/v1/partners/acme/endpoints", nil }},
		{"GET /v1/partners/{pid}/endpoints/{eid}", 200, func() (string, any) { return epPath, nil }},
		{"PATCH /v1/partners/{pid}/endpoints/{eid}", 200, func() (string, any) {
			return epPath, map[string]any{"description": fmt.Sprintf("change %d", fresh())}
		}},
		{"DELETE /v1/partners/{pid}/endpoints/{eid}", 204, func() (string, any) {
			return "/v1/partners/acme/endpoints/" + e.endpoint(pid).ID, nil
		}},
		{"POST /v1/partners/{pid}/endpoints/{eid}/disable", 200, func() (string, any) {
			return "/v1/partners/acme/endpoints/" + disableEP.ID + "/disable", map[string]string{"reason": "maintenance"}
		}},
		{"POST /v1/partners/{pid}/endpoints/{eid}/enable", 200, func() (string, any) {
			return "/v1/partners/acme/endpoints/" + disableEP.ID + "/enable", nil
		}},
		{"POST /v1/partners/{pid}/endpoints/{eid}/secret/rotate", 200, func() (string, any) { return epPath + "/secret/rotate", nil }},
		{"POST /v1/partners/{pid}/endpoints/{eid}/secret/end-rotation", 200, func() (string, any) { return epPath + "/secret/end-rotation", nil }},
		{"GET /v1/partners/{pid}/endpoints/{eid}/secret/keys", 200, func() (string, any) { return epPath + "/secret/keys", nil }},
		{"GET /v1/partners/{pid}/public-keys", 200, func() (string, any) { return "/v1/partners/acme/public-keys", nil }},
		{"POST /v1/partners/{pid}/endpoints/{eid}/test", 202, func() (string, any) { return epPath + "/test", nil }},
		{"GET /v1/partners/{pid}/endpoints/{eid}/deliveries", 200, func() (string, any) { return epPath + "/deliveries?state=failed", nil }},
		{"POST /v1/partners/{pid}/endpoints/{eid}/replay", 202, func() (string, any) {
			return epPath + "/replay", map[string]string{"since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "source": "log"}
		}},
		{"GET /v1/partners/{pid}/deliveries/{did}", 200, func() (string, any) { return "/v1/partners/acme/deliveries/" + dids[0], nil }},
		{"POST /v1/partners/{pid}/deliveries/{did}/replay", 202, func() (string, any) {
			return "/v1/partners/acme/deliveries/" + dids[0] + "/replay", nil
		}},
		{"GET /v1/partners/{pid}/replay-jobs/{jid}", 200, func() (string, any) { return "/v1/partners/acme/replay-jobs/" + job.JobID, nil }},
		{"GET /v1/partners/{pid}/replay-jobs", 200, func() (string, any) { return "/v1/partners/acme/replay-jobs?state=queued", nil }},
		// Canceling a canceled job answers 200 again, so every caller let through gets 200.
		{"POST /v1/partners/{pid}/replay-jobs/{jid}/cancel", 200, func() (string, any) {
			return "/v1/partners/acme/replay-jobs/" + job.JobID + "/cancel", nil
		}},
		{"GET /v1/partners/{pid}/deliveries", 200, func() (string, any) { return "/v1/partners/acme/deliveries?event_id=" + evID, nil }},
		{"GET /v1/partners/{pid}/events", 200, func() (string, any) { return "/v1/partners/acme/events?limit=10", nil }},
		{"GET /v1/partners/{pid}/events/{event_id}", 200, func() (string, any) { return "/v1/partners/acme/events/" + evID, nil }},
		// A stream that is let through never ends; a bad cursor is refused after the access
		// check and before the stream starts, so the callers let through get its 400.
		{"GET /v1/partners/{pid}/events/stream", 400, func() (string, any) { return "/v1/partners/acme/events/stream?after=not-a-cursor", nil }},

		{"GET /v1/operator/event-types", 200, func() (string, any) { return "/v1/operator/event-types", nil }},
		{"POST /v1/operator/endpoints", 201, func() (string, any) {
			return "/v1/operator/endpoints", map[string]any{"url": "https://hooks.example.com/ops-x", "event_types": []string{"operator.*"}}
		}},
		{"GET /v1/operator/endpoints", 200, func() (string, any) { return "/v1/operator/endpoints", nil }},
		{"GET /v1/operator/endpoints/{eid}", 200, func() (string, any) { return opPath, nil }},
		{"PATCH /v1/operator/endpoints/{eid}", 200, func() (string, any) {
			return opPath, map[string]any{"description": fmt.Sprintf("change %d", fresh())}
		}},
		{"DELETE /v1/operator/endpoints/{eid}", 204, func() (string, any) { return "/v1/operator/endpoints/" + newOpEndpoint().ID, nil }},
		{"POST /v1/operator/endpoints/{eid}/disable", 200, func() (string, any) {
			return "/v1/operator/endpoints/" + opDisableEP.ID + "/disable", map[string]string{"reason": "maintenance"}
		}},
		{"POST /v1/operator/endpoints/{eid}/enable", 200, func() (string, any) {
			return "/v1/operator/endpoints/" + opDisableEP.ID + "/enable", nil
		}},
		{"POST /v1/operator/endpoints/{eid}/secret/rotate", 200, func() (string, any) { return opPath + "/secret/rotate", nil }},
		{"POST /v1/operator/endpoints/{eid}/secret/end-rotation", 200, func() (string, any) { return opPath + "/secret/end-rotation", nil }},
		{"POST /v1/operator/endpoints/{eid}/test", 202, func() (string, any) { return opPath + "/test", nil }},
		{"GET /v1/operator/endpoints/{eid}/deliveries", 200, func() (string, any) { return opPath + "/deliveries?state=failed", nil }},
		{"GET /v1/operator/deliveries", 200, func() (string, any) { return "/v1/operator/deliveries?event_id=" + opEvent, nil }},
		{"GET /v1/operator/deliveries/{did}", 200, func() (string, any) { return "/v1/operator/deliveries/" + opDids[0], nil }},
		{"POST /v1/operator/deliveries/{did}/replay", 202, func() (string, any) { return "/v1/operator/deliveries/" + opDids[0] + "/replay", nil }},
	}

	accessOf := map[string]access{}
	for _, rt := range e.api.routes {
		accessOf[rt.pattern()] = rt.access
	}
	covered := map[string]bool{}
	callers := []struct {
		name  string
		token string
	}{
		{"no token", ""},
		{"bad token", "hsk_not-a-key-of-anyone-0000000000000000000000"},
		{"other partner key", otherKey},
		{"own partner key", ownKey},
		{"operator", operatorToken},
	}
	for _, row := range rows {
		rule, ok := accessOf[row.pattern]
		if !ok {
			t.Errorf("matrix row %q is not a route", row.pattern)
			continue
		}
		covered[row.pattern] = true
		method, _, _ := strings.Cut(row.pattern, " ")
		for _, c := range callers {
			want := row.want
			switch {
			case rule == public:
			case c.token == "" || strings.HasPrefix(c.name, "bad"):
				want = http.StatusUnauthorized
			case rule == operator && c.token != operatorToken:
				want = http.StatusForbidden
			case rule == partnerOwn && c.token == otherKey:
				want = http.StatusNotFound
			}
			path, body := row.req()
			r := e.do(c.token, method, path, body)
			if r.Status != want {
				t.Errorf("%s as %s: %s, want %d", row.pattern, c.name, r, want)
				continue
			}
			if r.Status == http.StatusCreated || r.Status == http.StatusAccepted {
				checkLocation(t, e, row.pattern, r)
			}
			if r.Status >= 400 {
				var eb errorBody
				r.json(t, &eb)
				if eb.Code == "" || eb.Detail == "" {
					t.Errorf("%s as %s: error body %s lacks code or message", row.pattern, c.name, r.Body)
				}
				if r.Status == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s as %s: 401 without WWW-Authenticate", row.pattern, c.name)
				}
			}
		}
	}
	for p := range accessOf {
		if !covered[p] {
			t.Errorf("route %s is missing from the authorization matrix", p)
		}
	}
}

// checkLocation: a 201 or 202 names the created resource, or the one showing the accepted
// work's state, in Location, and that resource answers a GET (a test event's delivery once
// recorded: no recorder runs here, so only its route is checked).
func checkLocation(t *testing.T, e *env, pattern string, r response) {
	t.Helper()
	loc, route := r.Header.Get("Location"), ""
	if strings.HasPrefix(loc, "/v1/") {
		_, route = e.api.mux.Handler(httptest.NewRequest("GET", loc, nil))
	}
	if !strings.HasPrefix(route, "GET /v1/") {
		t.Errorf("%s: %d with Location %q, want the path of a resource one can GET", pattern, r.Status, loc)
		return
	}
	if strings.HasSuffix(pattern, "/test") {
		if !strings.HasSuffix(route, "/deliveries/{did}") || !strings.Contains(string(r.Body), `"delivery_id":"`+loc[strings.LastIndex(loc, "/")+1:]+`"`) {
			t.Errorf("%s: Location %q, want the test event's delivery", pattern, loc)
		}
		return
	}
	if g := e.do(operatorToken, "GET", loc, nil); g.Status != http.StatusOK {
		t.Errorf("%s: GET of its Location %s: %s", pattern, loc, g)
	}
}

// TestAuthenticationForms covers token forms the matrix does not: other schemes, revoked keys,
// a partner that does not exist, and routes that do not exist.
func TestAuthenticationForms(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	for _, h := range []string{"Basic " + operatorToken, "Bearer", "Bearer ", operatorToken, "bearer " + operatorToken + "x"} {
		r := doHeader(e.api, h, "GET", "/v1/limits")
		if r.Status != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %s, want 401", h, r)
		}
	}
	if r := doHeader(e.api, "bearer "+operatorToken, "GET", "/v1/limits"); r.Status != 200 {
		t.Errorf("lowercase bearer scheme: %s", r)
	}

	var keys list[apiKeyView]
	e.must(200, operatorToken, "GET", "/v1/partners/acme/api-keys", nil).json(t, &keys)
	if len(keys.Data) != 1 || keys.Data[0].LastUsedAt != nil {
		t.Fatalf("keys before use: %+v", keys.Data)
	}
	e.must(200, key, "GET", "/v1/partners/acme", nil)
	e.must(200, operatorToken, "GET", "/v1/partners/acme/api-keys", nil).json(t, &keys)
	if keys.Data[0].LastUsedAt == nil {
		t.Errorf("last_used_at not set after use")
	}
	if strings.Contains(string(e.must(200, operatorToken, "GET", "/v1/partners/acme/api-keys", nil).Body), key) {
		t.Errorf("key listing shows the key")
	}
	e.must(204, operatorToken, "DELETE", "/v1/partners/acme/api-keys/"+keys.Data[0].ID, nil)
	e.must(401, key, "GET", "/v1/partners/acme", nil)

	// The operator gets 404 for partners that do not exist, like everyone else.
	e.must(404, operatorToken, "GET", "/v1/partners/nobody", nil)
	e.must(404, operatorToken, "GET", "/v1/partners/nobody/endpoints", nil)
	e.must(404, operatorToken, "POST", "/v1/partners/nobody/api-keys", nil)
	e.must(404, operatorToken, "GET", "/v1/partners/bad%00id", nil)
	e.must(404, operatorToken, "GET", "/v1/partners/acme/endpoints/ep_%00", nil)

	r := e.must(404, "", "GET", "/v1/nothing-here", nil)
	var eb errorBody
	r.json(t, &eb)
	if eb.Code != CodeNotFound {
		t.Errorf("unknown route: %s", r)
	}
	r = e.must(405, operatorToken, "PUT", "/v1/partners", nil)
	r.json(t, &eb)
	if eb.Code != CodeMethodNotAllowed || !strings.Contains(r.Header.Get("Allow"), "POST") {
		t.Errorf("wrong method: %s %v", r, r.Header)
	}

	// Requests are counted by route pattern and status class.
	for _, c := range []struct {
		route, code string
		atLeast     float64
	}{{"GET /v1/partners/{pid}", "4xx", 2}, {"GET /v1/partners/{pid}", "2xx", 1}, {"unmatched", "4xx", 2}} {
		if got := testenv.Counter(t, e.reg, "hookstream_admin_requests_total", "route", c.route, "code", c.code); got < c.atLeast {
			t.Errorf("hookstream_admin_requests_total{route=%q, code=%q} = %v, want at least %v", c.route, c.code, got, c.atLeast)
		}
	}
}

func doHeader(a *API, authorization, method, path string) response {
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", authorization)
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	return response{Status: rec.Code, Body: rec.Body.Bytes(), Header: rec.Header()}
}
