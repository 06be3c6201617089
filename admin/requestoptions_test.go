package admin

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// withProxies gives the env's guard named proxies, as HOOKSTREAM_EGRESS_PROXIES does.
func withProxies(names ...string) func(*Config) {
	return func(c *Config) {
		ecfg := egress.DefaultConfig()
		ecfg.Resolver = testResolver()
		ecfg.Proxies = map[string]*url.URL{}
		for _, n := range names {
			ecfg.Proxies[n] = &url.URL{Scheme: "http", Host: "proxy-" + n + ".internal:3128"}
		}
		g, err := egress.New(ecfg)
		if err != nil {
			panic(err)
		}
		c.Egress = g
	}
}

// Secrets of the tests below: none may appear in a response or a log line.
const (
	testHeaderSecret = "kq7Vh2mPzL9wXc4R"
	testPassword     = "b4sic-Pa55word"
	testClientSecret = "cl1ent-S3cret-value"
)

// TestRequestOptionsWriteOnly creates endpoints with every kind of request option, reads,
// lists, changes and clears them, and checks that the API shows what identifies each secret
// and never a secret, in no response and no log line, while cdc carries the sealed secrets to
// the endpoints topic, where they open with the AAD the sender uses.
func TestRequestOptionsWriteOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withProxies("eu"))
	key := e.partner("acme")
	base := "/v1/partners/acme/endpoints"
	ca := testenv.NewCA(t, "partner CA")
	cert := ca.Client(t, "hookstream-at-acme")
	responses := &responseLog{e: e, key: key}
	do := responses.do

	var created endpointView
	do(201, "POST", base, map[string]any{
		"url": "https://hooks.example.com/in", "event_types": []string{"*"},
		"headers":            map[string]string{"X-Tenant": "acme"},
		"auth":               map[string]any{"type": "header", "header_name": "X-Partner-Credential", "value": testHeaderSecret},
		"client_certificate": map[string]string{"certificate_pem": string(cert.CertPEM), "private_key_pem": string(cert.KeyPEM)},
		"egress_proxy":       "eu",
	}).json(t, &created)
	if created.Headers["X-Tenant"] != "acme" || created.Auth == nil || created.Auth.Type != "header" ||
		created.Auth.HeaderName != "X-Partner-Credential" || created.EgressProxy == nil || *created.EgressProxy != "eu" {
		t.Fatalf("created: %+v", created.requestOptionsView)
	}
	if c := created.ClientCertificate; c == nil || !strings.Contains(c.Subject, "hookstream-at-acme") || len(c.SHA256Fingerprint) != 64 {
		t.Fatalf("client certificate view %+v", c)
	}
	ep := base + "/" + created.ID
	var got endpointView
	do(200, "GET", ep, nil).json(t, &got)
	if got.Auth == nil || got.Auth.HeaderName != "X-Partner-Credential" || got.ClientCertificate == nil {
		t.Fatalf("GET: %+v", got.requestOptionsView)
	}
	do(200, "GET", base, nil)

	// cdc carries the options, secrets sealed, to the endpoints topic.
	e.startCDC()
	rec := e.endpointRecord(created.ID, func(r records.Endpoint) bool { return r.RequestOptions.Auth != nil })
	plain, err := e.key.Open(rec.RequestOptions.Auth.SecretCiphertext, records.AuthAAD(created.ID))
	if err != nil || string(plain) != testHeaderSecret {
		t.Fatalf("the sealed auth secret opens to %q, %v", plain, err)
	}
	keyPEM, err := e.key.Open(rec.RequestOptions.ClientCertificate.KeyCiphertext, records.ClientKeyAAD(created.ID))
	if err != nil || string(keyPEM) != string(cert.KeyPEM) {
		t.Fatalf("the sealed client key does not open: %v", err)
	}
	if rec.RequestOptions.EgressProxy != "eu" || rec.RequestOptions.Headers["X-Tenant"] != "acme" {
		t.Fatalf("endpoint record options %+v", rec.RequestOptions)
	}

	// Replace auth with basic, then OAuth; headers stay as they are.
	do(200, "PATCH", ep, map[string]any{"auth": map[string]any{"type": "basic", "username": "hooks", "password": testPassword}}).json(t, &got)
	if got.Auth == nil || got.Auth.Type != "basic" || got.Auth.Username != "hooks" || got.Headers["X-Tenant"] != "acme" {
		t.Fatalf("after PATCH basic: %+v", got.requestOptionsView)
	}
	do(200, "PATCH", ep, map[string]any{"auth": map[string]any{"type": "oauth2", "token_url": "https://other.example.com/oauth/token",
		"client_id": "hookstream", "client_secret": testClientSecret, "scopes": []string{"hooks:write"}}}).json(t, &got)
	if a := got.Auth; a == nil || a.Type != "oauth2" || a.ClientID != "hookstream" || a.ClientAuthMethod != records.ClientSecretBasic ||
		a.TokenURL != "https://other.example.com/oauth/token" || len(a.Scopes) != 1 {
		t.Fatalf("after PATCH oauth2: %+v", got.Auth)
	}
	// null clears each of them.
	got = endpointView{} // decoding into a used map would merge it
	do(200, "PATCH", ep, map[string]any{"headers": nil, "auth": nil, "client_certificate": nil, "egress_proxy": nil}).json(t, &got)
	if len(got.Headers) != 0 || got.Auth != nil || got.ClientCertificate != nil || got.EgressProxy != nil {
		t.Fatalf("after PATCH null: %+v", got.requestOptionsView)
	}
	var stored string
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT request_options::text FROM endpoint WHERE id = $1`, created.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != "{}" {
		t.Fatalf("cleared options stored as %s", stored)
	}

	keyBody := strings.Join(strings.Split(strings.TrimSpace(string(cert.KeyPEM)), "\n")[1:2], "")
	for _, s := range []string{testHeaderSecret, testPassword, testClientSecret, keyBody} {
		for _, b := range responses.bodies {
			if strings.Contains(b, s) {
				t.Fatalf("a secret (%.6s…) is in a response: %s", s, b)
			}
		}
		if strings.Contains(e.logs.String(), s) {
			t.Fatalf("a secret (%.6s…) is in the logs", s)
		}
	}
}

// endpointRecord reads the endpoints topic until the record of id satisfies ok.
func (e *env) endpointRecord(id string, ok func(records.Endpoint) bool) records.Endpoint {
	e.t.Helper()
	cl := e.Kafka.Client(e.t, kgo.ConsumeTopics(e.Names.Endpoints), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			e.t.Fatalf("no endpoints record of %s as expected within 60 s", id)
		}
		var (
			found records.Endpoint
			hit   bool
		)
		fs.EachRecord(func(r *kgo.Record) {
			var ep records.Endpoint
			if string(r.Key) == id && json.Unmarshal(r.Value, &ep) == nil && ok(ep) {
				found, hit = ep, true
			}
		})
		if hit {
			return found
		}
	}
}

// relabel is the first PEM block of b under another label.
func relabel(t *testing.T, b []byte, label string) string {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatal("no PEM block")
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: label, Bytes: block.Bytes}))
}

// TestRequestOptionsRefused: each bad option is refused with 422 naming the field, and
// nothing is created.
func TestRequestOptionsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withProxies("eu"))
	key := e.partner("acme")
	ca := testenv.NewCA(t, "partner CA")
	cert := ca.Client(t, "hookstream-at-acme")
	otherKey := ca.Client(t, "someone-else").KeyPEM
	keyBase64 := strings.Split(string(cert.KeyPEM), "\n")[1] // a line of the key's body
	auth := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		field string
		body  map[string]any
	}{
		{"signature header", "headers.webhook-signature", map[string]any{"headers": map[string]string{"webhook-signature": "v1,x"}}},
		{"webhook- prefix", "headers.Webhook-Extra", map[string]any{"headers": map[string]string{"Webhook-Extra": "x"}}},
		{"content type", "headers.Content-Type", map[string]any{"headers": map[string]string{"Content-Type": "text/plain"}}},
		{"hop by hop", "headers.Connection", map[string]any{"headers": map[string]string{"Connection": "close"}}},
		{"transfer encoding", "headers.transfer-encoding", map[string]any{"headers": map[string]string{"transfer-encoding": "chunked"}}},
		{"authorization as a plain header", "headers.Authorization", map[string]any{"headers": map[string]string{"Authorization": "Bearer x"}}},
		{"bad name", "headers.X Tenant", map[string]any{"headers": map[string]string{"X Tenant": "acme"}}},
		{"header injection", "headers.X-Tenant", map[string]any{"headers": map[string]string{"X-Tenant": "acme\r\nX-Evil: 1"}}},
		{"twice", "given twice", map[string]any{"headers": map[string]string{"X-Tenant": "a", "x-tenant": "b"}}},
		{"unknown auth type", "auth.type", map[string]any{"auth": auth("type", "digest")}},
		{"short header secret", "auth.value", map[string]any{"auth": auth("type", "header", "header_name", "X-Key", "value", "short")}},
		{"reserved auth header", "auth.header_name", map[string]any{"auth": auth("type", "header", "header_name", "webhook-id", "value", testHeaderSecret)}},
		{"auth header also a header", "auth.header_name", map[string]any{"headers": map[string]string{"X-Key": "a"},
			"auth": auth("type", "header", "header_name", "x-key", "value", testHeaderSecret)}},
		{"foreign field", "auth.password", map[string]any{"auth": auth("type", "header", "header_name", "X-Key", "value", testHeaderSecret, "password", "x")}},
		{"basic colon", "auth.username", map[string]any{"auth": auth("type", "basic", "username", "a:b", "password", testPassword)}},
		{"basic no password", "auth.password", map[string]any{"auth": auth("type", "basic", "username", "hooks")}},
		{"oauth no client id", "auth.client_id", map[string]any{"auth": auth("type", "oauth2", "token_url", "https://other.example.com/t", "client_secret", testClientSecret)}},
		{"oauth bad scope", "auth.scopes[0]", map[string]any{"auth": auth("type", "oauth2", "token_url", "https://other.example.com/t", "client_id", "c",
			"client_secret", testClientSecret, "scopes", []string{"a b"})}},
		{"oauth bad method", "auth.client_auth_method", map[string]any{"auth": auth("type", "oauth2", "token_url", "https://other.example.com/t", "client_id", "c",
			"client_secret", testClientSecret, "client_auth_method", "private_key_jwt")}},
		{"oauth private token url", "auth.token_url", map[string]any{"auth": auth("type", "oauth2", "token_url", "https://private.example.com/t", "client_id", "c",
			"client_secret", testClientSecret)}},
		{"oauth metadata token url", "auth.token_url", map[string]any{"auth": auth("type", "oauth2", "token_url", "http://169.254.169.254/latest", "client_id", "c",
			"client_secret", testClientSecret)}},
		{"key in the certificate field", "client_certificate.certificate_pem", map[string]any{"client_certificate": map[string]string{
			"certificate_pem": string(cert.CertPEM) + string(cert.KeyPEM), "private_key_pem": string(cert.KeyPEM)}}},
		{"key relabelled CERTIFICATE after the certificate", "client_certificate.certificate_pem: holds a private key", map[string]any{"client_certificate": map[string]string{
			"certificate_pem": string(cert.CertPEM) + relabel(t, cert.KeyPEM, "CERTIFICATE"), "private_key_pem": string(cert.KeyPEM)}}},
		{"key relabelled CERTIFICATE alone", "client_certificate.certificate_pem: holds a private key", map[string]any{"client_certificate": map[string]string{
			"certificate_pem": relabel(t, cert.KeyPEM, "CERTIFICATE"), "private_key_pem": string(cert.KeyPEM)}}},
		{"not a certificate in a CERTIFICATE block", "client_certificate.certificate_pem: holds a CERTIFICATE block that cannot be read", map[string]any{"client_certificate": map[string]string{
			"certificate_pem": string(cert.CertPEM) + "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n", "private_key_pem": string(cert.KeyPEM)}}},
		{"certificate relabelled PRIVATE KEY", "client_certificate.private_key_pem: holds a PRIVATE KEY block that is not a private key", map[string]any{"client_certificate": map[string]string{
			"certificate_pem": string(cert.CertPEM), "private_key_pem": relabel(t, cert.CertPEM, "PRIVATE KEY")}}},
		{"no certificate", "client_certificate.certificate_pem", map[string]any{"client_certificate": map[string]string{
			"certificate_pem": "not pem", "private_key_pem": string(cert.KeyPEM)}}},
		{"no key", "client_certificate.private_key_pem", map[string]any{"client_certificate": map[string]string{
			"certificate_pem": string(cert.CertPEM)}}},
		{"key of another certificate", "client_certificate", map[string]any{"client_certificate": map[string]string{
			"certificate_pem": string(cert.CertPEM), "private_key_pem": string(otherKey)}}},
		{"unknown proxy", "egress_proxy", map[string]any{"egress_proxy": "mars"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"url": "https://hooks.example.com/in", "event_types": []string{"*"}}
			for k, v := range tt.body {
				body[k] = v
			}
			r := e.do(key, "POST", "/v1/partners/acme/endpoints", body)
			if r.Status != 422 || !strings.Contains(string(r.Body), tt.field) {
				t.Fatalf("POST = %s, want 422 naming %s", r, tt.field)
			}
			if strings.Contains(string(r.Body), testClientSecret) || strings.Contains(string(r.Body), testPassword) ||
				strings.Contains(string(r.Body), "PRIVATE KEY-----\n") || strings.Contains(string(r.Body), keyBase64) {
				t.Fatalf("the refusal repeats a secret: %s", r)
			}
		})
	}
	if n := testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM endpoint WHERE partner_id = 'acme'`); n != 0 {
		t.Fatalf("%d endpoints were created by refused requests", n)
	}
	// A PATCH is checked the same way and changes nothing when refused.
	created := e.endpoint("acme")
	ep := "/v1/partners/acme/endpoints/" + created.ID
	if r := e.do(key, "PATCH", ep, map[string]any{"description": "x", "headers": map[string]string{"Host": "evil"}}); r.Status != 422 || !strings.Contains(string(r.Body), "headers.Host") {
		t.Fatalf("PATCH = %s, want 422 naming headers.Host", r)
	}
	var got endpointView
	e.must(200, key, "GET", ep, nil).json(t, &got)
	if got.Description != "" || len(got.Headers) != 0 || got.Version != created.Version {
		t.Fatalf("a refused PATCH changed the endpoint: %+v", got)
	}
}
