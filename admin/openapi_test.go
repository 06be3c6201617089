package admin

import (
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// unitAPI is an API whose PostgreSQL and Kafka are never reached (lazy connections), for
// tests of routing and request handling that stop before any query.
func unitAPI(t *testing.T) *API {
	t.Helper()
	pool := testenv.UnreachablePool(t)
	_, key := testenv.SecretKey(t)
	cfg := DefaultConfig()
	cfg.Brokers, cfg.OperatorToken, cfg.SecretKeys, cfg.Egress = []string{"127.0.0.1:1"}, operatorToken, key, testGuard(t)
	cfg.Registerer = prometheus.NewRegistry()
	a, err := New(cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		License struct {
			Name string `json:"name"`
		} `json:"license"`
	} `json:"info"`
	Tags []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tags"`
	Paths map[string]map[string]openAPIOperation `json:"paths"`
}

type openAPIOperation struct {
	OperationID string                     `json:"operationId"`
	Tags        []string                   `json:"tags"`
	Security    []map[string][]string      `json:"security"`
	Responses   map[string]json.RawMessage `json:"responses"`
	Parameters  []struct {
		Ref  string `json:"$ref"`
		Name string `json:"name"`
		In   string `json:"in"`
	} `json:"parameters"`
	Access string `json:"x-hookstream-access"`
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// TestOpenAPIMatchesRouter checks openapi.json against the real router in both directions:
// every registered route is documented with its access rule, and every documented operation
// is routed by the mux to exactly that pattern.
func TestOpenAPIMatchesRouter(t *testing.T) {
	a := unitAPI(t)
	var doc openAPIDoc
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi version %q, want 3.1.0", doc.OpenAPI)
	}
	accessNames := map[access]string{public: "public", anyCaller: "any", operator: "operator", partnerOwn: "partner"}

	routed := map[string]bool{}
	for _, rt := range a.routes {
		routed[rt.pattern()] = true
		op, ok := doc.Paths[rt.path][strings.ToLower(rt.method)]
		if !ok {
			t.Errorf("route %s is not in openapi.json", rt.pattern())
			continue
		}
		if op.Access != accessNames[rt.access] {
			t.Errorf("%s: documented access %q, router has %q", rt.pattern(), op.Access, accessNames[rt.access])
		}
		if (rt.access == public) != (len(op.Security) == 0) {
			t.Errorf("%s: security %v does not match access %q", rt.pattern(), op.Security, accessNames[rt.access])
		}
		if rt.access != public && op.Responses["401"] == nil {
			t.Errorf("%s: 401 is not documented", rt.pattern())
		}
		if rt.access == operator && op.Responses["403"] == nil {
			t.Errorf("%s: 403 is not documented", rt.pattern())
		}
		for _, status := range refusals(rt) {
			if op.Responses[status] == nil {
				t.Errorf("%s: %s is not documented", rt.pattern(), status)
			}
		}
	}

	// Every operation is tagged with a declared tag, and every declared tag is used.
	if doc.Info.License.Name == "" {
		t.Error("info.license has no name")
	}
	tagged := map[string]int{}
	for _, tag := range doc.Tags {
		if tag.Name == "" || tag.Description == "" {
			t.Errorf("tag %+v lacks a name or a description", tag)
		}
		tagged[tag.Name] = 0
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if len(op.Tags) == 0 {
				t.Errorf("%s %s has no tag", strings.ToUpper(method), path)
			}
			for _, tag := range op.Tags {
				if _, ok := tagged[tag]; !ok {
					t.Errorf("%s %s: tag %q is not declared in tags", strings.ToUpper(method), path, tag)
				}
				tagged[tag]++
			}
		}
	}
	for tag, n := range tagged {
		if n == 0 {
			t.Errorf("tag %q tags no operation", tag)
		}
	}

	for path, ops := range doc.Paths {
		for method, op := range ops {
			pattern := strings.ToUpper(method) + " " + path
			if !routed[pattern] {
				t.Errorf("documented %s is not a route", pattern)
			}
			// The mux itself must send a request for this path to this pattern.
			concrete := pathParam.ReplaceAllStringFunc(path, func(p string) string { return samplePathValue(p) })
			req := httptest.NewRequest(strings.ToUpper(method), concrete, nil)
			if _, got := a.mux.Handler(req); got != pattern {
				t.Errorf("the mux routes %s %s to %q, documented as %q", req.Method, concrete, got, pattern)
			}
			// Every path parameter is declared.
			declared := map[string]bool{}
			for _, p := range op.Parameters {
				name := p.Name
				if p.Ref != "" {
					name = p.Ref[strings.LastIndex(p.Ref, "/")+1:]
				}
				declared[name] = true
			}
			for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
				if !declared[m[1]] {
					t.Errorf("%s: path parameter %s is not declared", pattern, m[1])
				}
			}
			if op.OperationID == "" {
				t.Errorf("%s has no operationId", pattern)
			}
		}
	}

	// Every $ref resolves.
	var raw any
	_ = json.Unmarshal(openAPIDocument, &raw)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && !resolves(raw, ref) {
				t.Errorf("unresolved $ref %s", ref)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(raw)

	r := call(a, "", "GET", "/v1/openapi.json", nil)
	if r.Status != 200 || string(r.Body) != string(openAPIDocument) || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /v1/openapi.json: %d %s", r.Status, r.Header)
	}
	// A 4xx every route can answer, the public document's too.
	if r := call(a, "", "GET", "/v1/openapi.json?v=%ZZ", nil); r.Status != 400 {
		t.Errorf("GET /v1/openapi.json with a query string that is not URL encoding: %s, want 400", r)
	}
}

// refusals are the 4xx statuses rt can answer whatever its handler does: 400 for a query
// string that is not URL encoding (every route) or a malformed Idempotency-Key; 404 for a path
// naming something that does not exist; for a body, 413, 415 and 422, and for a POST 409 (the
// first request of an Idempotency-Key still running).
func refusals(rt route) []string {
	out := []string{"400"}
	if strings.Contains(rt.path, "{") {
		out = append(out, "404")
	}
	switch rt.method {
	case "POST":
		out = append(out, "409", "413", "415", "422")
	case "PATCH":
		out = append(out, "413", "415", "422")
	}
	return out
}

func samplePathValue(param string) string {
	switch param {
	case "{pid}":
		return "acme"
	case "{eid}":
		return "ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8"
	case "{did}":
		return "dlv_abcdefghijklmnopqrstuvwxyz"
	case "{jid}":
		return "rpl_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8"
	case "{kid}":
		return "key_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8"
	case "{event_id}":
		return "evt_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8"
	}
	return "x"
}

func resolves(doc any, ref string) bool {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	cur := doc
	for _, part := range strings.Split(path, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

// TestRequestHandlingWithoutDependencies covers answers decided before any query: body limits,
// media types, malformed JSON and unknown fields, and the 401 for every non-public route.
func TestRequestHandlingWithoutDependencies(t *testing.T) {
	a := unitAPI(t)
	for _, rt := range a.routes {
		if rt.access == public {
			continue
		}
		path := pathParam.ReplaceAllStringFunc(rt.path, samplePathValue)
		if r := call(a, "", rt.method, path, nil); r.Status != 401 {
			t.Errorf("%s without a token: %s", rt.pattern(), r)
		}
	}
	for _, tt := range []struct {
		body string
		want int
		msg  string
	}{
		{`{"id":"acme","colour":"red"}`, 400, `unknown field "colour"`},
		{`{"id":1}`, 400, "field id must be a string"},
		{`{"id":"acme"} {}`, 400, "exactly one JSON object"},
		{`[1]`, 400, "must be a JSON object"},
		{`{"id":`, 400, "not valid JSON"},
		{``, 400, "body is required"},
		{`{"id":"` + strings.Repeat("x", MaxBodyBytes) + `"}`, 413, "larger than"},
		{`{"id":"has space"}`, 422, "id: must be 1 to 64 characters"},
		{`{"id":"ok","name":"\u0000"}`, 422, "name: must be text without NUL"},
	} {
		r := call(a, operatorToken, "POST", "/v1/partners", tt.body)
		var eb errorBody
		_ = json.Unmarshal(r.Body, &eb)
		if r.Status != tt.want || !strings.Contains(eb.Detail, tt.msg) {
			t.Errorf("POST /v1/partners %.40q: %d %s, want %d with %q", tt.body, r.Status, eb.Detail, tt.want, tt.msg)
		}
	}
	req := httptest.NewRequest("POST", "/v1/partners", strings.NewReader(`{"id":"acme"}`))
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	req.Header.Set("Content-Type", "text/plain")
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	if rec.Code != 415 {
		t.Errorf("text/plain body: %d", rec.Code)
	}
}

func TestCursors(t *testing.T) {
	c := encodeCursor("deliveries", deliveryCursor{ID: "dlv_x"})
	var d deliveryCursor
	if e := decodeCursor(c, "deliveries", &d); e != nil || d.ID != "dlv_x" {
		t.Fatalf("round trip: %v %+v", e, d)
	}
	for _, bad := range []string{"", "!!", c[:len(c)-2], "eyJrIjoiZXZlbnRzIn0", strings.Repeat("A", 600)} {
		if e := decodeCursor(bad, "deliveries", &d); e == nil || e.Code != CodeInvalidCursor {
			t.Errorf("cursor %q accepted", bad)
		}
	}
	if e := decodeCursor(c, "endpoints", &d); e == nil {
		t.Error("a deliveries cursor was accepted by another list")
	}
	if partnerTag("a") == partnerTag("b") {
		t.Error("partner tags collide")
	}
}

func TestConfigValidate(t *testing.T) {
	_, key := testenv.SecretKey(t)
	good := DefaultConfig()
	good.Brokers, good.OperatorToken, good.SecretKeys = []string{"b:9092"}, operatorToken, key
	if err := good.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for name, change := range map[string]func(*Config){
		"no brokers":      func(c *Config) { c.Brokers = nil },
		"short token":     func(c *Config) { c.OperatorToken = "short" },
		"no key":          func(c *Config) { c.SecretKeys = secretbox.Keyring{} },
		"window":          func(c *Config) { c.ReplayWindow = 90 * 24 * 60 * 60 * 1e9 },
		"zero overlap":    func(c *Config) { c.RotationOverlap = 0 },
		"attempts":        func(c *Config) { c.AutomaticAttempts = 0 },
		"nil logger":      func(c *Config) { c.Logger = nil },
		"tiny feed scan":  func(c *Config) { c.MaxFeedScan = 10 },
		"negative outbox": func(c *Config) { c.OutboxRetention = -1 },
		"no history":      func(c *Config) { c.HistoryRetention = 0 },
		"no endpoints":    func(c *Config) { c.Limits.Endpoints = 0 },
		"no replay jobs":  func(c *Config) { c.Limits.ReplayJobs = -1 },
		"no test events":  func(c *Config) { c.Limits.TestEventsPerMinute = 0 },
		"huge replays":    func(c *Config) { c.Limits.ReplayDeliveries = 1 << 40 },
	} {
		c := good
		change(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), operatorToken) || strings.Contains(err.Error(), "short") && name == "short token" {
			t.Errorf("%s: the error shows the token: %v", name, err)
		}
	}
	kept := good
	kept.OutboxRetention, kept.ReplayWindow = 0, 90*24*time.Hour // outbox rows never dropped
	if err := kept.Validate(); err != nil {
		t.Errorf("outbox retention 0 (rows kept) refused: %v", err)
	}
	if !slices.Contains(schemaVersions, 1) {
		t.Error("schema version 1 is not accepted")
	}
}
