package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The endpoint form sets what the API sets (filter, retry policy, headers, authentication,
// ordering, rate and concurrency) and shows the API's own refusals beside their fields; a
// secret typed into it is sent and never shown again, not even by the form shown again after a
// refusal.
func TestEndpointFormSetsWhatTheAPISets(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b, _ := s.signedIn(t, "acme")
	ctx := context.Background()
	const clientSecret = "client-secret-typed-once"
	const password = "basic-password-typed-once"

	page := b.do("GET", "/console/partners/acme/endpoints/new", nil)
	if page.status != http.StatusOK {
		t.Fatalf("new endpoint page: %d", page.status)
	}
	csrf := csrfOf(t, page.body)
	form := url.Values{"csrf": {csrf}, "url": {"https://93.184.216.34/hooks"}, "event_types": {"customer.*, balance.credited"},
		"description": {"billing"}, "filter": {"data.amount.value >= 100 and"}, "ordering": {"strict"},
		"max_in_flight": {"8"}, "rate_limit_per_sec": {"2.5"},
		"retry_delays": {"1, 1m"}, "retry_attempts": {"4"}, "retry_client_errors": {"stop"},
		"retry_event_types": {`{"balance.*": {"attempts": 2}}`},
		"headers":           {"X-Tenant: acme\nX-Region: eu"},
		"auth_type":         {"oauth2"}, "auth_token_url": {"https://93.184.216.34/oauth/token"}, "auth_client_id": {"hookstream-acme"},
		"auth_client_secret": {clientSecret}, "auth_scopes": {"webhooks:write events"}, "auth_client_auth_method": {"client_secret_post"},
		// The fields of another kind of authentication are not sent.
		"auth_username": {"nobody"}, "auth_password": {password}}

	// Refused by the API: each reason beside its field, nothing created, the secret not echoed.
	res := b.do("POST", "/console/partners/acme/endpoints", form)
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("an invalid filter and delay: %d\n%s", res.status, res.body)
	}
	for field, want := range map[string]string{"filter": "position", "retry_delays": "delays_seconds[0]: must be from 5"} {
		if got := fieldError(res.body, field); !strings.Contains(got, want) {
			t.Errorf("beside %s: %q, want the API's %q", field, got, want)
		}
	}
	if strings.Contains(res.body, clientSecret) || strings.Contains(res.body, password) {
		t.Fatal("the form shown again holds a secret typed into it")
	}
	if !strings.Contains(res.body, "data.amount.value &gt;= 100 and") || !strings.Contains(res.body, "hookstream-acme") {
		t.Fatal("the form shown again lost what was typed")
	}
	list, err := s.api.ListEndpointsWithResponse(ctx, "acme", nil)
	must(t, list, err)
	if len(list.JSON200.Data) != 1 {
		t.Fatalf("a refused form created an endpoint: %d endpoints", len(list.JSON200.Data))
	}

	form.Set("filter", "data.amount.value >= 100")
	form.Set("retry_delays", "5s, 1m")
	res = b.do("POST", "/console/partners/acme/endpoints", form)
	if res.status != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", res.status, res.body)
	}
	eid := strings.TrimPrefix(res.header.Get("Location"), "/console/partners/acme/endpoints/")
	got, err := s.api.GetEndpointWithResponse(ctx, "acme", eid)
	must(t, got, err)
	e := got.JSON200
	if e.Filter == nil || *e.Filter != "data.amount.value >= 100" || e.Ordering != "strict" || e.MaxInFlight != 8 ||
		e.RateLimitPerSec == nil || *e.RateLimitPerSec != 2.5 || strings.Join(e.EventTypes, ",") != "customer.*,balance.credited" {
		t.Fatalf("the API has %+v", e)
	}
	rp := e.RetryPolicy
	if rp == nil || rp.DelaysSeconds == nil || len(*rp.DelaysSeconds) != 2 || (*rp.DelaysSeconds)[1] != 60 || *rp.Attempts != 4 ||
		*rp.ClientErrors != "stop" || (*rp.EventTypes)["balance.*"].Attempts == nil || *(*rp.EventTypes)["balance.*"].Attempts != 2 {
		t.Fatalf("retry policy %+v", rp)
	}
	if e.Headers["X-Tenant"] != "acme" || e.Headers["X-Region"] != "eu" || len(e.Headers) != 2 {
		t.Fatalf("headers %v", e.Headers)
	}
	a := e.Auth
	if a == nil || a.Type != "oauth2" || *a.ClientID != "hookstream-acme" || *a.TokenURL != "https://93.184.216.34/oauth/token" ||
		strings.Join(*a.Scopes, " ") != "webhooks:write events" || *a.ClientAuthMethod != "client_secret_post" || a.Username != nil {
		t.Fatalf("auth %+v", a)
	}

	endpointPage := "/console/partners/acme/endpoints/" + eid
	shown := b.do("GET", endpointPage, nil)
	for _, want := range []string{"data.amount.value &gt;= 100", "X-Tenant: acme", "hookstream-acme", "strict", "delays 5 s, 1 min",
		"4 attempts in all", "other 4xx: stop", "2.5 requests per second", "at most 8 in flight"} {
		if !strings.Contains(shown.body, want) {
			t.Errorf("the endpoint page does not show %q", want)
		}
	}
	edit := b.do("GET", endpointPage+"/edit", nil)
	for _, p := range []answer{shown, edit} {
		if strings.Contains(p.body, clientSecret) {
			t.Fatal("a page shows the client secret")
		}
	}
	if !regexp.MustCompile(`<option value="keep" selected>keep the current one \(OAuth 2.0 client credentials, client hookstream-acme`).MatchString(edit.body) {
		t.Fatalf("the edit form does not keep the current authentication:\n%s", edit.body)
	}

	// Edit: the authentication kept, headers removed, a new schedule; then basic authentication.
	ef := url.Values{"csrf": {csrf}, "url": {"https://93.184.216.34/hooks"}, "event_types": {"*"}, "ordering": {"none"},
		"schema_version": {"1"}, "signature_scheme": {"v1"}, "was_scheme": {"v1"}, "retry_delays": {"10"}, "auth_type": {"keep"}}
	if res := b.do("POST", endpointPage+"/edit", ef); res.status != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", res.status, res.body)
	}
	got, err = s.api.GetEndpointWithResponse(ctx, "acme", eid)
	must(t, got, err)
	e = got.JSON200
	if e.Auth == nil || *e.Auth.ClientID != "hookstream-acme" || len(e.Headers) != 0 || e.Filter != nil || e.RateLimitPerSec != nil ||
		e.Ordering != "none" || e.SchemaVersion != 1 || e.MaxInFlight != 64 || e.RetryPolicy == nil || e.RetryPolicy.Attempts != nil ||
		len(*e.RetryPolicy.DelaysSeconds) != 1 || e.SignatureScheme != "v1" || len(e.Secrets) != 1 {
		t.Fatalf("after the edit the API has %+v", e)
	}
	ef.Set("auth_type", "basic")
	ef.Set("auth_username", "acme")
	ef.Set("auth_password", password)
	ef.Set("auth_client_secret", clientSecret)
	if res := b.do("POST", endpointPage+"/edit", ef); res.status != http.StatusSeeOther {
		t.Fatalf("edit to basic: %d\n%s", res.status, res.body)
	}
	got, err = s.api.GetEndpointWithResponse(ctx, "acme", eid)
	must(t, got, err)
	if a := got.JSON200.Auth; a == nil || a.Type != "basic" || *a.Username != "acme" || a.ClientID != nil {
		t.Fatalf("auth after the edit %+v", got.JSON200.Auth)
	}
	for _, p := range []string{endpointPage, endpointPage + "/edit"} {
		if body := b.do("GET", p, nil).body; strings.Contains(body, password) {
			t.Fatalf("%s shows the password", p)
		}
	}
	// No authentication at all.
	ef.Set("auth_type", "none")
	if res := b.do("POST", endpointPage+"/edit", ef); res.status != http.StatusSeeOther {
		t.Fatalf("edit to none: %d\n%s", res.status, res.body)
	}
	got, err = s.api.GetEndpointWithResponse(ctx, "acme", eid)
	must(t, got, err)
	if got.JSON200.Auth != nil {
		t.Fatalf("auth after removing it %+v", got.JSON200.Auth)
	}
}

// What the console cannot read as the API's types is refused beside its field, and nothing is
// sent.
func TestEndpointFormRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b, _ := s.signedIn(t, "acme")
	csrf := csrfOf(t, b.do("GET", "/console/partners/acme/endpoints/new", nil).body)
	res := b.do("POST", "/console/partners/acme/endpoints", url.Values{"csrf": {csrf}, "url": {"https://93.184.216.34/x"},
		"event_types": {"*"}, "retry_delays": {"soon"}, "retry_event_types": {"[1]"}, "headers": {"no colon here"}})
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("unreadable fields: %d", res.status)
	}
	for field, want := range map[string]string{"retry_delays": `"soon" is not a number of seconds`, "retry_event_types": "JSON object",
		"headers": "line 1 has no colon"} {
		if got := fieldError(res.body, field); !strings.Contains(got, want) {
			t.Errorf("beside %s: %q, want %q", field, got, want)
		}
	}
	list, err := s.api.ListEndpointsWithResponse(context.Background(), "acme", nil)
	must(t, list, err)
	if len(list.JSON200.Data) != 1 {
		t.Fatal("an unreadable form created an endpoint")
	}
}

// fieldError is the refusal the form shows beside field, "" when there is none.
func fieldError(page, field string) string {
	m := regexp.MustCompile(`id="error-` + regexp.QuoteMeta(field) + `"[^>]*>([^<]*)<`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return strings.NewReplacer("&#34;", `"`, "&gt;", ">", "&lt;", "<", "&#39;", "'", "&amp;", "&").Replace(m[1])
}
