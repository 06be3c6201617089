package reseller_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/partnerkeys"
	"github.com/hookstream/hookstream/reseller"
)

// partnerKey gives a partner an admin API key, as POST /v1/partners/{pid}/api-keys would.
func (f *fixture) partnerKey(pid string) string {
	f.t.Helper()
	key, _, err := partnerkeys.Create(f.ctx, f.db.Pool, "pak_"+pid, pid, "reseller test")
	f.must(err)
	return key
}

type client struct {
	t   testing.TB
	url string
	key string
}

func (f *fixture) client(pid string) *client {
	srv := httptest.NewServer(f.p.Handler())
	f.t.Cleanup(srv.Close)
	return &client{t: f.t, url: srv.URL, key: f.partnerKey(pid)}
}

// do sends a request and decodes a JSON answer into out (when given); it returns the status and
// the raw body.
func (c *client) do(method, path, body string, out any) (int, []byte, http.Header) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return res.StatusCode, b, res.Header
}

// The API scopes everything by the partner key, refuses bad input with a 4xx that says what is
// wrong, and shows a customer API key once.
func TestHTTPAPI(t *testing.T) {
	f := newFixture(t, reseller.Config{})
	a, b := f.client("pa"), f.client("pb")
	var cus struct {
		ID      string `json:"id"`
		Version int64  `json:"version"`
	}
	if s, body, _ := a.do("POST", "/v1/customers", `{"name":"Acme","currency":"USD","low_balance_threshold":"5.00"}`, &cus); s != 201 {
		t.Fatalf("create customer: %d %s", s, body)
	}
	var key struct {
		ID, Key, Prefix string
	}
	if s, body, _ := a.do("POST", "/v1/customers/"+cus.ID+"/api-keys", `{"name":"production"}`, &key); s != 201 || !strings.HasPrefix(key.Key, "rsk_") {
		t.Fatalf("create key: %d %s", s, body)
	}
	if _, body, _ := a.do("GET", "/v1/api-keys/"+key.ID, "", nil); bytes.Contains(body, []byte(key.Key)) || !bytes.Contains(body, []byte(key.Prefix)) {
		t.Errorf("a key read shows %s", body)
	}
	cases := []struct {
		c            *client
		method, path string
		body         string
		status       int
		says         string
	}{
		{b, "GET", "/v1/customers/" + cus.ID, "", 404, "customer not found"},
		{b, "POST", "/v1/customers/" + cus.ID + "/credits", `{"amount":"1.00"}`, 404, "customer not found"},
		{b, "GET", "/v1/api-keys/" + key.ID, "", 404, "not found"},
		{&client{t: t, url: a.url}, "GET", "/v1/customers", "", 401, "partner API key"},
		{&client{t: t, url: a.url, key: "hsk_unknown"}, "GET", "/v1/customers", "", 401, "partner API key"},
		{a, "POST", "/v1/customers/" + cus.ID + "/credits", `{"amount":12.5}`, 400, "decimal strings"},
		{a, "POST", "/v1/customers/" + cus.ID + "/credits", `{"amount":"12.3456789"}`, 400, "7 decimals"},
		{a, "POST", "/v1/customers/" + cus.ID + "/credits", `{"amount":"-1"}`, 422, "must be positive"},
		{a, "POST", "/v1/customers/" + cus.ID + "/credits", `{"amount":"1","colour":"red"}`, 400, "unknown field"},
		{a, "POST", "/v1/customers/" + cus.ID + "/credits", `[1]`, 400, "JSON object"},
		{a, "POST", "/v1/customers", `{"name":"x","currency":"usd"}`, 422, "ISO 4217"},
		{a, "POST", "/v1/customers/" + cus.ID + "/budgets", `{"limit":"10","thresholds":[75],"period_start":"2026-01-01T00:00:00Z","period_end":"2026-02-01T00:00:00Z"}`, 422, "75 is not one of"},
		{a, "POST", "/v1/api-keys/" + key.ID + "/status", `{"status":"gone"}`, 422, "active, suspended or revoked"},
		{a, "GET", "/v1/export?from=yesterday&to=2026-01-01T00:00:00Z", "", 400, "RFC 3339"},
		{a, "GET", "/v1/export?cursor=abc", "", 400, "cursor"},
		{a, "GET", "/v1/export?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&format=xml", "", 400, "json or csv"},
		{a, "GET", "/v1/customers?limit=0", "", 400, "limit"},
	}
	for _, tc := range cases {
		s, body, _ := tc.c.do(tc.method, tc.path, tc.body, nil)
		if s != tc.status || !strings.Contains(string(body), tc.says) {
			t.Errorf("%s %s %s: %d %s, want %d saying %q", tc.method, tc.path, tc.body, s, body, tc.status, tc.says)
		}
	}
	// 415 for a body that is not JSON, as curl -d sends it without a content type.
	req, _ := http.NewRequest("POST", a.url+"/v1/customers", strings.NewReader(`{"name":"x","currency":"USD"}`))
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 415 {
		t.Errorf("form body: %v %v", res, err)
	}
	var bal struct {
		Balance struct{ Value string } `json:"balance"`
		Version int64                  `json:"version"`
	}
	a.do("POST", "/v1/customers/"+cus.ID+"/credits", `{"amount":"12.50","source":"promotion"}`, nil)
	if a.do("GET", "/v1/customers/"+cus.ID+"/balance", "", &bal); bal.Balance.Value != "12.50" || bal.Version <= cus.Version {
		t.Errorf("balance %+v after a credit, customer was v%d", bal, cus.Version)
	}
	if n := len(f.events("pb")); n != 0 {
		t.Errorf("partner pb has %d events", n)
	}
}
