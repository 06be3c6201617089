package sender_test

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/webhook"
)

// sealAuth builds an Auth as the admin API stores it: its secret sealed for the endpoint.
func (e *env) sealAuth(endpointID string, a records.Auth, secret string) *records.Auth {
	e.t.Helper()
	c, err := e.key.Seal([]byte(secret), records.AuthAAD(endpointID))
	if err != nil {
		e.t.Fatal(err)
	}
	a.SecretCiphertext = c
	return &a
}

// sealCertificate builds a ClientCertificate as the admin API stores it.
func (e *env) sealCertificate(endpointID string, is testenv.Issued) *records.ClientCertificate {
	e.t.Helper()
	c, err := e.key.Seal(is.KeyPEM, records.ClientKeyAAD(endpointID))
	if err != nil {
		e.t.Fatal(err)
	}
	return &records.ClientCertificate{CertificatePEM: string(is.CertPEM), KeyCiphertext: c}
}

func withOptions(o records.RequestOptions) func(*records.Endpoint) {
	return func(ep *records.Endpoint) { ep.RequestOptions = o }
}

// TestRequestOptionsArrive: each endpoint's custom headers and credentials arrive as
// configured, beside the signature headers, which no option can replace.
func TestRequestOptionsArrive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secrets := map[string]string{
		"ep_headers": e.endpoint("ep_headers", "p1", withOptions(records.RequestOptions{
			Headers: map[string]string{"X-Tenant": "acme", "x-route": "blue"},
		})),
		"ep_apikey": e.endpoint("ep_apikey", "p1", withOptions(records.RequestOptions{
			Headers: map[string]string{"X-Tenant": "acme"},
			Auth:    e.sealAuth("ep_apikey", records.Auth{Type: records.AuthHeader, HeaderName: "X-Partner-Credential"}, "kq7Vh2mPzL9wXc4R"),
		})),
		"ep_bearer": e.endpoint("ep_bearer", "p1", withOptions(records.RequestOptions{
			Auth: e.sealAuth("ep_bearer", records.Auth{Type: records.AuthHeader, HeaderName: "Authorization"}, "Bearer static-gw-token-881"),
		})),
		"ep_basic": e.endpoint("ep_basic", "p1", withOptions(records.RequestOptions{
			Auth: e.sealAuth("ep_basic", records.Auth{Type: records.AuthBasic, Username: "hooks"}, "b4sic-Pa55word"),
		})),
	}
	e.start(e.config())
	ds := map[string]records.Delivery{}
	for id := range secrets {
		d := delivery("p1", id, "customer.created")
		ds[id] = d
		e.deliver(0, d)
	}
	for id, d := range ds {
		if a := e.waitAttempt(d); a.Outcome != records.OutcomeDelivered {
			t.Fatalf("%s: attempt %+v", id, a)
		}
	}
	header := func(id string) http.Header {
		got := e.rcv.got(id)
		if len(got) != 1 {
			t.Fatalf("%s: %d requests, want 1", id, len(got))
		}
		if err := webhook.Verify(secrets[id], got[0].header, got[0].body); err != nil {
			t.Fatalf("%s: signature: %v", id, err)
		}
		if ct := got[0].header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s: Content-Type %q", id, ct)
		}
		return got[0].header
	}
	h := header("ep_headers")
	if h.Get("X-Tenant") != "acme" || h.Get("X-Route") != "blue" || h.Get("Authorization") != "" {
		t.Fatalf("ep_headers: headers %v", h)
	}
	h = header("ep_apikey")
	if h.Get("X-Partner-Credential") != "kq7Vh2mPzL9wXc4R" || h.Get("X-Tenant") != "acme" {
		t.Fatalf("ep_apikey: headers %v", h)
	}
	if got := header("ep_bearer").Get("Authorization"); got != "Bearer static-gw-token-881" {
		t.Fatalf("ep_bearer: Authorization %q", got)
	}
	r := &http.Request{Header: header("ep_basic")}
	if user, pass, ok := r.BasicAuth(); !ok || user != "hooks" || pass != "b4sic-Pa55word" {
		t.Fatalf("ep_basic: basic auth %q %q %v", user, pass, ok)
	}
}

// tokenServer is an OAuth 2.0 token endpoint for the client credentials grant. It issues
// tok-1, tok-2, ... and the receiver accepts only tokens it issued and did not revoke.
type tokenServer struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests int
	issued   int
	valid    map[string]bool
	forms    []url.Values
}

func newTokenServer(t *testing.T, clientID, clientSecret string) *tokenServer {
	ts := &tokenServer{valid: map[string]bool{}}
	ts.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		ts.requests++
		if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		ts.forms = append(ts.forms, r.PostForm)
		id, secret, basic := r.BasicAuth()
		if !basic {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		if id != clientID || secret != clientSecret || r.PostForm.Get("grant_type") != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			// A careless server that echoes what it was sent.
			_, _ = fmt.Fprintf(w, `{"error":"invalid_client","got_id":%q,"got":%q}`, id, secret)
			return
		}
		ts.issued++
		tok := "tok-" + strconv.Itoa(ts.issued) + "-q8WzP3nL"
		ts.valid[tok] = true
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, tok)
	}))
	t.Cleanup(ts.srv.Close)
	return ts
}

func (ts *tokenServer) accepts(token string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.valid[token]
}

func (ts *tokenServer) revokeAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	clear(ts.valid)
}

func (ts *tokenServer) count() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.requests
}

// TestOAuthClientCredentials: the token is fetched once and reused, fetched again once when
// the receiver answers 401 to it, and a refused token request fails the attempt without a
// webhook being sent or the client secret being shown.
func TestOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ts := newTokenServer(t, "hookstream-client", "cl1ent-S3cret-value")
	bearer := func(w http.ResponseWriter, r *http.Request, _ []byte) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !ts.accepts(tok) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}
	oauth := func(id, secret, method string) records.RequestOptions {
		return records.RequestOptions{Auth: e.sealAuth(id, records.Auth{Type: records.AuthOAuth2, TokenURL: ts.srv.URL + "/token",
			ClientID: "hookstream-client", Scopes: []string{"hooks:write", "hooks:read"}, Audience: "https://api.partner.test",
			ClientAuthMethod: method}, secret)}
	}
	for _, id := range []string{"ep_basic", "ep_post", "ep_wrong"} {
		e.rcv.handle(id, bearer)
	}
	e.endpoint("ep_basic", "p1", withOptions(oauth("ep_basic", "cl1ent-S3cret-value", records.ClientSecretBasic)))
	e.endpoint("ep_post", "p1", withOptions(oauth("ep_post", "cl1ent-S3cret-value", records.ClientSecretPost)))
	e.endpoint("ep_wrong", "p1", withOptions(oauth("ep_wrong", "not-the-S3cret", records.ClientSecretBasic)))
	cfg := e.config()
	cfg.Egress.AllowedPorts = append(cfg.Egress.AllowedPorts, portOf(t, ts.srv.URL))
	e.start(cfg)

	send := func(id string) records.Attempt {
		t.Helper()
		return e.waitAttemptOf(delivery("p1", id, "customer.created"))
	}
	for i := range 3 {
		if a := send("ep_basic"); a.Outcome != records.OutcomeDelivered {
			t.Fatalf("delivery %d: %+v", i, a)
		}
	}
	if n := ts.count(); n != 1 {
		t.Fatalf("%d token requests for 3 deliveries, want 1 (the token is cached)", n)
	}
	form := ts.forms[0]
	if form.Get("scope") != "hooks:write hooks:read" || form.Get("audience") != "https://api.partner.test" || form.Get("client_secret") != "" {
		t.Fatalf("token request form %v", form)
	}

	// The receiver stops accepting the token: one 401, a new token, the same attempt succeeds.
	ts.revokeAll()
	before := len(e.rcv.got("ep_basic"))
	if a := send("ep_basic"); a.Outcome != records.OutcomeDelivered || a.Status != 200 {
		t.Fatalf("after revocation: %+v", a)
	}
	if n := ts.count(); n != 2 {
		t.Fatalf("%d token requests after one revocation, want 2", n)
	}
	if got := e.rcv.got("ep_basic")[before:]; len(got) != 2 || got[0].header.Get("webhook-id") != got[1].header.Get("webhook-id") {
		t.Fatalf("after revocation the receiver got %d requests, want the refused one and its repetition", len(got))
	}

	// A receiver that refuses every token: one repetition, not a loop.
	e.rcv.handle("ep_basic", func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusUnauthorized) })
	before = len(e.rcv.got("ep_basic"))
	if a := send("ep_basic"); a.Status != 401 || a.ErrorCategory != records.CategoryHTTPStatus {
		t.Fatalf("refused tokens: %+v", a)
	}
	if got := len(e.rcv.got("ep_basic")) - before; got != 2 {
		t.Fatalf("a receiver refusing every token got %d requests, want 2", got)
	}

	if a := send("ep_post"); a.Outcome != records.OutcomeDelivered {
		t.Fatalf("client_secret_post: %+v", a)
	}
	if f := ts.forms[len(ts.forms)-1]; f.Get("client_id") != "hookstream-client" || f.Get("client_secret") != "cl1ent-S3cret-value" {
		t.Fatalf("client_secret_post form %v", f)
	}

	a := send("ep_wrong")
	if a.Outcome != records.OutcomeRetrying || a.ErrorCategory != records.CategoryHTTPStatus || a.Status != 0 {
		t.Fatalf("refused token request: %+v", a)
	}
	if !strings.Contains(a.ResponseExcerpt, "token endpoint answered HTTP 401") || strings.Contains(a.ResponseExcerpt, "not-the-S3cret") {
		t.Fatalf("refused token request: excerpt %q", a.ResponseExcerpt)
	}
	if got := e.rcv.got("ep_wrong"); len(got) != 0 {
		t.Fatalf("the receiver got %d requests without a token", len(got))
	}
}

// waitAttemptOf delivers d and waits for its attempt.
func (e *env) waitAttemptOf(d records.Delivery) records.Attempt {
	e.t.Helper()
	e.deliver(0, d)
	return e.waitAttempt(d)
}

// TestClientCertificate: an endpoint with a client certificate authenticates to an mTLS
// receiver; a certificate the receiver does not trust, or none, is refused and categorised tls.
func TestClientCertificate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ca, other := testenv.NewCA(t, "receiver CA"), testenv.NewCA(t, "someone else's CA")
	var (
		mu  sync.Mutex
		cns []string
	)
	mtls := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cns = append(cns, r.TLS.PeerCertificates[0].Subject.CommonName)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	mtls.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	mtls.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t).TLS}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool}
	mtls.StartTLS()
	t.Cleanup(mtls.Close)

	at := func(id string, cert *records.ClientCertificate) func(*records.Endpoint) {
		return func(ep *records.Endpoint) {
			ep.URL = mtls.URL + "/ep/" + id
			ep.RequestOptions.ClientCertificate = cert
		}
	}
	e.endpoint("ep_trusted", "p1", at("ep_trusted", e.sealCertificate("ep_trusted", ca.Client(t, "partner-acme"))))
	e.endpoint("ep_untrusted", "p1", at("ep_untrusted", e.sealCertificate("ep_untrusted", other.Client(t, "partner-acme"))))
	e.endpoint("ep_none", "p1", at("ep_none", nil))
	cfg := e.config()
	cfg.Egress.AllowedPorts = append(cfg.Egress.AllowedPorts, portOf(t, mtls.URL))
	cfg.Egress.RootCAs = ca.Pool
	e.start(cfg)

	if a := e.waitAttemptOf(delivery("p1", "ep_trusted", "customer.created")); a.Outcome != records.OutcomeDelivered {
		t.Fatalf("trusted certificate: %+v", a)
	}
	mu.Lock()
	got := append([]string(nil), cns...)
	mu.Unlock()
	if len(got) != 1 || got[0] != "partner-acme" {
		t.Fatalf("the receiver saw client certificates %v", got)
	}
	for _, id := range []string{"ep_untrusted", "ep_none"} {
		a := e.waitAttemptOf(delivery("p1", id, "customer.created"))
		if a.ErrorCategory != records.CategoryTLS || a.Status != 0 {
			t.Fatalf("%s: attempt %+v, want category tls", id, a)
		}
	}
}

// TestRequestOptionsSecretsHidden: receivers and a token endpoint that echo every request back
// cannot put a secret into the attempt evidence (the history), and no secret reaches the logs,
// not even when a secret cannot be opened.
func TestRequestOptionsSecretsHidden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const (
		headerSecret = "kq7Vh2mPzL9wXc4R"
		password     = "b4sic-Pa55word"
		clientSecret = "cl1ent-S3cret-value"
	)
	ts := newTokenServer(t, "hookstream-client", clientSecret)
	echo := func(w http.ResponseWriter, r *http.Request, _ []byte) {
		user, pass, _ := r.BasicAuth()
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]any{"headers": r.Header, "user": user, "pass": pass})
	}
	ca := testenv.NewCA(t, "receiver CA")
	client := ca.Client(t, "partner-acme")
	for _, id := range []string{"ep_header", "ep_basic", "ep_oauth", "ep_cert"} {
		e.rcv.handle(id, echo)
	}
	e.endpoint("ep_header", "p1", withOptions(records.RequestOptions{
		Auth: e.sealAuth("ep_header", records.Auth{Type: records.AuthHeader, HeaderName: "X-Partner-Credential"}, headerSecret)}))
	e.endpoint("ep_basic", "p1", withOptions(records.RequestOptions{
		Auth: e.sealAuth("ep_basic", records.Auth{Type: records.AuthBasic, Username: "hooks"}, password)}))
	e.endpoint("ep_oauth", "p1", withOptions(records.RequestOptions{Auth: e.sealAuth("ep_oauth", records.Auth{Type: records.AuthOAuth2,
		TokenURL: ts.srv.URL + "/token", ClientID: "hookstream-client"}, clientSecret)}))
	e.endpoint("ep_oauth_refused", "p1", withOptions(records.RequestOptions{Auth: e.sealAuth("ep_oauth_refused", records.Auth{Type: records.AuthOAuth2,
		TokenURL: ts.srv.URL + "/token", ClientID: "hookstream-client", ClientAuthMethod: records.ClientSecretPost}, clientSecret+"-x")}))
	e.endpoint("ep_cert", "p1", withOptions(records.RequestOptions{ClientCertificate: e.sealCertificate("ep_cert", client)}))
	// Sealed for another endpoint: it cannot be opened here, and the failure says so.
	e.endpoint("ep_sealed_elsewhere", "p1", withOptions(records.RequestOptions{
		Auth: e.sealAuth("ep_header", records.Auth{Type: records.AuthHeader, HeaderName: "X-Partner-Credential"}, headerSecret)}))

	logs := &testenv.Buffer{}
	cfg := e.config()
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Egress.AllowedPorts = append(cfg.Egress.AllowedPorts, portOf(t, ts.srv.URL))
	e.start(cfg)

	var evidence []string
	for _, id := range []string{"ep_header", "ep_basic", "ep_oauth", "ep_oauth_refused", "ep_cert", "ep_sealed_elsewhere"} {
		a := e.waitAttemptOf(delivery("p1", id, "customer.created"))
		if a.Outcome == records.OutcomeDelivered {
			t.Fatalf("%s: delivered, want the receiver's 500 or a refusal", id)
		}
		evidence = append(evidence, id+": "+a.ResponseExcerpt)
	}
	all := strings.Join(evidence, "\n")
	if !strings.Contains(all, "ep_header: ") || !strings.Contains(all, "X-Partner-Credential") {
		t.Fatalf("the echo did not reach the evidence, so this test proves nothing:\n%s", all)
	}
	if !strings.Contains(all, "cannot be opened") {
		t.Fatalf("the unopenable secret is not explained:\n%s", all)
	}
	ts.mu.Lock()
	tokens := make([]string, 0, len(ts.valid))
	for tok := range ts.valid {
		tokens = append(tokens, tok)
	}
	ts.mu.Unlock()
	if len(tokens) == 0 {
		t.Fatal("no token was issued")
	}
	forbidden := append([]string{headerSecret, password, base64.StdEncoding.EncodeToString([]byte("hooks:" + password)),
		clientSecret, strings.TrimSpace(string(client.KeyPEM[28:90]))}, tokens...)
	for _, s := range forbidden {
		if strings.Contains(all, s) {
			t.Errorf("a secret (%.6s…) is in the evidence:\n%s", s, all)
		}
		if strings.Contains(logs.String(), s) {
			t.Errorf("a secret (%.6s…) is in the logs", s)
		}
	}
	if !strings.Contains(logs.String(), "ep_sealed_elsewhere") {
		t.Fatal("the unopenable secret was not logged, so the log check proves little")
	}
}

// TestOAuthSecretEchoedInAnyEncoding: a token endpoint that echoes its request puts the client
// secret in the forms it travelled in (form-encoded in the body, inside the base64 of
// client_secret_basic's credential, which form-encodes it first) and in the forms its JSON encoder
// writes; none of them reaches the attempt's evidence.
func TestOAuthSecretEchoedInAnyEncoding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const (
		clientID = "hookstream client/1"
		secret   = `s3c "ret"/+&=%<é>`
	)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var pairs [][]string
		for _, kv := range strings.Split(string(raw), "&") {
			k, v, _ := strings.Cut(kv, "=")
			pairs = append(pairs, []string{k, v})
		}
		form, _ := url.ParseQuery(string(raw))
		_, credential, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		user, pass, _ := r.BasicAuth()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": "invalid_client",
			"fields": pairs, "decoded": form, "credential": credential, "user_pass": []string{user, pass}})
	}))
	t.Cleanup(echo.Close)
	for _, method := range []string{records.ClientSecretBasic, records.ClientSecretPost} {
		e.endpoint("ep_"+method, "p1", withOptions(records.RequestOptions{Auth: e.sealAuth("ep_"+method, records.Auth{Type: records.AuthOAuth2,
			TokenURL: echo.URL + "/token", ClientID: clientID, ClientAuthMethod: method}, secret)}))
	}
	cfg := e.config()
	cfg.Egress.AllowedPorts = append(cfg.Egress.AllowedPorts, portOf(t, echo.URL))
	e.start(cfg)

	asJSON := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	escaped := url.QueryEscape(secret)
	forbidden := []string{secret, escaped, asJSON(secret), asJSON(escaped),
		base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(clientID) + ":" + escaped))}
	for _, method := range []string{records.ClientSecretBasic, records.ClientSecretPost} {
		a := e.waitAttemptOf(delivery("p1", "ep_"+method, "customer.created"))
		if !strings.Contains(a.ResponseExcerpt, "invalid_client") || !strings.Contains(a.ResponseExcerpt, "fields") {
			t.Fatalf("%s: the echo did not reach the evidence, so this test proves nothing: %q", method, a.ResponseExcerpt)
		}
		for _, s := range forbidden {
			if strings.Contains(a.ResponseExcerpt, s) {
				t.Errorf("%s: the client secret (as %q) is in the evidence: %s", method, s, a.ResponseExcerpt)
			}
		}
	}
}
