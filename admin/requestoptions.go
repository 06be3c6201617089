package admin

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/records"
)

// Request options of an endpoint (design.md section 7): extra headers, authentication to the receiver, a
// client certificate for mTLS, and the egress proxy. Their secrets (a header value, a
// password, an OAuth client secret, a private key) are write-only: sealed under the
// processes' key as soon as they arrive, like signing secrets (R16), and never returned, not
// even by the request that set them; the API shows what identifies them (the header name, the
// user name, the client id, the certificate's subject and fingerprint).

// Limits of request options.
const (
	maxHeaders           = 20
	maxHeaderNameBytes   = 64
	maxHeaderValueBytes  = 1024
	minSecretBytes       = 8 // shorter secrets are guessable, and could not be redacted from evidence by value
	maxSecretBytes       = 4096
	maxUsernameBytes     = 256
	maxClientIDBytes     = 256
	maxScopes            = 20
	maxScopeBytes        = 128
	maxAudienceBytes     = 512
	maxCertificatesBytes = 32 << 10
	maxPrivateKeyBytes   = 16 << 10
)

// reservedHeaders are set by the sender or belong to one hop only (RFC 9110 section 7.6.1): an
// endpoint cannot set them. Authorization and Proxy-Authorization carry credentials, which
// belong in auth, where they are sealed and never shown.
var reservedHeaders = map[string]bool{
	"webhook-id": true, "webhook-timestamp": true, "webhook-signature": true,
	"content-type": true, "content-length": true, "content-encoding": true, "transfer-encoding": true,
	"host": true, "user-agent": true, "connection": true, "keep-alive": true, "proxy-connection": true,
	"te": true, "trailer": true, "upgrade": true, "expect": true,
	"authorization": true, "proxy-authorization": true, "proxy-authenticate": true,
}

// requestOptionsRequest are the request-option fields of a creation.
type requestOptionsRequest struct {
	Headers           map[string]string         `json:"headers"`
	Auth              *authRequest              `json:"auth"`
	ClientCertificate *clientCertificateRequest `json:"client_certificate"`
	EgressProxy       *string                   `json:"egress_proxy"`
}

// requestOptionsPatch are the request-option fields of a PATCH: absent keeps, null clears, a
// value replaces (a whole object: an auth or certificate is never merged with the old one).
type requestOptionsPatch struct {
	Headers           optional[map[string]string]        `json:"headers"`
	Auth              optional[authRequest]              `json:"auth"`
	ClientCertificate optional[clientCertificateRequest] `json:"client_certificate"`
	EgressProxy       optional[string]                   `json:"egress_proxy"`
}

func (p requestOptionsPatch) any() bool {
	return p.Headers.Set || p.Auth.Set || p.ClientCertificate.Set || p.EgressProxy.Set
}

type authRequest struct {
	Type string `json:"type"`
	// header
	HeaderName string `json:"header_name"`
	Value      string `json:"value"`
	// basic
	Username string `json:"username"`
	Password string `json:"password"`
	// oauth2
	TokenURL         string   `json:"token_url"`
	ClientID         string   `json:"client_id"`
	ClientSecret     string   `json:"client_secret"`
	Scopes           []string `json:"scopes"`
	Audience         string   `json:"audience"`
	ClientAuthMethod string   `json:"client_auth_method"`
}

type clientCertificateRequest struct {
	CertificatePEM string `json:"certificate_pem"`
	PrivateKeyPEM  string `json:"private_key_pem"`
}

// requestOptionsView is how the API shows request options: never a secret.
type requestOptionsView struct {
	Headers           map[string]string      `json:"headers"`
	Auth              *authView              `json:"auth"`
	ClientCertificate *clientCertificateView `json:"client_certificate"`
	EgressProxy       *string                `json:"egress_proxy"`
}

type authView struct {
	Type             string   `json:"type"`
	HeaderName       string   `json:"header_name,omitempty"`
	Username         string   `json:"username,omitempty"`
	TokenURL         string   `json:"token_url,omitempty"`
	ClientID         string   `json:"client_id,omitempty"`
	Scopes           []string `json:"scopes,omitempty"`
	Audience         string   `json:"audience,omitempty"`
	ClientAuthMethod string   `json:"client_auth_method,omitempty"`
}

type clientCertificateView struct {
	Subject           string    `json:"subject"`
	Issuer            string    `json:"issuer"`
	NotAfter          timestamp `json:"not_after"`
	SHA256Fingerprint string    `json:"sha256_fingerprint"`
}

// viewRequestOptions shows stored options without their secrets.
func viewRequestOptions(o records.RequestOptions) requestOptionsView {
	v := requestOptionsView{Headers: o.Headers}
	if v.Headers == nil {
		v.Headers = map[string]string{}
	}
	if a := o.Auth; a != nil {
		v.Auth = &authView{Type: a.Type, HeaderName: a.HeaderName, Username: a.Username, TokenURL: a.TokenURL,
			ClientID: a.ClientID, Scopes: a.Scopes, Audience: a.Audience, ClientAuthMethod: a.ClientAuthMethod}
	}
	if c := o.ClientCertificate; c != nil {
		if leaf, err := leafCertificate(c.CertificatePEM); err == nil {
			sum := sha256.Sum256(leaf.Raw)
			v.ClientCertificate = &clientCertificateView{Subject: leaf.Subject.String(), Issuer: leaf.Issuer.String(),
				NotAfter: stamp(leaf.NotAfter), SHA256Fingerprint: hex.EncodeToString(sum[:])}
		}
	}
	if o.EgressProxy != "" {
		v.EgressProxy = &o.EgressProxy
	}
	return v
}

// checkRequestOptions validates a creation's options, adding their problems to p, and seals
// their secrets for endpoint eid.
func (a *API) checkRequestOptions(ctx context.Context, p *problems, eid string, req requestOptionsRequest) records.RequestOptions {
	var opts records.RequestOptions
	opts.Headers = p.headers(req.Headers)
	if req.Auth != nil {
		opts.Auth = a.checkAuth(p, eid, *req.Auth)
	}
	if req.ClientCertificate != nil {
		opts.ClientCertificate = a.checkClientCertificate(p, eid, *req.ClientCertificate)
	}
	if req.EgressProxy != nil {
		opts.EgressProxy = a.checkEgressProxy(p, *req.EgressProxy)
	}
	p.authHeaderFree(opts)
	a.checkTokenURL(ctx, p, opts.Auth)
	return opts
}

// optionsChange is a checked PATCH of request options: each given field's new value (nil or ""
// for null), secrets sealed.
type optionsChange struct {
	setHeaders, setAuth, setCert, setProxy bool

	headers map[string]string
	auth    *records.Auth
	cert    *records.ClientCertificate
	proxy   string
}

func (c optionsChange) any() bool { return c.setHeaders || c.setAuth || c.setCert || c.setProxy }

// checkRequestOptionsPatch validates the request options of a PATCH of endpoint eid, adding
// their problems to p, and seals their secrets.
func (a *API) checkRequestOptionsPatch(ctx context.Context, p *problems, eid string, patch requestOptionsPatch) optionsChange {
	c := optionsChange{setHeaders: patch.Headers.Set, setAuth: patch.Auth.Set, setCert: patch.ClientCertificate.Set,
		setProxy: patch.EgressProxy.Set}
	if patch.Headers.Set {
		c.headers = p.headers(patch.Headers.Value) // null: none
	}
	if patch.Auth.Set && !patch.Auth.Null {
		c.auth = a.checkAuth(p, eid, patch.Auth.Value)
		a.checkTokenURL(ctx, p, c.auth)
	}
	if patch.ClientCertificate.Set && !patch.ClientCertificate.Null {
		c.cert = a.checkClientCertificate(p, eid, patch.ClientCertificate.Value)
	}
	if patch.EgressProxy.Set && !patch.EgressProxy.Null {
		c.proxy = a.checkEgressProxy(p, patch.EgressProxy.Value)
	}
	return c
}

// applyRequestOptionsPatch changes the partner's endpoint's stored options as the checked c
// says, in tx, after the endpoint row was updated (and so locked) by the caller. The result is
// checked as a whole (the auth header must not be among the headers, whichever of the two
// changed).
func (a *API) applyRequestOptionsPatch(ctx context.Context, tx pgx.Tx, pid, eid string, c optionsChange) error {
	var cur records.RequestOptions
	if err := tx.QueryRow(ctx, `SELECT request_options FROM endpoint WHERE id = $1 AND partner_id = $2`, eid, pid).Scan(&cur); err != nil {
		return err
	}
	if c.setHeaders {
		cur.Headers = c.headers
	}
	if c.setAuth {
		cur.Auth = c.auth
	}
	if c.setCert {
		cur.ClientCertificate = c.cert
	}
	if c.setProxy {
		cur.EgressProxy = c.proxy
	}
	var p problems
	p.authHeaderFree(cur)
	if e := p.err(); e != nil {
		return e
	}
	_, err := tx.Exec(ctx, `UPDATE endpoint SET request_options = $3 WHERE id = $1 AND partner_id = $2`, eid, pid, cur)
	return err
}

// headers checks custom request headers and returns them (nil for none).
func (p *problems) headers(h map[string]string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	if len(h) > maxHeaders {
		p.add("headers", "at most %d headers", maxHeaders)
		return nil
	}
	seen := map[string]string{}
	out := make(map[string]string, len(h))
	for name, value := range h {
		field := "headers." + truncateField(name)
		lower := strings.ToLower(name)
		switch {
		case !validHeaderName(name):
			p.add(field, "a header name is 1 to %d letters, digits or !#$%%&'*+-.^_`|~", maxHeaderNameBytes)
			continue
		case reservedHeaders[lower] || strings.HasPrefix(lower, "webhook-"):
			p.add(field, "is reserved: the sender sets it, or it belongs to one hop (credentials go in auth)")
			continue
		case seen[lower] != "":
			p.add(field, "is given twice (as %q too); header names ignore case", seen[lower])
			continue
		}
		if why := headerValueProblem(value, maxHeaderValueBytes); why != "" {
			p.add(field, "%s", why)
			continue
		}
		seen[lower] = name
		out[name] = value
	}
	return out
}

// authHeaderFree refuses a custom header that the auth header would replace.
func (p *problems) authHeaderFree(o records.RequestOptions) {
	if o.Auth == nil || o.Auth.Type != records.AuthHeader {
		return
	}
	for name := range o.Headers {
		if strings.EqualFold(name, o.Auth.HeaderName) {
			p.add("auth.header_name", "is among headers too; give it in one place")
		}
	}
}

// checkAuth validates an auth object and seals its secret.
func (a *API) checkAuth(p *problems, eid string, req authRequest) *records.Auth {
	out := &records.Auth{Type: req.Type}
	var secret, secretField string
	unexpected := func(fields map[string]bool) {
		for name, given := range fields {
			if given {
				p.add("auth."+name, "is not a field of auth type %s", req.Type)
			}
		}
	}
	switch req.Type {
	case records.AuthHeader:
		lower := strings.ToLower(req.HeaderName)
		switch {
		case !validHeaderName(req.HeaderName):
			p.add("auth.header_name", "a header name is 1 to %d letters, digits or !#$%%&'*+-.^_`|~", maxHeaderNameBytes)
		case lower != "authorization" && (reservedHeaders[lower] || strings.HasPrefix(lower, "webhook-")):
			p.add("auth.header_name", "is reserved: the sender sets it, or it belongs to one hop")
		}
		out.HeaderName = req.HeaderName
		secret, secretField = req.Value, "auth.value"
		unexpected(map[string]bool{"username": req.Username != "", "password": req.Password != "", "token_url": req.TokenURL != "",
			"client_id": req.ClientID != "", "client_secret": req.ClientSecret != "", "scopes": req.Scopes != nil,
			"audience": req.Audience != "", "client_auth_method": req.ClientAuthMethod != ""})
	case records.AuthBasic:
		switch {
		case req.Username == "" || len(req.Username) > maxUsernameBytes:
			p.add("auth.username", "is required, at most %d bytes", maxUsernameBytes)
		case strings.Contains(req.Username, ":") || headerValueProblem(req.Username, maxUsernameBytes) != "":
			p.add("auth.username", "must be printable and hold no colon (RFC 7617)")
		}
		out.Username = req.Username
		secret, secretField = req.Password, "auth.password"
		unexpected(map[string]bool{"header_name": req.HeaderName != "", "value": req.Value != "", "token_url": req.TokenURL != "",
			"client_id": req.ClientID != "", "client_secret": req.ClientSecret != "", "scopes": req.Scopes != nil,
			"audience": req.Audience != "", "client_auth_method": req.ClientAuthMethod != ""})
	case records.AuthOAuth2:
		p.text("auth.token_url", req.TokenURL, maxURLBytes, true)
		if req.ClientID == "" || len(req.ClientID) > maxClientIDBytes || headerValueProblem(req.ClientID, maxClientIDBytes) != "" {
			p.add("auth.client_id", "is required: printable, at most %d bytes", maxClientIDBytes)
		}
		if len(req.Scopes) > maxScopes {
			p.add("auth.scopes", "at most %d scopes", maxScopes)
		}
		for i, s := range req.Scopes {
			if !validScope(s) {
				p.add(fmt.Sprintf("auth.scopes[%d]", i), "a scope is 1 to %d printable ASCII characters without spaces, quotes or backslashes (RFC 6749 section 3.3)", maxScopeBytes)
			}
		}
		if len(req.Audience) > maxAudienceBytes || (req.Audience != "" && headerValueProblem(req.Audience, maxAudienceBytes) != "") {
			p.add("auth.audience", "must be printable, at most %d bytes", maxAudienceBytes)
		}
		switch req.ClientAuthMethod {
		case "":
			out.ClientAuthMethod = records.ClientSecretBasic
		case records.ClientSecretBasic, records.ClientSecretPost:
			out.ClientAuthMethod = req.ClientAuthMethod
		default:
			p.add("auth.client_auth_method", "must be %s (the default) or %s", records.ClientSecretBasic, records.ClientSecretPost)
		}
		out.TokenURL, out.ClientID, out.Scopes, out.Audience = req.TokenURL, req.ClientID, req.Scopes, req.Audience
		secret, secretField = req.ClientSecret, "auth.client_secret"
		unexpected(map[string]bool{"header_name": req.HeaderName != "", "value": req.Value != "",
			"username": req.Username != "", "password": req.Password != ""})
	default:
		p.add("auth.type", "must be %s, %s or %s", records.AuthHeader, records.AuthBasic, records.AuthOAuth2)
		return nil
	}
	if why := headerValueProblem(secret, maxSecretBytes); why != "" || len(secret) < minSecretBytes {
		if why == "" {
			why = fmt.Sprintf("must be at least %d bytes", minSecretBytes)
		}
		p.add(secretField, "%s", why)
		return nil
	}
	sealed, err := a.cfg.SecretKeys.Seal([]byte(secret), records.AuthAAD(eid))
	if err != nil {
		p.add(secretField, "could not be sealed") // no key: a fault of configuration, never a secret in a message
		return nil
	}
	out.SecretCiphertext = sealed
	return out
}

// checkClientCertificate validates a certificate and its key and seals the key. Every block of
// certificate_pem must parse as an X.509 certificate, whatever its label, so a key pasted there
// (relabelled or not) is refused, never stored in the clear; private_key_pem must parse as a
// private key.
func (a *API) checkClientCertificate(p *problems, eid string, req clientCertificateRequest) *records.ClientCertificate {
	if len(req.CertificatePEM) > maxCertificatesBytes {
		p.add("client_certificate.certificate_pem", "is longer than %d bytes", maxCertificatesBytes)
		return nil
	}
	if len(req.PrivateKeyPEM) > maxPrivateKeyBytes {
		p.add("client_certificate.private_key_pem", "is longer than %d bytes", maxPrivateKeyBytes)
		return nil
	}
	var certs []byte
	rest := []byte(req.CertificatePEM)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if isPrivateKey(b.Bytes) {
			// Said before the label: a key is a key, whatever it is labelled.
			p.add("client_certificate.certificate_pem", "holds a private key (in a %s block); give only certificates (the key goes in private_key_pem)", truncateField(b.Type))
			return nil
		}
		if b.Type != "CERTIFICATE" {
			p.add("client_certificate.certificate_pem", "holds a %s block; give only CERTIFICATE blocks (the key goes in private_key_pem)", truncateField(b.Type))
			return nil
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			p.add("client_certificate.certificate_pem", "holds a CERTIFICATE block that cannot be read as an X.509 certificate")
			return nil
		}
		certs = append(certs, pem.EncodeToMemory(&pem.Block{Type: b.Type, Bytes: b.Bytes})...)
	}
	if len(certs) == 0 {
		p.add("client_certificate.certificate_pem", "is required: the PEM certificate chain, leaf first")
		return nil
	}
	if kb, _ := pem.Decode([]byte(req.PrivateKeyPEM)); kb == nil || !strings.HasSuffix(kb.Type, "PRIVATE KEY") || kb.Headers["Proc-Type"] != "" {
		p.add("client_certificate.private_key_pem", "is required: an unencrypted PEM private key (PKCS #8, PKCS #1 or SEC 1)")
		return nil
	} else if !isPrivateKey(kb.Bytes) {
		p.add("client_certificate.private_key_pem", "holds a %s block that is not a private key (PKCS #8, PKCS #1 or SEC 1)", truncateField(kb.Type))
		return nil
	}
	pair, err := tls.X509KeyPair(certs, []byte(req.PrivateKeyPEM))
	if err != nil {
		p.add("client_certificate", "the private key does not belong to the certificate, or one of them cannot be read")
		return nil
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			p.add("client_certificate.certificate_pem", "cannot be read as an X.509 certificate")
			return nil
		}
	}
	if time.Now().After(leaf.NotAfter) {
		p.add("client_certificate.certificate_pem", "expired at %s", leaf.NotAfter.UTC().Format(time.RFC3339))
		return nil
	}
	sealed, err := a.cfg.SecretKeys.Seal([]byte(req.PrivateKeyPEM), records.ClientKeyAAD(eid))
	if err != nil {
		p.add("client_certificate.private_key_pem", "could not be sealed")
		return nil
	}
	return &records.ClientCertificate{CertificatePEM: string(certs), KeyCiphertext: sealed}
}

// checkEgressProxy accepts the name of a proxy the deployment configured.
func (a *API) checkEgressProxy(p *problems, name string) string {
	if a.guard.HasProxy(name) {
		return name
	}
	if names := a.guard.ProxyNames(); len(names) > 0 {
		p.add("egress_proxy", "must be null (the deployment's default route) or one of the configured proxies %v", names)
	} else {
		p.add("egress_proxy", "must be null: this deployment configures no named proxies")
	}
	return ""
}

// checkTokenURL applies the egress guard's registration policy to the token URL of an OAuth
// auth (nil or another type: nothing to check): the token is fetched through the guard like
// the webhook is sent.
func (a *API) checkTokenURL(ctx context.Context, p *problems, auth *records.Auth) {
	if auth != nil && auth.Type == records.AuthOAuth2 {
		a.checkURL(ctx, p, "auth.token_url", auth.TokenURL)
	}
}

// isPrivateKey says whether der parses as a private key in any of the encodings PEM carries
// them in (PKCS #8, PKCS #1, SEC 1).
func isPrivateKey(der []byte) bool {
	if _, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return true
	}
	if _, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return true
	}
	_, err := x509.ParseECPrivateKey(der)
	return err == nil
}

func leafCertificate(certPEM string) (*x509.Certificate, error) {
	b, _ := pem.Decode([]byte(certPEM))
	if b == nil {
		return nil, fmt.Errorf("no certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}

// validHeaderName: an RFC 9110 token of at most maxHeaderNameBytes.
func validHeaderName(s string) bool {
	if s == "" || len(s) > maxHeaderNameBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// headerValueProblem says what makes s unfit as a header value, or "" when it is fit:
// visible ASCII and inner spaces and tabs only (no line breaks, no control characters), and
// at most maxBytes.
func headerValueProblem(s string, maxBytes int) string {
	if len(s) > maxBytes {
		return fmt.Sprintf("is longer than %d bytes", maxBytes)
	}
	if s == "" {
		return "is required"
	}
	if s != strings.Trim(s, " \t") {
		return "must not start or end with white space"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c >= 0x7f {
			return "must be printable ASCII (no line breaks or control characters)"
		}
	}
	return ""
}

func validScope(s string) bool {
	if s == "" || len(s) > maxScopeBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c == '"' || c == '\\' || c > 0x7e {
			return false
		}
	}
	return true
}

// truncateField keeps a client-given name short in an error message.
func truncateField(s string) string {
	if len(s) > maxHeaderNameBytes {
		return s[:maxHeaderNameBytes] + "…"
	}
	return s
}
