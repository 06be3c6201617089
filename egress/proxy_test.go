package egress

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// TestProxyCarriesDeliveries sends requests through a local CONNECT proxy: plain HTTP and TLS
// (verified end to end against the URL's name), with the proxy asked for the checked IP
// address, never the name, and the name kept in the Host header.
func TestProxyCarriesDeliveries(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tls), func(t *testing.T) {
			rcv := newReceiver(t, tls, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
			port := serverPort(t, rcv.Server)
			proxy := testenv.NewConnectProxy(t, "egress", "proxy-password")
			res := newFakeResolver()
			res.set("example.com", "127.0.0.1") // a name the test server's certificate holds
			g := mustGuard(t, testConfig(res, func(c *Config) {
				c.AllowHTTP = true
				c.AllowedPorts = []int{port}
				c.AllowCIDRs = []netip.Prefix{loopbackV4}
				c.Proxy = proxy.URL
				if tls {
					c.RootCAs = x509.NewCertPool()
					c.RootCAs.AddCert(rcv.Certificate())
				}
			}))
			scheme := "http"
			if tls {
				scheme = "https"
			}
			target := fmt.Sprintf("%s://example.com:%d/hook", scheme, port)
			for i := range 2 {
				resp, err := post(t, g.Client(), target)
				if err != nil {
					t.Fatalf("POST %d: %v", i, err)
				}
				if resp.StatusCode != http.StatusNoContent {
					t.Fatalf("POST %d: status %d", i, resp.StatusCode)
				}
			}
			if got, want := rcv.lastHost.Load(), fmt.Sprintf("example.com:%d", port); got != want {
				t.Fatalf("Host header = %v, want %s", got, want)
			}
			targets := proxy.Targets()
			if len(targets) == 0 {
				t.Fatal("the proxy opened no tunnel: the requests did not go through it")
			}
			for _, got := range targets {
				if want := fmt.Sprintf("127.0.0.1:%d", port); got != want {
					t.Fatalf("proxy asked for %q, want the checked address %s", got, want)
				}
			}
		})
	}
}

// TestProxyIsNoBypass: with a proxy configured, every destination the guard refuses directly
// is refused before the proxy is asked. The proxy itself is on loopback (its address is
// allowed because it is configured) and could reach the receiver, which is on loopback too.
func TestProxyIsNoBypass(t *testing.T) {
	rcv := newReceiver(t, false, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	port := serverPort(t, rcv.Server)
	proxy := testenv.NewConnectProxy(t, "", "")
	res := newFakeResolver()
	res.set("internal.test", "10.0.0.7")
	res.set("rebind.test", publicV4, "127.0.0.1") // one answer is internal
	res.set("loopback.test", "127.0.0.1")
	g := mustGuard(t, testConfig(res, func(c *Config) {
		c.AllowHTTP = true
		c.AllowedPorts = []int{port, 80}
		c.Proxy = proxy.URL
	}))
	tests := []struct {
		url, rule string
	}{
		{fmt.Sprintf("http://127.0.0.1:%d/hook", port), RuleBlockedAddress},
		{fmt.Sprintf("http://loopback.test:%d/hook", port), RuleBlockedAddress},
		{fmt.Sprintf("http://internal.test:%d/hook", port), RuleBlockedAddress},
		{fmt.Sprintf("http://rebind.test:%d/hook", port), RuleBlockedAddress},
		{fmt.Sprintf("http://localhost:%d/hook", port), RuleHost},
		{"http://169.254.169.254/latest/meta-data/", RuleMetadata},
		{fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/hook", port), RuleBlockedAddress},
		{"http://public.test:9999/hook", RulePort},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			_, err := post(t, g.Client(), tt.url)
			wantRefused(t, err, tt.rule)
		})
	}
	// The same guard without the proxy refuses the same way: the proxy changes the route only.
	direct := mustGuard(t, testConfig(res, func(c *Config) { c.AllowHTTP = true; c.AllowedPorts = []int{port, 80} }))
	for _, tt := range tests {
		_, err := post(t, direct.Client(), tt.url)
		wantRefused(t, err, tt.rule)
	}
	if got := proxy.Targets(); len(got) != 0 {
		t.Fatalf("the proxy was asked for %v; refused destinations must never reach it", got)
	}
	if n := rcv.hits.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

// TestNamedProxies: a client made for a named proxy goes through it, the default route through
// the default proxy; an unknown name is an error, not a direct connection.
func TestNamedProxies(t *testing.T) {
	rcv := newReceiver(t, false, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	port := serverPort(t, rcv.Server)
	def, eu := testenv.NewConnectProxy(t, "", ""), testenv.NewConnectProxy(t, "", "")
	g := mustGuard(t, testConfig(newFakeResolver(), func(c *Config) {
		c.AllowHTTP = true
		c.AllowedPorts = []int{port}
		c.AllowCIDRs = []netip.Prefix{loopbackV4}
		c.Proxy = def.URL
		c.Proxies = map[string]*url.URL{"eu": eu.URL}
	}))
	if !g.HasProxy("eu") || g.HasProxy("us") || !slices.Equal(g.ProxyNames(), []string{"eu"}) {
		t.Fatalf("proxies: HasProxy(eu)=%v HasProxy(us)=%v names %v", g.HasProxy("eu"), g.HasProxy("us"), g.ProxyNames())
	}
	c, err := g.NewClient(ClientOptions{Proxy: "eu"})
	if err != nil {
		t.Fatal(err)
	}
	target := fmt.Sprintf("http://127.0.0.1:%d/hook", port)
	if resp, err := post(t, c, target); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST through eu: %v %v", resp, err)
	}
	if len(eu.Targets()) != 1 || len(def.Targets()) != 0 {
		t.Fatalf("tunnels: eu %v, default %v; want one through eu", eu.Targets(), def.Targets())
	}
	if resp, err := post(t, g.Client(), target); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST through the default: %v %v", resp, err)
	}
	if len(def.Targets()) != 1 {
		t.Fatalf("default proxy tunnels %v, want one", def.Targets())
	}
	if _, err := g.NewClient(ClientOptions{Proxy: "us"}); err == nil {
		t.Fatal("NewClient with an unknown proxy name succeeded")
	}
}

// TestProxyRefusals: a proxy that wants credentials it was not given, or refuses the tunnel,
// fails the request with a *ProxyError carrying its status.
func TestProxyRefusals(t *testing.T) {
	rcv := newReceiver(t, false, nil)
	port := serverPort(t, rcv.Server)
	proxy := testenv.NewConnectProxy(t, "egress", "right-password")
	wrong := *proxy.URL
	wrong.User = url.UserPassword("egress", "wrong-password")
	for _, tt := range []struct {
		name   string
		proxy  *url.URL
		refuse int
		status int
	}{
		{"wrong credentials", &wrong, 0, http.StatusProxyAuthRequired},
		{"tunnel refused", proxy.URL, http.StatusForbidden, http.StatusForbidden},
		{"gateway timeout", proxy.URL, http.StatusGatewayTimeout, http.StatusGatewayTimeout},
	} {
		t.Run(tt.name, func(t *testing.T) {
			proxy.Refuse(tt.refuse)
			g := mustGuard(t, testConfig(newFakeResolver(), func(c *Config) {
				c.AllowHTTP = true
				c.AllowedPorts = []int{port}
				c.AllowCIDRs = []netip.Prefix{loopbackV4}
				c.Proxy = tt.proxy
			}))
			_, err := post(t, g.Client(), fmt.Sprintf("http://127.0.0.1:%d/hook", port))
			var pe *ProxyError
			if !errors.As(err, &pe) || pe.Status != tt.status {
				t.Fatalf("error %v, want a *ProxyError with status %d", err, tt.status)
			}
			if pe.Timeout() != (tt.status == http.StatusGatewayTimeout) {
				t.Fatalf("Timeout() = %v for %d", pe.Timeout(), tt.status)
			}
			if strings.Contains(err.Error(), "wrong-password") || strings.Contains(err.Error(), "right-password") {
				t.Fatalf("the error shows the proxy password: %v", err)
			}
		})
	}
	if n := rcv.hits.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

func TestProxyConfig(t *testing.T) {
	parse := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, tt := range []struct {
		proxy string
		ok    bool
	}{
		{"http://proxy.internal:3128", true},
		{"http://user:pa55@10.0.0.1:3128/", true},
		{"https://proxy.internal:3128", false},
		{"socks5://proxy.internal:1080", false},
		{"http://proxy.internal", false},
		{"http://proxy.internal:3128/path", false},
		{"http://proxy.internal:3128?x=1", false},
		{"http://:3128", false},
	} {
		cfg := testConfig(newFakeResolver(), func(c *Config) { c.Proxy = parse(tt.proxy) })
		err := cfg.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("Proxy %s: Validate() = %v, want ok=%v", tt.proxy, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), "pa55") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	cfg := testConfig(newFakeResolver(), func(c *Config) {
		c.Proxies = map[string]*url.URL{"EU": parse("http://proxy.internal:3128")}
	})
	if err := cfg.Validate(); err == nil {
		t.Error("an upper-case proxy name was accepted")
	}
	if got := ProxyDisplay(parse("http://user:secret@proxy:3128")); strings.Contains(got, "secret") {
		t.Errorf("ProxyDisplay = %s", got)
	}
}

// TestProxyAddressAllowedByConfiguration: the proxy's address is reached because it is the
// configured proxy, not because its range is allowed: here only 127.0.0.2 is allowed, as a
// destination, and the proxy listens on 127.0.0.1.
func TestProxyAddressAllowedByConfiguration(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.2: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	proxy := testenv.NewConnectProxy(t, "", "")
	g := mustGuard(t, testConfig(newFakeResolver(), func(c *Config) {
		c.AllowHTTP = true
		c.AllowedPorts = []int{port}
		c.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}
		c.Proxy = proxy.URL
	}))
	resp, err := post(t, g.Client(), fmt.Sprintf("http://127.0.0.2:%d/hook", port))
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST through the proxy: %v %v", resp, err)
	}
	if got := proxy.Targets(); !slices.Equal(got, []string{fmt.Sprintf("127.0.0.2:%d", port)}) {
		t.Fatalf("proxy tunnels %v", got)
	}
	// The proxy's address is no destination for it.
	_, err = post(t, g.Client(), "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(port))+"/hook")
	wantRefused(t, err, RuleBlockedAddress)
}
