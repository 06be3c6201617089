package egress

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// receiver is a loopback test server that counts the requests reaching its handler.
type receiver struct {
	*httptest.Server
	hits     atomic.Int64
	lastHost atomic.Value // string
}

func newReceiver(t *testing.T, tls bool, handler http.HandlerFunc) *receiver {
	t.Helper()
	r := &receiver{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		r.lastHost.Store(req.Host)
		if handler != nil {
			handler(w, req)
		}
	}))
	// Refused TLS handshakes are expected here; keep them out of the test log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	r.Server = srv
	return r
}

func post(t *testing.T, client *http.Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(`{"type":"webhook.test"}`))
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err == nil {
		t.Cleanup(func() { _ = resp.Body.Close() })
	}
	return resp, err
}

func wantRefused(t *testing.T, err error, rule string) {
	t.Helper()
	if !errors.Is(err, ErrBlockedDestination) {
		t.Fatalf("error = %v, want one matching ErrBlockedDestination", err)
	}
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.Rule != rule {
		t.Fatalf("error = %v, want a *PolicyError with rule %q", err, rule)
	}
}

// TestDNSRebinding is the R37 "DNS rebinding" test: the name resolves to a public address when
// the URL is registered and to loopback when the sender connects. The connection is refused and
// the loopback server never sees a request.
func TestDNSRebinding(t *testing.T) {
	tests := []struct {
		name      string
		atConnect []string
	}{
		{"rebound to loopback", []string{"127.0.0.1"}},
		{"loopback added to the answer", []string{"127.0.0.1", publicV4}},
		{"rebound to mapped loopback", []string{"::ffff:127.0.0.1"}},
		{"rebound to metadata", []string{"169.254.169.254"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rcv := newReceiver(t, false, nil)
			port := serverPort(t, rcv.Server)
			res := newFakeResolver()
			res.set("rebind.test", publicV4)
			g := mustGuard(t, testConfig(res, func(c *Config) {
				c.AllowHTTP = true
				c.AllowedPorts = []int{port}
			}))
			url := fmt.Sprintf("http://rebind.test:%d/hook", port)
			if err := g.CheckURL(context.Background(), url); err != nil {
				t.Fatalf("CheckURL at registration: %v", err)
			}

			res.set("rebind.test", tt.atConnect...)
			for name, client := range map[string]*http.Client{
				"Client":    g.Client(),
				"Transport": {Transport: g.Transport()},
			} {
				_, err := post(t, client, url)
				if err == nil {
					t.Fatalf("%s: request after rebinding succeeded", name)
				}
				if !errors.Is(err, ErrBlockedDestination) {
					t.Fatalf("%s: error = %v, want ErrBlockedDestination", name, err)
				}
			}
			if n := rcv.hits.Load(); n != 0 {
				t.Fatalf("loopback server received %d requests", n)
			}
		})
	}
}

func TestDialAllowedLoopback(t *testing.T) {
	rcv := newReceiver(t, false, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	port := serverPort(t, rcv.Server)
	res := newFakeResolver()
	res.set("receiver.test", "127.0.0.1")
	g := mustGuard(t, testConfig(res, func(c *Config) {
		c.AllowHTTP = true
		c.AllowedPorts = []int{port}
		c.AllowCIDRs = []netip.Prefix{loopbackV4}
	}))
	for _, host := range []string{"receiver.test", "127.0.0.1", "localhost"} {
		url := fmt.Sprintf("http://%s:%d/hook", host, port)
		if err := g.CheckURL(context.Background(), url); err != nil {
			t.Fatalf("CheckURL(%s): %v", url, err)
		}
		resp, err := post(t, g.Client(), url)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("POST %s: status %d", url, resp.StatusCode)
		}
		// The name stays in the request even though the connection went to an IP.
		if got, want := rcv.lastHost.Load(), fmt.Sprintf("%s:%d", host, port); got != want {
			t.Fatalf("Host header = %v, want %s", got, want)
		}
	}
}

// TestRedirectNotFollowed is the R37 "private-IP redirect" test: an allowed receiver answers
// with a redirect to an internal address; the client hands back the 3xx and goes nowhere else.
func TestRedirectNotFollowed(t *testing.T) {
	target := newReceiver(t, false, nil)
	targetPort := serverPort(t, target.Server)
	for _, location := range []string{
		"http://169.254.169.254/latest/meta-data/",
		fmt.Sprintf("http://127.0.0.1:%d/internal", targetPort),
	} {
		t.Run(location, func(t *testing.T) {
			origin := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, location, http.StatusFound)
			})
			originPort := serverPort(t, origin.Server)
			res := newFakeResolver()
			res.set("receiver.test", "127.0.0.1")
			g := mustGuard(t, testConfig(res, func(c *Config) {
				c.AllowHTTP = true
				c.AllowedPorts = []int{originPort, targetPort, 80}
				c.AllowCIDRs = []netip.Prefix{loopbackV4}
			}))
			resp, err := post(t, g.Client(), fmt.Sprintf("http://receiver.test:%d/hook", originPort))
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != location {
				t.Fatalf("response = %d Location %q, want 302 to %s", resp.StatusCode, resp.Header.Get("Location"), location)
			}
			if n := target.hits.Load(); n != 0 {
				t.Fatalf("redirect target received %d requests", n)
			}
		})
	}
}

// TestTLSVerifiesURLHostname proves that dialing a checked IP keeps certificate verification
// against the URL's host name (R27). The httptest certificate is valid for example.com and
// 127.0.0.1 only.
func TestTLSVerifiesURLHostname(t *testing.T) {
	rcv := newReceiver(t, true, nil)
	port := serverPort(t, rcv.Server)
	res := newFakeResolver()
	res.set("example.com", "127.0.0.1")
	res.set("other.test", "127.0.0.1")
	roots := x509.NewCertPool()
	roots.AddCert(rcv.Certificate())
	guard := func(roots *x509.CertPool) *Guard {
		return mustGuard(t, testConfig(res, func(c *Config) {
			c.AllowedPorts = []int{port}
			c.AllowCIDRs = []netip.Prefix{loopbackV4}
			c.RootCAs = roots
		}))
	}

	resp, err := post(t, guard(roots).Client(), fmt.Sprintf("https://example.com:%d/hook", port))
	if err != nil {
		t.Fatalf("POST to the certificate's name: %v", err)
	}
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.TLS.ServerName != "example.com" {
		t.Fatalf("response %d, TLS %+v: want 200 over TLS to example.com", resp.StatusCode, resp.TLS)
	}

	_, err = post(t, guard(roots).Client(), fmt.Sprintf("https://other.test:%d/hook", port))
	var hostErr x509.HostnameError
	if !errors.As(err, &hostErr) || hostErr.Host != "other.test" {
		t.Fatalf("POST to another name on the same IP: error = %v, want x509.HostnameError for other.test", err)
	}

	_, err = post(t, guard(nil).Client(), fmt.Sprintf("https://example.com:%d/hook", port))
	var authErr x509.UnknownAuthorityError
	if !errors.As(err, &authErr) {
		t.Fatalf("POST without the test root: error = %v, want x509.UnknownAuthorityError", err)
	}
	if n := rcv.hits.Load(); n != 1 {
		t.Fatalf("server handled %d requests, want only the verified one", n)
	}
}

func TestClientRechecksEachRequest(t *testing.T) {
	rcv := newReceiver(t, false, nil)
	port := serverPort(t, rcv.Server)
	res := newFakeResolver()
	res.set("receiver.test", "127.0.0.1")
	g := mustGuard(t, testConfig(res, func(c *Config) {
		c.AllowedPorts = []int{port}
		c.AllowCIDRs = []netip.Prefix{loopbackV4}
	}))
	tests := []struct {
		url  string
		rule string
	}{
		{fmt.Sprintf("http://receiver.test:%d/", port), RuleScheme},
		{fmt.Sprintf("https://user:pw@receiver.test:%d/", port), RuleUserinfo},
		{"https://receiver.test:22/", RulePort},
		{fmt.Sprintf("https://metadata.google.internal:%d/", port), RuleMetadata},
		{fmt.Sprintf("https://10.0.0.1:%d/", port), RuleBlockedAddress},
	}
	for _, tt := range tests {
		body := &closeRecorder{Reader: strings.NewReader("{}")}
		req, err := http.NewRequest(http.MethodPost, tt.url, body)
		if err != nil {
			t.Fatalf("NewRequest: %v", err)
		}
		_, err = g.Client().Do(req)
		wantRefused(t, err, tt.rule)
		if !body.closed.Load() {
			t.Errorf("%s: request body not closed after refusal", tt.url)
		}
	}
	if n := rcv.hits.Load(); n != 0 {
		t.Fatalf("server received %d requests", n)
	}
}

type closeRecorder struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeRecorder) Close() error { c.closed.Store(true); return nil }

// slowReceiver starts a loopback receiver that runs answer and then hangs until the test
// ends, and returns its URL (under a host name resolving to it) and a guard with the given
// request timeout that allows it.
func slowReceiver(t *testing.T, timeout time.Duration, answer func(http.ResponseWriter)) (string, *Guard) {
	release := make(chan struct{})
	rcv := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
		answer(w)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	port := serverPort(t, rcv.Server)
	res := newFakeResolver()
	res.set("slow.test", "127.0.0.1")
	g := mustGuard(t, testConfig(res, func(c *Config) {
		c.AllowHTTP = true
		c.AllowedPorts = []int{port}
		c.AllowCIDRs = []netip.Prefix{loopbackV4}
		c.RequestTimeout = timeout
	}))
	return fmt.Sprintf("http://slow.test:%d/", port), g
}

func TestRequestTimeout(t *testing.T) {
	target, g := slowReceiver(t, 100*time.Millisecond, func(http.ResponseWriter) {})
	start := time.Now()
	_, err := post(t, g.Client(), target)
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("error = %v, want a timeout", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("request gave up after %s, want about 100ms", elapsed)
	}
}

// The timeout covers the whole exchange: a receiver that answers at once and then trickles its
// body forever is cut off too (the response-header timeout alone would not).
func TestRequestTimeoutCoversBody(t *testing.T) {
	target, g := slowReceiver(t, 200*time.Millisecond, func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
	})
	start := time.Now()
	resp, err := post(t, g.Client(), target)
	if err != nil {
		t.Fatalf("the headers came at once, yet: %v", err)
	}
	_, err = io.ReadAll(resp.Body)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("reading the body: %v, want the request deadline", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("body read gave up after %s, want about 200ms", elapsed)
	}
}

func TestDialContext(t *testing.T) {
	res := newFakeResolver()
	res.set("receiver.test", "127.0.0.1")
	res.set("public.test", publicV4)
	g := mustGuard(t, testConfig(res, func(c *Config) { c.AllowedPorts = []int{443} }))
	tests := []struct {
		network, address, rule string
	}{
		{"udp", "receiver.test:443", RuleNetwork},
		{"unix", "/var/run/docker.sock", RuleNetwork},
		{"tcp", "receiver.test", RuleHost},
		{"tcp", "receiver.test:22", RulePort},
		{"tcp", "receiver.test:https", RulePort},
		{"tcp", "receiver.test:443", RuleBlockedAddress},
		{"tcp", "127.0.0.1:443", RuleBlockedAddress},
		{"tcp", "[::1]:443", RuleBlockedAddress},
		{"tcp", "localhost:443", RuleHost},
		{"tcp", "metadata.google.internal:443", RuleMetadata},
		{"tcp", "2130706433:443", RuleHost},
	}
	for _, tt := range tests {
		conn, err := g.DialContext(context.Background(), tt.network, tt.address)
		if conn != nil {
			_ = conn.Close()
			t.Fatalf("DialContext(%s, %s) connected", tt.network, tt.address)
		}
		var pe *PolicyError
		if !errors.As(err, &pe) || pe.Rule != tt.rule {
			t.Errorf("DialContext(%s, %s) = %v, want rule %q", tt.network, tt.address, err, tt.rule)
		}
	}

	_, err := g.DialContext(context.Background(), "tcp", "nowhere.test:443")
	var dnsErr *net.DNSError
	if errors.Is(err, ErrBlockedDestination) || !errors.As(err, &dnsErr) {
		t.Errorf("unresolvable name: error = %v, want a *net.DNSError and not a blocked destination", err)
	}

	// A tcp6-only dial to a name with only IPv4 answers finds nothing to connect to and does
	// not fall back to another family.
	if _, err := g.DialContext(context.Background(), "tcp6", "public.test:443"); err == nil || errors.Is(err, ErrBlockedDestination) {
		t.Errorf("tcp6 dial to an IPv4-only name: error = %v, want a no-address error", err)
	}
}

// TestControl covers the second line of defence: the socket-level hook refuses the address
// actually being connected to, whatever resolved it.
func TestControl(t *testing.T) {
	g := mustGuard(t, testConfig(newFakeResolver(), nil))
	tests := []struct {
		network, address, rule string
	}{
		{"tcp4", publicV4 + ":443", ""},
		{"tcp6", "[" + publicV6 + "]:8443", ""},
		{"tcp4", "127.0.0.1:443", RuleBlockedAddress},
		{"tcp4", "10.0.0.1:443", RuleBlockedAddress},
		{"tcp6", "[::1]:443", RuleBlockedAddress},
		{"tcp6", "[fe80::1%eth0]:443", RuleBlockedAddress},
		{"tcp6", "[::ffff:127.0.0.1]:443", RuleBlockedAddress},
		{"tcp4", "169.254.169.254:443", RuleMetadata},
		{"tcp4", publicV4 + ":22", RulePort},
		{"udp4", publicV4 + ":443", RuleNetwork},
		{"tcp4", "not-an-address", RuleBlockedAddress},
	}
	for _, tt := range tests {
		err := g.Control(tt.network, tt.address, nil)
		if tt.rule == "" {
			if err != nil {
				t.Errorf("Control(%s, %s): %v", tt.network, tt.address, err)
			}
			continue
		}
		var pe *PolicyError
		if !errors.As(err, &pe) || pe.Rule != tt.rule {
			t.Errorf("Control(%s, %s) = %v, want rule %q", tt.network, tt.address, err, tt.rule)
		}
	}
}

func TestControlStopsAPlainDialer(t *testing.T) {
	rcv := newReceiver(t, false, nil)
	port := serverPort(t, rcv.Server)
	g := mustGuard(t, testConfig(newFakeResolver(), func(c *Config) { c.AllowedPorts = []int{port} }))
	d := &net.Dialer{Control: g.Control}
	conn, err := d.DialContext(context.Background(), "tcp", rcv.Listener.Addr().String())
	if conn != nil {
		_ = conn.Close()
	}
	wantRefused(t, err, RuleBlockedAddress)
}

func TestTransportSettings(t *testing.T) {
	g := mustGuard(t, testConfig(newFakeResolver(), func(c *Config) {
		c.TLSHandshakeTimeout = 3 * time.Second
		c.RequestTimeout = 9 * time.Second
	}))
	tr := g.Transport()
	if tr.Proxy != nil {
		t.Error("transport uses a proxy, which would connect to unchecked addresses")
	}
	if !tr.ForceAttemptHTTP2 {
		t.Error("HTTP/2 is off")
	}
	if tr.TLSHandshakeTimeout != 3*time.Second {
		t.Errorf("TLS handshake timeout = %s", tr.TLSHandshakeTimeout)
	}
	if tr.TLSClientConfig == nil || tr.TLSClientConfig.InsecureSkipVerify || tr.TLSClientConfig.ServerName != "" {
		t.Errorf("TLS config %+v must verify the URL's host name", tr.TLSClientConfig)
	}
	if tr.MaxIdleConnsPerHost < 2 {
		t.Errorf("MaxIdleConnsPerHost = %d", tr.MaxIdleConnsPerHost)
	}
	if c := g.Client(); c.CheckRedirect == nil {
		t.Error("the client follows redirects")
	}
}
