package admin

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// doWith is call with extra request headers.
func (e *env) doWith(headers map[string]string, token, method, path, body string) response {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.api.Handler().ServeHTTP(rec, req)
	return response{Status: rec.Code, Body: rec.Body.Bytes(), Header: rec.Header()}
}

func idem(key string) map[string]string { return map[string]string{IdempotencyKeyHeader: key} }

func (e *env) countEndpoints(pid string) int {
	e.t.Helper()
	return testenv.QueryInt(e.t, e.DB.Pool, `SELECT count(*) FROM endpoint WHERE partner_id = $1`, pid)
}

// TestIdempotencyKey: the same key and request get the first answer back and change nothing
// more; the same key with another request is refused with 422; keys are the caller's own, kept
// 24 hours, and a refused first request does not hold its key.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	partnerKey := e.partner("acme")
	base := "/v1/partners/acme/endpoints"
	body := `{"url":"https://hooks.example.com/in","event_types":["customer.*"]}`

	first := e.doWith(idem("create-1"), operatorToken, "POST", base, body)
	if first.Status != 201 || first.Header.Get(IdempotencyReplayedHeader) != "" {
		t.Fatalf("first request: %s", first)
	}
	// The same object serialised another way is the same request.
	again := e.doWith(idem("create-1"), operatorToken, "POST", base, "{ \"event_types\": [\"customer.*\"],\n \"url\": \"https://hooks.example.com/in\" }")
	if again.Status != 201 || !bytes.Equal(again.Body, first.Body) || again.Header.Get(IdempotencyReplayedHeader) != "true" ||
		again.Header.Get("Content-Type") != "application/json" || again.Header.Get("Location") != first.Header.Get("Location") {
		t.Fatalf("repeated request: %s (replayed %q), want the first answer %s", again, again.Header.Get(IdempotencyReplayedHeader), first)
	}
	if n := e.countEndpoints("acme"); n != 1 {
		t.Fatalf("%d endpoints after a repeated request, want 1", n)
	}

	other := e.doWith(idem("create-1"), operatorToken, "POST", base, `{"url":"https://hooks.example.com/other","event_types":["*"]}`)
	var eb errorBody
	other.json(t, &eb)
	if other.Status != 422 || eb.Code != CodeIdempotencyReused || eb.Field != IdempotencyKeyHeader {
		t.Fatalf("same key, other body: %s, want 422 %s", other, CodeIdempotencyReused)
	}

	// Another caller's key of the same name is its own.
	if r := e.doWith(idem("create-1"), partnerKey, "POST", base, body); r.Status != 201 || r.Header.Get(IdempotencyReplayedHeader) != "" {
		t.Fatalf("a partner key's first use of a name the operator used: %s", r)
	}
	if n := e.countEndpoints("acme"); n != 2 {
		t.Fatalf("%d endpoints, want 2", n)
	}

	// The stored answer holds the secret shown once, sealed: its text is nowhere in the table.
	var created createdEndpoint
	first.json(t, &created)
	// The same key on another route is another request.
	rot := e.doWith(idem("create-1"), operatorToken, "POST", base+"/"+created.ID+"/secret/rotate", "")
	rot.json(t, &eb)
	if rot.Status != 422 || eb.Code != CodeIdempotencyReused {
		t.Fatalf("same key on another route: %s, want 422 %s", rot, CodeIdempotencyReused)
	}
	var stored []byte
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT response FROM idempotency_key WHERE scope = 'operator' AND key = 'create-1'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte(created.Secret)) || bytes.Contains(stored, []byte(created.ID)) {
		t.Fatal("the stored answer is not sealed")
	}

	// A refused first request holds nothing: the corrected request with the same key runs.
	if r := e.doWith(idem("create-2"), operatorToken, "POST", base, `{"url":"","event_types":["*"]}`); r.Status != 422 {
		t.Fatalf("invalid request: %s", r)
	}
	if r := e.doWith(idem("create-2"), operatorToken, "POST", base, body); r.Status != 201 || r.Header.Get(IdempotencyReplayedHeader) != "" {
		t.Fatalf("the corrected request after a refusal: %s", r)
	}

	// A first request still running: 409 with Retry-After, and nothing is done.
	if _, err := e.DB.Pool.Exec(context.Background(), `INSERT INTO idempotency_key (scope, key, request_hash) VALUES ('operator', 'running', $1)`,
		requestHash("POST", base, []byte(body))); err != nil {
		t.Fatal(err)
	}
	running := e.doWith(idem("running"), operatorToken, "POST", base, body)
	running.json(t, &eb)
	if running.Status != 409 || eb.Code != CodeIdempotencyPending || running.Header.Get("Retry-After") == "" {
		t.Fatalf("while the first request runs: %s", running)
	}

	// Past 24 hours the key is free again.
	before := e.countEndpoints("acme")
	if _, err := e.DB.Pool.Exec(context.Background(), `UPDATE idempotency_key SET created_at = now() - interval '24 hours 1 minute' WHERE key = 'create-1'`); err != nil {
		t.Fatal(err)
	}
	if r := e.doWith(idem("create-1"), operatorToken, "POST", base, body); r.Status != 201 || r.Header.Get(IdempotencyReplayedHeader) != "" || bytes.Equal(r.Body, first.Body) {
		t.Fatalf("a key past its 24 hours: %s", r)
	}
	if n := e.countEndpoints("acme"); n != before+1 {
		t.Fatalf("%d endpoints, want %d", n, before+1)
	}
	e.api.sweepIdempotencyKeys(context.Background())

	for _, bad := range []string{"has space", strings.Repeat("k", 256), "naïve"} {
		r := e.doWith(idem(bad), operatorToken, "POST", base, body)
		r.json(t, &eb)
		if r.Status != 400 || eb.Field != IdempotencyKeyHeader {
			t.Errorf("Idempotency-Key %.20q: %s, want 400 naming the header", bad, r)
		}
	}
	if r := e.doWith(map[string]string{IdempotencyKeyHeader: ""}, operatorToken, "POST", base, body); r.Status != 400 {
		t.Errorf("empty Idempotency-Key: %s, want 400", r)
	}
}

// TestIdempotencyKeyOnEveryPost sends every POST route twice with one key: the second answer is
// the first, marked replayed, and the second request changed nothing (one partner, one API
// key, one rotation, one test event, one replay job).
func TestIdempotencyKeyOnEveryPost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	ep := e.endpoint("acme")
	did := e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 1, []string{e.appendEvent("acme", "customer.created", `{"customer_id":"cus_1"}`)}, []time.Time{time.Now()})[0]

	var opEP createdEndpoint
	e.must(201, operatorToken, "POST", "/v1/operator/endpoints", map[string]any{
		"url": "https://hooks.example.com/ops", "event_types": []string{"operator.*"}}).json(t, &opEP)
	opDid := e.seedDeliveries(outbox.OperatorPartnerID, opEP.ID, eventcatalog.OperatorQuotaRefused, "failed", 1,
		[]string{e.appendEvent(outbox.OperatorPartnerID, eventcatalog.OperatorQuotaRefused, `{"partner_id":"acme","quota":"endpoints","limit":1,"usage":1}`)},
		[]time.Time{time.Now()})[0]

	jid := newID(replayJobPrefix)
	if _, err := e.DB.Pool.Exec(context.Background(), `INSERT INTO replay_job (id, partner_id, endpoint_id, source) VALUES ($1, 'acme', $2, 'history')`, jid, ep.ID); err != nil {
		t.Fatal(err)
	}
	const deliveriesTopic = "the records of the deliveries topic"
	posts := map[string]string{}
	for _, rt := range e.api.routes {
		if rt.method == "POST" {
			posts[rt.path] = ""
		}
	}
	cases := []struct{ path, body, count string }{
		{"/v1/partners", `{"id":"beta"}`, `SELECT count(*) FROM partner`},
		{"/v1/partners/{pid}/api-keys", `{"name":"ci"}`, `SELECT count(*) FROM partner_api_key`},
		{"/v1/partners/{pid}/endpoints", `{"url":"https://hooks.example.com/2","event_types":["*"]}`, `SELECT count(*) FROM endpoint`},
		{"/v1/partners/{pid}/endpoints/{eid}/disable", `{"reason":"maintenance"}`, `SELECT count(*) FROM outbox_event WHERE type = 'endpoint.disabled'`},
		{"/v1/partners/{pid}/endpoints/{eid}/enable", ``, `SELECT version FROM endpoint WHERE id = '` + ep.ID + `'`},
		{"/v1/partners/{pid}/endpoints/{eid}/secret/rotate", ``, `SELECT count(*) FROM endpoint_secret`},
		{"/v1/partners/{pid}/endpoints/{eid}/secret/end-rotation", ``, `SELECT version FROM endpoint WHERE id = '` + ep.ID + `'`},
		{"/v1/partners/{pid}/endpoints/{eid}/test", ``, deliveriesTopic},
		{"/v1/partners/{pid}/endpoints/{eid}/replay", `{"since":"` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`, `SELECT count(*) FROM replay_job`},
		{"/v1/partners/{pid}/deliveries/{did}/replay", ``, `SELECT coalesce(max(attempt_no), 0) FROM replay_reservation`},
		{"/v1/partners/{pid}/replay-jobs/{jid}/cancel", ``, `SELECT count(*) FROM replay_job WHERE state = 'canceled'`},
		{"/v1/operator/endpoints", `{"url":"https://hooks.example.com/ops-2","event_types":["operator.*"]}`, `SELECT count(*) FROM endpoint`},
		{"/v1/operator/endpoints/{opeid}/disable", `{"reason":"maintenance"}`, `SELECT count(*) FROM outbox_event WHERE type = 'operator.endpoint.disabled'`},
		{"/v1/operator/endpoints/{opeid}/enable", ``, `SELECT version FROM endpoint WHERE id = '` + opEP.ID + `'`},
		{"/v1/operator/endpoints/{opeid}/secret/rotate", ``, `SELECT count(*) FROM endpoint_secret`},
		{"/v1/operator/endpoints/{opeid}/secret/end-rotation", ``, `SELECT version FROM endpoint WHERE id = '` + opEP.ID + `'`},
		{"/v1/operator/endpoints/{opeid}/test", ``, deliveriesTopic},
		{"/v1/operator/deliveries/{opdid}/replay", ``, `SELECT coalesce(max(attempt_no), 0) FROM replay_reservation`},
	}
	for _, c := range cases {
		delete(posts, strings.NewReplacer("{opeid}", "{eid}", "{opdid}", "{did}").Replace(c.path))
		path := strings.NewReplacer("{pid}", "acme", "{eid}", ep.ID, "{did}", did, "{jid}", jid, "{opeid}", opEP.ID, "{opdid}", opDid).Replace(c.path)
		t.Run(c.path, func(t *testing.T) {
			key := "k-" + c.path
			first := e.doWith(idem(key), operatorToken, "POST", path, c.body)
			if first.Status/100 != 2 {
				t.Fatalf("first: %s", first)
			}
			count := func() int64 {
				if c.count == deliveriesTopic {
					return e.endOffsets(e.Names.Deliveries)
				}
				var n int64
				if err := e.DB.Pool.QueryRow(context.Background(), c.count).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			before := count()
			second := e.doWith(idem(key), operatorToken, "POST", path, c.body)
			if second.Status != first.Status || !bytes.Equal(second.Body, first.Body) || second.Header.Get(IdempotencyReplayedHeader) != "true" {
				t.Fatalf("second: %s, want the first answer %s", second, first)
			}
			if after := count(); after != before {
				t.Fatalf("the repeated request changed %q from %d to %d", c.count, before, count())
			}
		})
	}
	for p := range posts {
		t.Errorf("POST %s has no idempotency case here", p)
	}
}

// TestProblemDetails: every error is an RFC 9457 problem (application/problem+json) with the
// failing field and the request id the response header carries.
func TestProblemDetails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	base := "/v1/partners/acme/endpoints"
	cases := []struct {
		name, token, method, path, body string
		status                          int
		code, field                     string
		fields                          []string
	}{
		{"validation", operatorToken, "POST", base, `{"url":"","event_types":["Not A Type"]}`, 422, CodeValidation, "url", []string{"url", "event_types[0]"}},
		{"unknown field", operatorToken, "POST", base, `{"url":"https://hooks.example.com/","event_types":["*"],"colour":"red"}`, 400, CodeInvalidRequest, "colour", nil},
		{"wrong type", operatorToken, "POST", base, `{"url":5}`, 400, CodeInvalidRequest, "url", nil},
		{"query parameter", operatorToken, "GET", base + "?limit=0", ``, 400, CodeInvalidRequest, "limit", nil},
		{"url refused", operatorToken, "POST", base, `{"url":"https://private.example.com/","event_types":["*"]}`, 422, CodeURLRefused, "url", []string{"url"}},
		{"not found", operatorToken, "GET", base + "/ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8", ``, 404, CodeNotFound, "", nil},
		{"no route", operatorToken, "GET", "/v1/nothing", ``, 404, CodeNotFound, "", nil},
		{"unauthorized", "wrong-token-of-some-length", "GET", base, ``, 401, CodeUnauthorized, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.doWith(nil, c.token, c.method, c.path, c.body)
			var p errorBody
			r.json(t, &p)
			rid := r.Header.Get(RequestIDHeader)
			if r.Status != c.status || r.Header.Get("Content-Type") != ProblemContentType {
				t.Fatalf("%s (%s), want %d as %s", r, r.Header.Get("Content-Type"), c.status, ProblemContentType)
			}
			if p.Type != problemTypePrefix+c.code || p.Code != c.code || p.Status != c.status || p.Title == "" || p.Detail == "" ||
				!strings.HasPrefix(rid, requestIDPrefix) || p.RequestID != rid || p.Field != c.field {
				t.Fatalf("problem %+v (request id header %q), want code %s, field %q", p, rid, c.code, c.field)
			}
			for i, f := range c.fields {
				if len(p.Errors) != len(c.fields) || p.Errors[i].Field != f || p.Errors[i].Detail == "" {
					t.Fatalf("errors %+v, want fields %v", p.Errors, c.fields)
				}
			}
		})
	}
	// Every answer has its own request id, successes too.
	a, b := e.doWith(nil, operatorToken, "GET", base, ""), e.doWith(nil, operatorToken, "GET", base, "")
	if a.Header.Get(RequestIDHeader) == "" || a.Header.Get(RequestIDHeader) == b.Header.Get(RequestIDHeader) {
		t.Fatalf("request ids %q and %q", a.Header.Get(RequestIDHeader), b.Header.Get(RequestIDHeader))
	}
}

// TestPatchNullClears: null in a PATCH returns each nullable field to its default, one test per
// field; the fields without a default refuse null, naming the field, and keep their value.
func TestPatchNullClears(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	var ep endpointView
	e.must(201, operatorToken, "POST", "/v1/partners/acme/endpoints", map[string]any{
		"url": "https://hooks.example.com/in", "event_types": []string{"customer.*"}, "description": "billing",
		"max_in_flight": 5, "rate_limit_per_sec": 12.5, "ordered": true,
	}).json(t, &ep)
	path := "/v1/partners/acme/endpoints/" + ep.ID
	if ep.RateLimitPerSec == nil || ep.MaxInFlight != 5 || !ep.Ordered || ep.Description != "billing" {
		t.Fatalf("created %+v", ep)
	}
	cleared := []struct {
		field string
		check func(endpointView) bool
	}{
		{"rate_limit_per_sec", func(v endpointView) bool { return v.RateLimitPerSec == nil }},
		{"description", func(v endpointView) bool { return v.Description == "" }},
		{"max_in_flight", func(v endpointView) bool { return v.MaxInFlight == defaultMaxInFlight }},
		{"ordered", func(v endpointView) bool { return !v.Ordered }},
		{"schema_version", func(v endpointView) bool { return v.SchemaVersion == schemaVersions[len(schemaVersions)-1] }},
	}
	for _, c := range cleared {
		t.Run(c.field, func(t *testing.T) {
			var before, after, read endpointView
			e.must(200, operatorToken, "GET", path, nil).json(t, &before)
			e.must(200, operatorToken, "PATCH", path, `{"`+c.field+`":null}`).json(t, &after)
			e.must(200, operatorToken, "GET", path, nil).json(t, &read)
			if !c.check(after) || !c.check(read) {
				t.Fatalf("after PATCH {%q: null}: answered %+v, read %+v", c.field, after, read)
			}
			if read.Version <= before.Version {
				t.Fatalf("version %d after %d: the change was not made", read.Version, before.Version)
			}
		})
	}
	for _, field := range []string{"url", "event_types"} {
		t.Run(field, func(t *testing.T) {
			r := e.do(operatorToken, "PATCH", path, `{"`+field+`":null}`)
			var p errorBody
			r.json(t, &p)
			var read endpointView
			e.must(200, operatorToken, "GET", path, nil).json(t, &read)
			if r.Status != 422 || p.Field != field || read.URL != ep.URL || len(read.EventTypes) != 1 {
				t.Fatalf("PATCH {%q: null}: %s; endpoint now %s %v", field, r, read.URL, read.EventTypes)
			}
		})
	}
}

// TestAPIKeyNameAndLastUse: a key carries the name it was created with, and its last use shows
// in the list.
func TestAPIKeyNameAndLastUse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(201, operatorToken, "POST", "/v1/partners", map[string]string{"id": "acme"})
	var k createdAPIKey
	e.must(201, operatorToken, "POST", "/v1/partners/acme/api-keys", map[string]string{"name": "billing sync"}).json(t, &k)
	if k.Name != "billing sync" {
		t.Fatalf("created key %+v", k)
	}
	var keys list[apiKeyView]
	e.must(200, operatorToken, "GET", "/v1/partners/acme/api-keys", nil).json(t, &keys)
	if len(keys.Data) != 1 || keys.Data[0].Name != "billing sync" || keys.Data[0].LastUsedAt != nil {
		t.Fatalf("keys before use: %+v", keys.Data)
	}
	e.must(200, k.Key, "GET", "/v1/partners/acme/endpoints", nil)
	e.must(200, operatorToken, "GET", "/v1/partners/acme/api-keys", nil).json(t, &keys)
	if used := keys.Data[0].LastUsedAt; used == nil || time.Since(used.Time) > time.Minute {
		t.Fatalf("last_used_at after a use: %v", used)
	}
	r := e.do(operatorToken, "POST", "/v1/partners/acme/api-keys", map[string]string{"name": strings.Repeat("n", maxAPIKeyName+1)})
	var p errorBody
	r.json(t, &p)
	if r.Status != http.StatusUnprocessableEntity || p.Field != "name" {
		t.Fatalf("an over-long name: %s", r)
	}
}
