package egress

import (
	"context"
	"net"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Public addresses used as DNS answers. Tests never connect to them: every test that dials has
// its receiver on 127.0.0.1.
const (
	publicV4 = "93.184.216.34"
	publicV6 = "2606:2800:220:1:248:1893:25c8:1946"
)

// fakeResolver answers from a table that tests change between registration and connection.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	lookups int
}

func newFakeResolver() *fakeResolver {
	return &fakeResolver{answers: map[string][]netip.Addr{}}
}

// set makes host resolve to addrs; no addrs means an empty answer.
func (r *fakeResolver) set(host string, addrs ...string) {
	parsed := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		parsed[i] = netip.MustParseAddr(a)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[host] = parsed
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	addrs, ok := r.answers[strings.TrimSuffix(strings.ToLower(host), ".")]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

func (r *fakeResolver) lookupCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups
}

// testConfig is DefaultConfig with res as resolver and any changes applied.
func testConfig(res Resolver, change func(*Config)) Config {
	cfg := DefaultConfig()
	cfg.Resolver = res
	if change != nil {
		change(&cfg)
	}
	return cfg
}

func mustGuard(t testing.TB, cfg Config) *Guard {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

func serverPort(t testing.TB, srv *httptest.Server) int {
	t.Helper()
	_, p, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("server address: %v", err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("server port: %v", err)
	}
	return port
}

var loopbackV4 = netip.MustParsePrefix("127.0.0.0/8")
