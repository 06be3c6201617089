package sender

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/records"
)

// TestTokenCachedUntilExpiry: a token is reused until shortly before its expires_in runs out
// (on the token source's clock), a refused one is replaced at once, and a response without
// expires_in is kept for the default lifetime.
func TestTokenCachedUntilExpiry(t *testing.T) {
	var (
		mu        sync.Mutex
		issued    int
		expiresIn = `3600`
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		issued++
		w.Header().Set("Content-Type", "application/json")
		if expiresIn == "" {
			_, _ = fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"bearer"}`, issued)
			return
		}
		_, _ = fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":%s}`, issued, expiresIn)
	}))
	t.Cleanup(srv.Close)
	cfg := egress.DefaultConfig()
	cfg.AllowHTTP = true
	cfg.AllowedPorts = []int{port(t, srv.URL)}
	cfg.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	guard, err := egress.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ts := &tokenSource{auth: records.Auth{Type: records.AuthOAuth2, TokenURL: srv.URL, ClientID: "c"}, secret: "s3cret-value",
		client: guard.Client(), userAgent: DefaultUserAgent, now: func() time.Time { return now }, fetched: func() {}}
	get := func(reject, want string) {
		t.Helper()
		got, err := ts.get(context.Background(), reject)
		if err != nil || got != want {
			t.Fatalf("at %s: token %q, %v; want %q", now.Format(time.TimeOnly), got, err, want)
		}
	}
	get("", "tok-1")
	now = now.Add(3569 * time.Second) // 31 s before expiry: still good
	get("", "tok-1")
	now = now.Add(time.Second) // 30 s before: replaced
	get("", "tok-2")
	get("tok-2", "tok-3") // refused by the receiver: replaced at once
	get("tok-2", "tok-3") // another request that saw tok-2 refused takes the new one
	mu.Lock()
	expiresIn = `"120"` // some servers send a string
	mu.Unlock()
	get("tok-3", "tok-4")
	now = now.Add(95 * time.Second) // 120 s lifetime, renewed 24 s early (a fifth)
	get("", "tok-4")
	now = now.Add(2 * time.Second)
	get("", "tok-5")
	mu.Lock()
	expiresIn = ""
	mu.Unlock()
	get("tok-5", "tok-6")
	now = now.Add(defaultTokenLifetime - tokenEarly - time.Second)
	get("", "tok-6")
	mu.Lock()
	expiresIn = `0`
	mu.Unlock()
	if _, err := ts.get(context.Background(), "tok-6"); err == nil {
		t.Fatal("expires_in 0 was accepted")
	}
}
