package sender

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/records"
)

// access is what an endpoint's request options add to its requests beyond the signed body
// (design.md section 7): extra headers, credentials for the receiver, and the client whose route (direct
// or a forward proxy) and client certificate the requests use. It is opened from the endpoint
// record once per change of the record and kept in the endpoint's lane.
type access struct {
	lsn     records.LSN
	headers http.Header
	creds   *credentials // nil: no authentication
	client  *http.Client
	// own: the client is this endpoint's alone (it holds a client certificate); its idle
	// connections are closed when it is replaced or the lane is forgotten.
	own bool
	// secrets are the opened secrets, and the forms they travel in, which evidence must never
	// show even when a receiver echoes them (redactKnown).
	secrets []string
}

// credentials authenticate one endpoint's requests: exactly one of the kinds.
type credentials struct {
	kind        string
	headerName  string // records.AuthHeader
	headerValue string
	username    string // records.AuthBasic
	password    string
	tokens      *tokenSource // records.AuthOAuth2
}

// routes holds the sender's shared clients, one per route (the default, and each named
// proxy), for endpoints without a client certificate of their own.
type routes struct {
	guard *egress.Guard
	def   *http.Client

	mu      sync.Mutex
	byProxy map[string]*http.Client
}

func (r *routes) client(proxy string) (*http.Client, error) {
	if proxy == "" {
		return r.def, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.byProxy[proxy]; ok {
		return c, nil
	}
	c, err := r.guard.NewClient(egress.ClientOptions{Proxy: proxy})
	if err != nil {
		return nil, err
	}
	r.byProxy[proxy] = c
	return c, nil
}

func (r *routes) closeIdle() {
	r.def.CloseIdleConnections()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.byProxy {
		c.CloseIdleConnections()
	}
}

// accessFor returns the access of ep, opened anew when the record changed since the lane's
// copy was made. Its errors name what could not be opened, never a secret.
func (s *Sender) accessFor(l *lane, ep *records.Endpoint) (*access, error) {
	l.mu.Lock()
	cur := l.access
	l.mu.Unlock()
	if cur != nil && cur.lsn == ep.LSN {
		return cur, nil
	}
	acc, err := s.openAccess(ep)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	old := l.access
	l.access = acc
	l.mu.Unlock()
	if old != nil && old.own && old.client != acc.client {
		old.client.CloseIdleConnections()
	}
	return acc, nil
}

func (s *Sender) openAccess(ep *records.Endpoint) (*access, error) {
	o := ep.RequestOptions
	acc := &access{lsn: ep.LSN, headers: make(http.Header, len(o.Headers))}
	for name, value := range o.Headers {
		acc.headers.Set(name, value)
	}
	var err error
	if c := o.ClientCertificate; c != nil {
		key, oerr := s.cfg.SecretKeys.Open(c.KeyCiphertext, records.ClientKeyAAD(ep.ID))
		if oerr != nil {
			return nil, fmt.Errorf("client certificate key cannot be opened (check HOOKSTREAM_SECRET_KEY and HOOKSTREAM_SECRET_KEYS): %w", oerr)
		}
		cert, cerr := tls.X509KeyPair([]byte(c.CertificatePEM), key)
		if cerr != nil {
			return nil, fmt.Errorf("client certificate and key do not form a pair")
		}
		acc.secrets = append(acc.secrets, secretForms(string(key))...)
		acc.client, err = s.routes.guard.NewClient(egress.ClientOptions{Proxy: o.EgressProxy, Certificate: &cert})
		acc.own = true
	} else {
		acc.client, err = s.routes.client(o.EgressProxy)
	}
	if err != nil {
		return nil, fmt.Errorf("endpoint route: %w", err)
	}
	if a := o.Auth; a != nil {
		plain, oerr := s.cfg.SecretKeys.Open(a.SecretCiphertext, records.AuthAAD(ep.ID))
		if oerr != nil {
			return nil, fmt.Errorf("%s authentication secret cannot be opened (check HOOKSTREAM_SECRET_KEY and HOOKSTREAM_SECRET_KEYS): %w", a.Type, oerr)
		}
		secret := string(plain)
		acc.secrets = append(acc.secrets, secretForms(secret)...)
		c := &credentials{kind: a.Type}
		switch a.Type {
		case records.AuthHeader:
			c.headerName, c.headerValue = http.CanonicalHeaderKey(a.HeaderName), secret
		case records.AuthBasic:
			c.username, c.password = a.Username, secret
			acc.secrets = append(acc.secrets, basicCredential(a.Username, secret))
		case records.AuthOAuth2:
			c.tokens = s.tokenSourceFor(ep.ID, a, secret, acc.client)
			// client_secret_basic form-encodes both parts before they are joined (oauth.go);
			// client_secret_post sends the secret form-encoded in the body (secretForms).
			acc.secrets = append(acc.secrets, basicCredential(a.ClientID, secret),
				basicCredential(url.QueryEscape(a.ClientID), url.QueryEscape(secret)))
		default:
			return nil, fmt.Errorf("authentication type %q is not known to this sender", a.Type)
		}
		acc.creds = c
	}
	acc.secrets = longestFirst(acc.secrets)
	return acc, nil
}

// secretForms are the forms a secret may take in an answer that echoes the request: as sent in
// a header, form- or query-encoded as in a token request's body (and in a Basic credential of
// client_secret_basic), path-encoded, and as JSON string escapers write it (Go's, with and
// without HTML escaping, and those that also escape "/" or every non-ASCII character), so an
// echo in any of them is redacted by value.
func secretForms(s string) []string {
	if s == "" {
		return nil
	}
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s), strings.ReplaceAll(url.QueryEscape(s), "+", "%20")}
	forms = append(forms, jsonForms(s)...)
	return forms
}

// jsonForms are s escaped as the inside of a JSON string, by the escapers echoing servers use:
// Go's with and without HTML escaping, then those that also write "/" as "\/" (PHP) and every
// non-ASCII character as \uXXXX (Python's default).
func jsonForms(s string) []string {
	var out []string
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(s) != nil {
			continue
		}
		q := strings.TrimSuffix(b.String(), "\n")
		out = append(out, q[1:len(q)-1])
	}
	if len(out) == 0 {
		return nil
	}
	slashed := strings.ReplaceAll(out[len(out)-1], "/", `\/`)
	var ascii strings.Builder
	for _, r := range slashed {
		if r < utf8.RuneSelf {
			ascii.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&ascii, `\u%04x`, u)
		}
	}
	return append(out, slashed, ascii.String(), strings.ReplaceAll(ascii.String(), `\/`, "/"))
}

// basicCredential is the token of an HTTP Basic Authorization header.
func basicCredential(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}

// longestFirst dedupes forms and orders them longest first, so one form that contains another
// is replaced whole before the shorter one could cut it.
func longestFirst(forms []string) []string {
	slices.SortFunc(forms, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(forms)
}

// redactKnown replaces every occurrence of the endpoint's own secrets (and of the access token
// in use) in b, so a receiver or token endpoint that echoes the request cannot put them in the
// history; the pattern rules of excerpt.go then apply as to any answer.
func redactKnown(b []byte, secrets ...string) []byte {
	for _, s := range secrets {
		if s != "" && bytes.Contains(b, []byte(s)) {
			b = bytes.ReplaceAll(b, []byte(s), []byte(redacted))
		}
	}
	return b
}
