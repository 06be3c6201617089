package admin

import (
	"strings"
	"testing"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// TestEndpointURLsRefused registers the sender issue's hostile URL table as endpoint URLs, on
// creation and on change: every one is refused with 422 naming the egress rule, and nothing is
// written.
func TestEndpointURLsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	ep := e.endpoint("acme")
	tests := []struct {
		url  string
		rule string
	}{
		{"http://hooks.example.com/", egress.RuleScheme},
		{"ftp://hooks.example.com/", egress.RuleScheme},
		{"file:///etc/passwd", egress.RuleScheme},
		{"hooks.example.com/in", egress.RuleURL},
		{"https://hooks.example.com/#frag", egress.RuleURL},
		{"https://hooks.example.com:22/", egress.RulePort},
		{"https://hooks.example.com:6379/", egress.RulePort},
		{"https://hooks.example.com:80/", egress.RulePort},
		{"https://user:pass@hooks.example.com/", egress.RuleUserinfo},
		{"https://user@hooks.example.com/", egress.RuleUserinfo},
		{"https://localhost/", egress.RuleHost},
		{"https://api.localhost/", egress.RuleHost},
		{"https://2130706433/", egress.RuleHost},
		{"https://0x7f000001/", egress.RuleHost},
		{"https://0177.0.0.1/", egress.RuleHost},
		{"https://127.1/", egress.RuleHost},
		{"https://127.0.0.1/", egress.RuleBlockedAddress},
		{"https://10.0.0.1/", egress.RuleBlockedAddress},
		{"https://172.16.0.1/", egress.RuleBlockedAddress},
		{"https://192.168.1.1/", egress.RuleBlockedAddress},
		{"https://100.64.0.1/", egress.RuleBlockedAddress},
		{"https://169.254.1.1/", egress.RuleBlockedAddress},
		{"https://0.0.0.0/", egress.RuleBlockedAddress},
		{"https://224.0.0.1/", egress.RuleBlockedAddress},
		{"https://[::1]/", egress.RuleBlockedAddress},
		{"https://[fe80::1]/", egress.RuleBlockedAddress},
		{"https://[fd12:3456::1]/", egress.RuleBlockedAddress},
		{"https://[::ffff:127.0.0.1]/", egress.RuleBlockedAddress},
		{"https://[::ffff:10.0.0.1]/", egress.RuleBlockedAddress},
		{"https://[64:ff9b::a00:1]/", egress.RuleBlockedAddress},
		{"https://[64:ff9b::7f00:1]/", egress.RuleBlockedAddress},
		{"https://[2002:a00:1::1]/", egress.RuleBlockedAddress},
		{"https://[2002:7f00:1::]/", egress.RuleBlockedAddress},
		{"https://private.example.com/", egress.RuleBlockedAddress},
		{"https://mixed.example.com/", egress.RuleBlockedAddress},
		{"https://mapped-loopback.example.com/", egress.RuleBlockedAddress},
		{"https://169.254.169.254/latest/meta-data/", egress.RuleMetadata},
		{"https://[::ffff:169.254.169.254]/", egress.RuleMetadata},
		{"https://[fd00:ec2::254]/", egress.RuleMetadata},
		{"https://metadata.google.internal/computeMetadata/v1/", egress.RuleMetadata},
		{"https://imds.example.com/", egress.RuleMetadata},
		{"https://nat64.example.com/", egress.RuleMetadata},
		{"https://nowhere.example.com/", egress.RuleResolve},
	}
	count := func() int { return testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM endpoint`) }
	before := count()
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			for _, req := range []struct{ method, path string }{
				{"POST", "/v1/partners/acme/endpoints"},
				{"PATCH", "/v1/partners/acme/endpoints/" + ep.ID},
			} {
				r := e.do(key, req.method, req.path, map[string]any{"url": tt.url, "event_types": []string{"*"}})
				var eb errorBody
				r.json(t, &eb)
				if r.Status != 422 || eb.Code != CodeURLRefused || eb.Rule != tt.rule ||
					!strings.Contains(eb.Detail, "rule "+tt.rule) {
					t.Errorf("%s %s: %s, want 422 url_refused naming rule %s", req.method, tt.url, r, tt.rule)
				}
			}
		})
	}
	if after := count(); after != before {
		t.Errorf("%d endpoints written by refused requests", after-before)
	}
	var got endpointView
	e.must(200, key, "GET", "/v1/partners/acme/endpoints/"+ep.ID, nil).json(t, &got)
	if got.URL != ep.URL || got.Version != ep.Version {
		t.Errorf("refused changes altered the endpoint: %+v", got)
	}
	e.must(201, key, "POST", "/v1/partners/acme/endpoints", map[string]any{"url": "https://hooks.example.com:8443/in?x=1", "event_types": []string{"*"}})
}

// TestEndpointURLControlCharactersRefused: a URL holding a control character or a bidi control
// (which a terminal obeys, or which reorders the URL as shown) is refused as a validation failure
// naming its field, on creation and on change, the OAuth token URL too; percent-encoded, the
// same characters are an ordinary URL.
func TestEndpointURLControlCharactersRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	ep := e.endpoint("acme")
	for _, bad := range []string{
		"https://hooks.example.com/in/\u202egpj.exe",
		"https://hooks.example.com/in?x=\u2066a\u2069",
		"https://hooks.example.com/\u200fin",
		"https://hooks.example.com/\u061cin",
		"https://hooks.example.com/in\x1b]0;PWNED\x07",
		"https://hooks.example.com/in\u009b31m",
		"https://hooks.example.com/in\x7f",
	} {
		for _, req := range []struct {
			method, path, field string
			body                map[string]any
		}{
			{"POST", "/v1/partners/acme/endpoints", "url", map[string]any{"url": bad, "event_types": []string{"*"}}},
			{"PATCH", "/v1/partners/acme/endpoints/" + ep.ID, "url", map[string]any{"url": bad}},
			{"PATCH", "/v1/partners/acme/endpoints/" + ep.ID, "auth.token_url", map[string]any{"auth": map[string]any{
				"type": "oauth2", "token_url": bad, "client_id": "c", "client_secret": testClientSecret}}},
		} {
			r := e.do(key, req.method, req.path, req.body)
			var eb errorBody
			r.json(t, &eb)
			if r.Status != 422 || eb.Code != CodeValidation || eb.Field != req.field || !strings.Contains(eb.Detail, "control") {
				t.Errorf("%s %s with %q: %s, want 422 validation_failed naming %s", req.method, req.field, bad, r, req.field)
			}
		}
	}
	var got endpointView
	e.must(200, key, "GET", "/v1/partners/acme/endpoints/"+ep.ID, nil).json(t, &got)
	if got.URL != ep.URL || got.Version != ep.Version {
		t.Errorf("refused changes altered the endpoint: %+v", got)
	}
	e.must(201, key, "POST", "/v1/partners/acme/endpoints", map[string]any{"url": "https://hooks.example.com/in/%E2%80%AEgpj.exe", "event_types": []string{"*"}})
}

// TestValidationReportsEveryField: a creation or a change with three bad fields (a URL the
// egress policy refuses, an empty event type, a rate out of range) answers one 422 problem
// listing all three, each with its field and code, the refused URL with its rule; the same
// with an OAuth token URL refused beside a bad header.
func TestValidationReportsEveryField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	ep := e.endpoint("acme")
	bad := map[string]any{"url": "https://private.example.com/in", "event_types": []string{""}, "rate_limit_per_sec": -1}
	want := map[string]fieldError{
		"url":                {Field: "url", Code: CodeURLRefused, Rule: egress.RuleBlockedAddress},
		"event_types[0]":     {Field: "event_types[0]", Code: CodeValidation},
		"rate_limit_per_sec": {Field: "rate_limit_per_sec", Code: CodeValidation},
	}
	for _, req := range []struct{ method, path string }{
		{"POST", "/v1/partners/acme/endpoints"},
		{"PATCH", "/v1/partners/acme/endpoints/" + ep.ID},
	} {
		r := e.do(key, req.method, req.path, bad)
		var p errorBody
		r.json(t, &p)
		if r.Status != 422 || p.Code != CodeValidation || p.Type != problemTypePrefix+CodeValidation || len(p.Errors) != len(want) {
			t.Fatalf("%s: %s, want one 422 validation_failed listing %d fields", req.method, r, len(want))
		}
		for _, f := range p.Errors {
			w, ok := want[f.Field]
			if !ok || f.Code != w.Code || f.Rule != w.Rule || f.Detail == "" || !strings.Contains(p.Detail, f.Field+": ") {
				t.Errorf("%s: error %+v, want %+v in %s", req.method, f, w, r)
			}
		}
		if p.Field != p.Errors[0].Field {
			t.Errorf("%s: field %q, want the first of errors", req.method, p.Field)
		}
	}
	r := e.do(key, "PATCH", "/v1/partners/acme/endpoints/"+ep.ID, map[string]any{
		"headers": map[string]string{"Bad Header": "x"},
		"auth":    map[string]any{"type": "oauth2", "token_url": "https://10.0.0.1/token", "client_id": "c", "client_secret": testClientSecret}})
	var p errorBody
	r.json(t, &p)
	fields := map[string]string{}
	for _, f := range p.Errors {
		fields[f.Field] = f.Code
	}
	if r.Status != 422 || p.Code != CodeValidation || len(p.Errors) != 2 || fields["auth.token_url"] != CodeURLRefused || fields["headers.Bad Header"] != CodeValidation {
		t.Errorf("a bad header beside a refused token URL: %s, want both", r)
	}
	var got endpointView
	e.must(200, key, "GET", "/v1/partners/acme/endpoints/"+ep.ID, nil).json(t, &got)
	if got.URL != ep.URL || got.Version != ep.Version {
		t.Errorf("refused changes altered the endpoint: %+v", got)
	}
}
