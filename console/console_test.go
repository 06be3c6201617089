package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/admin"
	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/console"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

const operatorToken = "operator-token-for-the-console-tests"

// site is an admin API and its console on a real PostgreSQL, served over HTTP as the admin
// command serves them.
type site struct {
	url string
	api *adminclient.ClientWithResponses // as the operator
	reg *prometheus.Registry
	db  *testenv.Database
}

func newSite(t *testing.T) *site {
	t.Helper()
	return newSiteWith(t, func(*console.Config) {})
}

// newSiteWith is newSite with the console's configuration adjusted by adjust.
func newSiteWith(t *testing.T, adjust func(*console.Config)) *site {
	t.Helper()
	db := testenv.NewDatabase(t)
	k := testenv.NewKafka(t)
	k.CreateTopics(t)
	_, key := testenv.SecretKey(t)
	reg := prometheus.NewRegistry()
	cfg := admin.DefaultConfig()
	cfg.Base = k.Base(t, reg)
	cfg.OperatorToken, cfg.SecretKeys = operatorToken, key
	api, err := admin.New(cfg, db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	ccfg := console.DefaultConfig()
	ccfg.API, ccfg.Logger, ccfg.Registerer = api.Handler(), cfg.Logger, reg
	adjust(&ccfg)
	c, err := console.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", api.Handler())
	mux.Handle(console.Prefix, c.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	op, err := adminclient.New(srv.URL, operatorToken)
	if err != nil {
		t.Fatal(err)
	}
	return &site{url: srv.URL, api: op, reg: reg, db: db}
}

// partner creates a partner with an API key and an endpoint, and returns the key and the
// endpoint id.
func (s *site) partner(t *testing.T, id string) (key, endpoint string) {
	t.Helper()
	ctx := context.Background()
	p, err := s.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: id})
	must(t, p, err)
	k, err := s.api.CreateAPIKeyWithResponse(ctx, id, adminclient.APIKeyCreate{})
	must(t, k, err)
	e, err := s.api.CreateEndpointWithResponse(ctx, id, adminclient.EndpointCreate{URL: "https://93.184.216.34/hooks", EventTypes: []string{"*"}})
	must(t, e, err)
	return k.JSON201.Key, e.JSON201.ID
}

func must(t *testing.T, res adminclient.Response, err error) {
	t.Helper()
	if err := adminclient.Check(res, err); err != nil {
		t.Fatal(err)
	}
}

// browser is a client that keeps the console's cookies by hand: Go's cookie jar would not send
// Secure cookies over the test's plain HTTP, where a browser does for 127.0.0.1.
type browser struct {
	t       *testing.T
	base    string
	cookies map[string]string
}

func (s *site) browser(t *testing.T) *browser {
	return &browser{t: t, base: s.url, cookies: map[string]string{}}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values, header ...string) answer {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := cl.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	return answer{status: res.StatusCode, header: res.Header, body: string(raw)}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field in the page:\n%s", page)
	}
	return m[1]
}

// signIn signs in with token and returns the CSRF token of the session's pages.
func (b *browser) signIn(token string) answer {
	b.t.Helper()
	page := b.do("GET", "/console/sign-in", nil)
	if page.status != http.StatusOK {
		b.t.Fatalf("sign-in page: %d", page.status)
	}
	return b.do("POST", "/console/sign-in", url.Values{"csrf": {csrfOf(b.t, page.body)}, "token": {token}})
}

// signedIn creates partner id with an endpoint (see partner) and returns a browser signed in
// with the partner's key, and the endpoint's id.
func (s *site) signedIn(t *testing.T, id string) (b *browser, endpoint string) {
	t.Helper()
	key, endpoint := s.partner(t, id)
	b = s.browser(t)
	if res := b.signIn(key); res.status != http.StatusSeeOther {
		t.Fatalf("sign-in as %s: %d\n%s", id, res.status, res.body)
	}
	return b, endpoint
}

func TestSessionCookieFlagsAndCSP(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	key, _ := s.partner(t, "acme")
	b := s.browser(t)

	page := b.do("GET", "/console/sign-in", nil)
	for _, p := range []answer{page, b.do("GET", "/console/static/console.js", nil)} {
		csp := p.header.Get("Content-Security-Policy")
		if csp != console.ContentSecurityPolicy || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Fatalf("Content-Security-Policy = %q", csp)
		}
	}
	if strings.Contains(page.body, "<script>") || strings.Contains(page.body, " style=") {
		t.Fatalf("the sign-in page has inline script or style:\n%s", page.body)
	}
	res := b.do("POST", "/console/sign-in", url.Values{"csrf": {csrfOf(t, page.body)}, "token": {key}})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/console/partners/acme/endpoints" {
		t.Fatalf("sign-in answered %d to %q", res.status, res.header.Get("Location"))
	}
	var session *http.Cookie
	for _, line := range res.header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name == "hookstream_console" {
			session = c
		}
	}
	if session == nil {
		t.Fatalf("no session cookie set: %q", res.header.Values("Set-Cookie"))
	}
	if !session.HttpOnly || !session.Secure || session.SameSite != http.SameSiteStrictMode || session.Path != "/console" {
		t.Fatalf("session cookie %q: want HttpOnly, Secure, SameSite=Strict, Path=/console", session.String())
	}
	if strings.Contains(session.Value, key) || len(session.Value) < 40 {
		t.Fatalf("session cookie value %q is not an opaque random id", session.Value)
	}
	home := b.do("GET", "/console/partners/acme/endpoints", nil)
	if home.status != http.StatusOK || home.header.Get("Content-Security-Policy") == "" || home.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("endpoints page: %d, headers %v", home.status, home.header)
	}
	if strings.Contains(home.body, key) {
		t.Fatal("a page shows the API key")
	}
}

func TestSignInRefusesBadTokensAndForgedForms(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := s.browser(t)
	if res := b.signIn("hsk_not-a-key"); res.status != http.StatusUnauthorized || !strings.Contains(res.body, "does not accept this token") {
		t.Fatalf("a bad key: %d\n%s", res.status, res.body)
	}
	// A sign-in form posted without the double-submit token (login CSRF) opens no session.
	if res := b.do("POST", "/console/sign-in", url.Values{"token": {operatorToken}}); res.status != http.StatusForbidden {
		t.Fatalf("sign-in without the CSRF token: %d", res.status)
	}
	if _, ok := b.cookies["hookstream_console"]; ok {
		t.Fatal("a session cookie was set")
	}
	if got := testenv.Counter(t, s.reg, "hookstream_console_sign_ins_total", "outcome", "refused"); got != 1 {
		t.Fatalf("refused sign-ins = %v, want 1", got)
	}
}

// Over plain HTTP on a name that is not loopback a browser would drop the Secure cookie and come
// back signed out without a word; the console says why instead, and opens no session.
func TestSignInOverPlainHTTPElsewhereSaysWhy(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := s.browser(t)
	page := b.do("GET", "/console/sign-in", nil, "Host", "console.example.com")
	if !strings.Contains(page.body, "needs HTTPS") {
		t.Fatalf("sign-in page on a plain-HTTP name:\n%s", page.body)
	}
	res := b.do("POST", "/console/sign-in", url.Values{"csrf": {csrfOf(t, page.body)}, "token": {operatorToken}}, "Host", "console.example.com")
	if res.status != http.StatusBadRequest || !strings.Contains(res.body, "needs HTTPS") {
		t.Fatalf("sign-in over plain HTTP: %d", res.status)
	}
	if _, ok := b.cookies["hookstream_console"]; ok {
		t.Fatal("a session was opened")
	}
	// Behind a TLS proxy that says so, the same request signs in.
	page = b.do("GET", "/console/sign-in", nil, "Host", "console.example.com", "X-Forwarded-Proto", "https")
	res = b.do("POST", "/console/sign-in", url.Values{"csrf": {csrfOf(t, page.body)}, "token": {operatorToken}},
		"Host", "console.example.com", "X-Forwarded-Proto", "https")
	if res.status != http.StatusSeeOther || b.cookies["hookstream_console"] == "" {
		t.Fatalf("sign-in behind TLS: %d", res.status)
	}
}

func TestWriteWithoutCSRFTokenIsRefused(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b, eid := s.signedIn(t, "acme")
	page := b.do("GET", "/console/partners/acme/endpoints/"+eid, nil)
	if page.status != http.StatusOK {
		t.Fatalf("endpoint page: %d\n%s", page.status, page.body)
	}
	csrf := csrfOf(t, page.body)
	disable := "/console/partners/acme/endpoints/" + eid + "/disable"

	for name, form := range map[string]url.Values{
		"no token":    {"reason": {"x"}},
		"wrong token": {"reason": {"x"}, "csrf": {csrf[:len(csrf)-2] + "xx"}},
	} {
		if res := b.do("POST", disable, form); res.status != http.StatusForbidden || !strings.Contains(res.body, "CSRF") {
			t.Fatalf("%s: %d\n%s", name, res.status, res.body)
		}
	}
	// Another site's form, even with the token, is refused by its origin.
	if res := b.do("POST", disable, url.Values{"csrf": {csrf}}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"); res.status != http.StatusForbidden {
		t.Fatalf("cross-origin post: %d", res.status)
	}
	ep, err := s.api.GetEndpointWithResponse(context.Background(), "acme", eid)
	must(t, ep, err)
	if ep.JSON200.Status != adminclient.EndpointStatusActive {
		t.Fatalf("a refused write changed the endpoint: %s", ep.JSON200.Status)
	}
	if got := testenv.Counter(t, s.reg, "hookstream_console_requests_refused_total", "reason", "csrf"); got != 2 {
		t.Fatalf("csrf refusals = %v, want 2", got)
	}

	// With the token the same write goes through.
	if res := b.do("POST", disable, url.Values{"csrf": {csrf}, "reason": {"maintenance"}}); res.status != http.StatusSeeOther {
		t.Fatalf("disable with the token: %d\n%s", res.status, res.body)
	}
	ep, err = s.api.GetEndpointWithResponse(context.Background(), "acme", eid)
	must(t, ep, err)
	if ep.JSON200.Status != adminclient.EndpointStatusDisabled || ep.JSON200.DisabledReason == nil || *ep.JSON200.DisabledReason != "maintenance" {
		t.Fatalf("after disable: %+v", ep.JSON200)
	}
	// Signed out, the session's token no longer writes anything.
	b.do("POST", "/console/sign-out", url.Values{"csrf": {csrf}})
	if res := b.do("POST", "/console/partners/acme/endpoints/"+eid+"/enable", url.Values{"csrf": {csrf}}); res.status != http.StatusUnauthorized {
		t.Fatalf("enable after sign-out: %d", res.status)
	}
}

func TestPartnerScopeComesFromTheAPI(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b, _ := s.signedIn(t, "acme")
	_, other := s.partner(t, "globex")

	for _, path := range []string{"/console/operator/partners", "/console/operator/failing", "/console/operator/dead-letters"} {
		if res := b.do("GET", path, nil); res.status != http.StatusForbidden || !strings.Contains(res.body, "operator token") {
			t.Fatalf("partner session on %s: %d\n%s", path, res.status, res.body)
		}
	}
	for _, path := range []string{"/console/partners/globex/endpoints", "/console/partners/globex/endpoints/" + other,
		"/console/partners/acme/endpoints/" + other} {
		if res := b.do("GET", path, nil); res.status != http.StatusNotFound {
			t.Fatalf("partner session on %s: %d", path, res.status)
		}
	}
	page := b.do("GET", "/console/partners/acme/endpoints", nil)
	csrf := csrfOf(t, page.body)
	if res := b.do("POST", "/console/partners/globex/endpoints/"+other+"/disable", url.Values{"csrf": {csrf}}); res.status != http.StatusNotFound {
		t.Fatalf("disabling another partner's endpoint: %d", res.status)
	}
	ep, err := s.api.GetEndpointWithResponse(context.Background(), "globex", other)
	must(t, ep, err)
	if ep.JSON200.Status != adminclient.EndpointStatusActive {
		t.Fatal("a partner's session disabled another partner's endpoint")
	}

	op := s.browser(t)
	if res := op.signIn(operatorToken); res.header.Get("Location") != "/console/operator/partners" {
		t.Fatalf("operator sign-in went to %q", res.header.Get("Location"))
	}
	res := op.do("GET", "/console/operator/partners", nil)
	if res.status != http.StatusOK || !strings.Contains(res.body, "globex") || !strings.Contains(res.body, "acme") {
		t.Fatalf("operator partners page: %d\n%s", res.status, res.body)
	}
	if res := op.do("GET", "/console/partners/globex/endpoints/"+other, nil); res.status != http.StatusOK {
		t.Fatalf("operator on a partner's endpoint: %d", res.status)
	}
}

func TestBadInputIsAClearAnswer(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b, eid := s.signedIn(t, "acme")
	for path, want := range map[string]int{
		"/console/partners/acme/endpoints/" + eid + "?since=yesterday": http.StatusBadRequest,
		"/console/partners/acme/endpoints/" + eid + "?status=abc":      http.StatusBadRequest,
		"/console/partners/acme/endpoints/" + eid + "?category=nope":   http.StatusBadRequest,
		"/console/partners/acme/deliveries/dlv_nope":                   http.StatusNotFound,
		"/console/partners/acme/deliveries/dlv_nope/attempts/x":        http.StatusNotFound,
		"/console/partners/acme/replay-jobs/nope":                      http.StatusNotFound,
		"/console/nowhere": http.StatusNotFound,
	} {
		if res := b.do("GET", path, nil); res.status != want {
			t.Errorf("%s: %d, want %d\n%s", path, res.status, want, res.body)
		}
	}
	page := b.do("GET", "/console/partners/acme/endpoints/new", nil)
	csrf := csrfOf(t, page.body)
	res := b.do("POST", "/console/partners/acme/endpoints", url.Values{"csrf": {csrf}, "url": {"http://10.0.0.1/hooks"}, "event_types": {"*"}})
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, "form-error") {
		t.Fatalf("a refused URL: %d\n%s", res.status, res.body)
	}
	res = b.do("POST", "/console/partners/acme/endpoints", url.Values{"csrf": {csrf}, "url": {"https://93.184.216.34/x"}, "max_in_flight": {"many"}})
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, "whole number") {
		t.Fatalf("a bad number: %d\n%s", res.status, res.body)
	}
}

// Signing in again and again with one partner key churns that key's own sessions only: the
// operator and other partners stay signed in, however small the store.
func TestManySignInsWithOneKeyKeepOthersSignedIn(t *testing.T) {
	t.Parallel()
	s := newSiteWith(t, func(c *console.Config) { c.MaxSessions, c.MaxSessionsPerCredential = 8, 2 })
	op := s.browser(t)
	if res := op.signIn(operatorToken); res.status != http.StatusSeeOther {
		t.Fatalf("operator sign-in: %d", res.status)
	}
	globex, _ := s.signedIn(t, "globex")
	key, _ := s.partner(t, "acme")
	for i := 0; i < 30; i++ {
		if res := s.browser(t).signIn(key); res.status != http.StatusSeeOther {
			t.Fatalf("acme sign-in %d: %d", i, res.status)
		}
	}
	if res := op.do("GET", "/console/operator/partners", nil); res.status != http.StatusOK {
		t.Fatalf("the operator was signed out by acme's sign-ins: %d", res.status)
	}
	if res := globex.do("GET", "/console/partners/globex/endpoints", nil); res.status != http.StatusOK {
		t.Fatalf("globex was signed out by acme's sign-ins: %d", res.status)
	}
}
