package sender

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/webhook"
)

// refusingPort returns a port of 127.0.0.1 that refuses connections while the test runs: a
// socket bound to it that never listens. A port closed after listening could be taken by
// another process before the test connects (a CI machine's SSH tunnel once answered on one).
func refusingPort(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*syscall.SockaddrInet4).Port
}

// hang holds a request until the client goes away. The body is read first: only then does the
// server watch the connection and cancel the request's context when the client leaves.
func hang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// tableResolver answers from a fixed table; other names do not exist.
type tableResolver map[string][]netip.Addr

func (r tableResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if addrs, ok := r[host]; ok {
		return addrs, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func port(t *testing.T, rawURL string) int {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rawReceiver serves every connection below HTTP: it reads the request's head and hands the
// connection to answer, then closes it.
func rawReceiver(t *testing.T, answer func(*net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 0, 4096)
				chunk := make([]byte, 4096)
				for !strings.Contains(string(buf), "\r\n\r\n") {
					n, err := c.Read(chunk)
					if err != nil {
						return
					}
					buf = append(buf, chunk[:n]...)
				}
				answer(c.(*net.TCPConn))
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/hook"
}

// The classification against real local servers (R19, R20): every kind of answer
// and failure yields its category, retry decision and evidence.
func TestPostClassifiesRealOutcomes(t *testing.T) {
	t.Parallel()
	var followed atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		followed.Add(1) // a redirect must never be followed here
	}))
	defer target.Close()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/")
		switch {
		case path == "hang":
			hang(r)
			return
		case path == "big":
			w.WriteHeader(200)
			_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
			return
		case path == "big500":
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`{"error":"boom","echo":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw","authorization":"Bearer abcdef"}` + strings.Repeat("y", 200<<10)))
			return
		case path == "redirect-local":
			w.Header().Set("Location", target.URL+"/elsewhere")
			w.WriteHeader(302)
			return
		case path == "redirect-private":
			w.Header().Set("Location", "http://10.0.0.1/admin")
			w.WriteHeader(302)
			return
		case path == "redirect-metadata":
			w.Header().Set("Location", "http://169.254.169.254/latest/meta-data/")
			w.WriteHeader(307)
			return
		case path == "429ra":
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
			return
		case path == "503date":
			w.Header().Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
			w.WriteHeader(503)
			return
		}
		code, err := strconv.Atoi(path)
		if err != nil {
			code = 400
		}
		w.WriteHeader(code)
		_, _ = fmt.Fprintf(w, "answer %d", code)
	}))
	defer srv.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer tlsSrv.Close()
	closedURL := "http://127.0.0.1:" + strconv.Itoa(refusingPort(t)) + "/hook"
	// Receivers that misbehave below HTTP: each reads the request's head, then answers badly.
	resetURL := rawReceiver(t, func(c *net.TCPConn) { _ = c.SetLinger(0) }) // close with RST
	hangUpURL := rawReceiver(t, func(*net.TCPConn) {})                      // close with FIN, no answer
	hugeHeadersURL := rawReceiver(t, func(c *net.TCPConn) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := "X-Filler: " + strings.Repeat("h", 1000) + "\r\n"
		for i := 0; i < 2<<10; i++ { // 2 MB of headers
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
		_, _ = io.WriteString(c, "Content-Length: 0\r\n\r\n")
	})
	garbageURL := rawReceiver(t, func(c *net.TCPConn) { _, _ = io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n\r\n") })

	cfg := egress.DefaultConfig()
	cfg.AllowHTTP = true
	cfg.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.AllowedPorts = []int{port(t, srv.URL), port(t, target.URL), port(t, tlsSrv.URL), port(t, closedURL), 80,
		port(t, resetURL), port(t, hangUpURL), port(t, hugeHeadersURL), port(t, garbageURL)}
	cfg.RequestTimeout = 500 * time.Millisecond
	cfg.Resolver = tableResolver{
		"receiver.test": {netip.MustParseAddr("127.0.0.1")},
		"private.test":  {netip.MustParseAddr("10.1.2.3")},
	}
	guard, err := egress.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &poster{userAgent: DefaultUserAgent, policy: Policy{RetryClientErrors: true, MaxRetryAfter: time.Hour},
		maxResponse: cfg.MaxResponseBytes, now: time.Now}
	direct := &access{client: guard.Client()}
	signer, err := webhook.NewSigner("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}

	srvPort := strconv.Itoa(port(t, srv.URL))
	tests := []struct {
		name       string
		url        string
		status     int
		category   string // "" = delivered
		retryable  bool
		retryAfter func(time.Duration) bool
		excerpt    string // substring the evidence must hold
	}{
		{"200", srv.URL + "/200", 200, "", false, nil, "answer 200"},
		{"204", srv.URL + "/204", 204, "", false, nil, ""},
		{"host name resolved at dial", "http://receiver.test:" + srvPort + "/200", 200, "", false, nil, ""},
		{"301", srv.URL + "/301", 301, records.CategoryRedirect, true, nil, "answer 301"},
		{"400", srv.URL + "/400", 400, records.CategoryHTTPStatus, true, nil, "answer 400"},
		{"404", srv.URL + "/404", 404, records.CategoryHTTPStatus, true, nil, ""},
		{"408", srv.URL + "/408", 408, records.CategoryHTTPStatus, true, nil, ""},
		{"410", srv.URL + "/410", 410, records.CategoryHTTPStatus, false, nil, ""},
		{"425", srv.URL + "/425", 425, records.CategoryHTTPStatus, true, nil, ""},
		{"429", srv.URL + "/429", 429, records.CategoryHTTPStatus, true, func(d time.Duration) bool { return d == 0 }, ""},
		{"429 with retry-after", srv.URL + "/429ra", 429, records.CategoryHTTPStatus, true, func(d time.Duration) bool { return d == 2*time.Second }, ""},
		{"500", srv.URL + "/500", 500, records.CategoryHTTPStatus, true, nil, "answer 500"},
		{"503 with retry-after date", srv.URL + "/503date", 503, records.CategoryHTTPStatus, true,
			func(d time.Duration) bool { return d > 58*time.Minute && d <= time.Hour }, ""},
		{"oversized 200", srv.URL + "/big", 200, "", false, nil, "xxx"},
		{"oversized 500", srv.URL + "/big500", 500, records.CategoryHTTPStatus, true, nil, "boom"},
		{"hanging", srv.URL + "/hang", 0, records.CategoryTimeout, true, nil, ""},
		{"closed port", closedURL, 0, records.CategoryConnectionRefused, true, nil, "refused"},
		{"connection reset by the receiver", resetURL, 0, records.CategoryConnectionReset, true, nil, "reset"},
		{"connection closed without an answer", hangUpURL, 0, records.CategoryConnectionReset, true, nil, "EOF"},
		{"2 MB of response headers", hugeHeadersURL, 0, records.CategoryInvalidResponse, true, nil, "headers exceeded"},
		{"an answer that is not HTTP", garbageURL, 0, records.CategoryInvalidResponse, true, nil, "malformed"},
		{"unknown host", "http://nowhere.test:" + srvPort + "/", 0, records.CategoryDNS, true, nil, "no such host"},
		{"untrusted certificate", tlsSrv.URL + "/", 0, records.CategoryTLS, true, nil, "certificate"},
		{"private address", "http://10.0.0.1:" + srvPort + "/", 0, records.CategoryBlockedDestination, true, nil, "10.0.0.1"},
		{"name resolving to a private address", "http://private.test:" + srvPort + "/", 0, records.CategoryBlockedDestination, true, nil, "10.1.2.3"},
		{"metadata address", "http://169.254.169.254/latest/", 0, records.CategoryBlockedDestination, true, nil, ""},
		{"redirect to a local server", srv.URL + "/redirect-local", 302, records.CategoryRedirect, true, nil, "location: " + target.URL},
		{"redirect to a private address", srv.URL + "/redirect-private", 302, records.CategoryRedirect, true, nil, "10.0.0.1"},
		{"redirect to metadata", srv.URL + "/redirect-metadata", 307, records.CategoryRedirect, true, nil, "169.254.169.254"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := p.post(context.Background(), tt.url, signer, "evt_1", []byte(`{"a":1}`), direct)
			if res.abandoned {
				t.Fatal("abandoned")
			}
			if res.status != tt.status {
				t.Fatalf("status %d, want %d (failure %v)", res.status, tt.status, res.failure)
			}
			if tt.category == "" {
				if res.failure != nil {
					t.Fatalf("failure %v, want delivered", res.failure)
				}
			} else if res.failure == nil || res.failure.Category != tt.category || res.failure.Retryable != tt.retryable {
				t.Fatalf("failure %+v, want %s retryable %v", res.failure, tt.category, tt.retryable)
			}
			if tt.retryAfter != nil && !tt.retryAfter(res.failure.RetryAfter) {
				t.Fatalf("retry after %s", res.failure.RetryAfter)
			}
			if len(res.excerpt) > MaxExcerptBytes || !strings.Contains(res.excerpt, tt.excerpt) {
				t.Fatalf("excerpt (%d bytes) %q lacks %q", len(res.excerpt), res.excerpt, tt.excerpt)
			}
			if low := strings.ToLower(res.excerpt); tt.category == records.CategoryTimeout &&
				!strings.Contains(low, "timeout") && !strings.Contains(low, "deadline") {
				t.Fatalf("timeout evidence %q", res.excerpt)
			}
			for _, secret := range []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "abcdef"} {
				if strings.Contains(res.excerpt, secret) {
					t.Fatalf("excerpt leaks %q: %q", secret, res.excerpt)
				}
			}
			if res.started.IsZero() || res.latency < 0 {
				t.Fatalf("evidence: started %v latency %v", res.started, res.latency)
			}
		})
	}
	if n := followed.Load(); n != 0 {
		t.Fatalf("a redirect was followed %d times (R27)", n)
	}
}

// A request cancelled by the sender itself (shutdown, revoke) is abandoned, not classified.
func TestPostAbandonedOnCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hang(r) }))
	defer srv.Close()
	cfg := egress.DefaultConfig()
	cfg.AllowHTTP = true
	cfg.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.AllowedPorts = []int{port(t, srv.URL)}
	guard, err := egress.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &poster{userAgent: DefaultUserAgent, maxResponse: 1024, now: time.Now}
	signer, _ := webhook.NewSigner("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if res := p.post(ctx, srv.URL, signer, "evt_1", []byte(`{}`), &access{client: guard.Client()}); !res.abandoned {
		t.Fatalf("result %+v, want abandoned", res)
	}
}
