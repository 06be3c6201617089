package sender

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hookstream/hookstream/internal/clip"
	"github.com/hookstream/hookstream/internal/records"
)

// OAuth 2.0 client credentials (RFC 6749 section 4.4). The token is fetched from the
// endpoint's token URL with the endpoint's own client, so through the egress guard and the
// endpoint's route like the webhook itself, kept until shortly before it expires, and fetched
// anew once when the receiver answers 401 to it.
const (
	// maxTokenResponse bounds what is read of a token endpoint's answer.
	maxTokenResponse = 64 << 10
	// defaultTokenLifetime is assumed when a token response has no expires_in.
	defaultTokenLifetime = time.Hour
	// tokenEarly: a token is replaced this long before it expires (at most a fifth of its
	// lifetime), so a request never starts with a token about to lapse.
	tokenEarly = 30 * time.Second
)

// tokenSource fetches and caches one endpoint's access token. Fetches are serialised: the
// requests that find no valid token wait for the one fetch.
type tokenSource struct {
	fingerprint string
	auth        records.Auth
	secret      string
	client      *http.Client
	userAgent   string
	now         func() time.Time
	fetched     func() // counts a token request (metrics)

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

// tokenError is a failed token request: no webhook was sent.
type tokenError struct {
	status  int    // the token endpoint's HTTP status; 0 when none arrived or it was 2xx
	excerpt []byte // the start of its answer, for the evidence (redacted before use)
	err     error  // transport error or what was wrong with the answer
}

func (e *tokenError) Error() string {
	switch {
	case e.status != 0:
		return fmt.Sprintf("oauth token request: the token endpoint answered HTTP %d", e.status)
	case e.err != nil:
		return "oauth token request: " + transportMessage(e.err)
	}
	return "oauth token request failed"
}

func (e *tokenError) Unwrap() error { return e.err }

// tokenSourceFor returns the endpoint's token source, the same one while its OAuth settings
// and secret stay the same (a token outlives changes of the endpoint's other settings, and the
// endpoint's lane being forgotten while idle).
func (s *Sender) tokenSourceFor(endpointID string, a *records.Auth, secret string, client *http.Client) *tokenSource {
	h := sha256.New()
	for _, part := range []string{a.TokenURL, a.ClientID, strings.Join(a.Scopes, " "), a.Audience, a.ClientAuthMethod, secret} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	fp := hex.EncodeToString(h.Sum(nil))
	s.tokensMu.Lock()
	defer s.tokensMu.Unlock()
	if ts, ok := s.tokens[endpointID]; ok && ts.fingerprint == fp {
		ts.mu.Lock()
		ts.client = client // the route may have changed
		ts.mu.Unlock()
		return ts
	}
	ts := &tokenSource{fingerprint: fp, auth: *a, secret: secret, client: client, userAgent: s.cfg.UserAgent, now: s.now,
		fetched: func() { s.m.tokenRequests.Inc() }}
	s.tokens[endpointID] = ts
	return ts
}

// get returns a token that is not about to expire and is not reject (the token a receiver has
// just refused), fetching one when it has none.
func (ts *tokenSource) get(ctx context.Context, reject string) (string, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.token != "" && ts.token != reject && ts.now().Before(ts.renewAt) {
		return ts.token, nil
	}
	token, lifetime, err := ts.fetch(ctx)
	if err != nil {
		return "", err
	}
	early := min(tokenEarly, lifetime/5)
	ts.token, ts.renewAt = token, ts.now().Add(lifetime-early)
	return token, nil
}

func (ts *tokenSource) fetch(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(ts.auth.Scopes) > 0 {
		form.Set("scope", strings.Join(ts.auth.Scopes, " "))
	}
	if ts.auth.Audience != "" {
		form.Set("audience", ts.auth.Audience)
	}
	basic := ts.auth.ClientAuthMethod != records.ClientSecretPost
	if !basic {
		form.Set("client_id", ts.auth.ClientID)
		form.Set("client_secret", ts.secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.auth.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &tokenError{err: errors.New("token URL does not parse")}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", ts.userAgent)
	if basic {
		// RFC 6749 section 2.3.1: both parts form-encoded before they are joined.
		req.SetBasicAuth(url.QueryEscape(ts.auth.ClientID), url.QueryEscape(ts.secret))
	}
	ts.fetched()
	resp, err := ts.client.Do(req)
	if err != nil {
		return "", 0, &tokenError{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", 0, &tokenError{status: resp.StatusCode, excerpt: body}
	}
	if err != nil {
		return "", 0, &tokenError{err: fmt.Errorf("reading the token response: %w", err)}
	}
	var tok struct {
		AccessToken string          `json:"access_token"`
		TokenType   string          `json:"token_type"`
		ExpiresIn   json.RawMessage `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return "", 0, &tokenError{err: errors.New("the token response has no access_token")}
	}
	if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer") {
		return "", 0, &tokenError{err: fmt.Errorf("the token type %q is not bearer", clip.Marked(tok.TokenType, 40))}
	}
	lifetime := defaultTokenLifetime
	if len(tok.ExpiresIn) > 0 && string(tok.ExpiresIn) != "null" {
		// A number by RFC 6749; some servers send it as a string.
		var secs json.Number
		if err := json.Unmarshal(tok.ExpiresIn, &secs); err != nil {
			var s string
			if json.Unmarshal(tok.ExpiresIn, &s) == nil {
				secs = json.Number(s)
			}
		}
		n, err := secs.Int64()
		if err != nil || n <= 0 {
			return "", 0, &tokenError{err: errors.New("the token response has an invalid expires_in")}
		}
		lifetime = time.Duration(min(n, int64(365*24*3600))) * time.Second
	}
	return tok.AccessToken, lifetime, nil
}

// authorize sets c's credentials on req. With OAuth it returns the token used; reject is a
// token the receiver has just refused, which is not used again.
func (c *credentials) authorize(ctx context.Context, req *http.Request, reject string) (token string, err error) {
	switch c.kind {
	case records.AuthHeader:
		req.Header.Set(c.headerName, c.headerValue)
	case records.AuthBasic:
		req.SetBasicAuth(c.username, c.password)
	case records.AuthOAuth2:
		if token, err = c.tokens.get(ctx, reject); err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return token, nil
}
