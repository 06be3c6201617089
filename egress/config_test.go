package egress

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestDefaultConfig(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("DefaultConfig is invalid: %v", err)
	}
	if cfg.AllowHTTP || len(cfg.AllowCIDRs) != 0 {
		t.Errorf("DefaultConfig allows more than public HTTPS: %+v", cfg)
	}
	if cfg.ConnectTimeout != 5*time.Second || cfg.TLSHandshakeTimeout != 5*time.Second ||
		cfg.RequestTimeout != 15*time.Second || cfg.MaxResponseBytes != 64<<10 {
		t.Errorf("DefaultConfig limits differ from design.md section 7: %+v", cfg)
	}
}

func TestValidate(t *testing.T) {
	tests := []testenv.ConfigCase[Config]{
		{"defaults", func(*Config) {}, ""},
		{"explicit ports", func(c *Config) { c.AllowedPorts = []int{443, 9443} }, ""},
		{"allowed CIDRs", func(c *Config) { c.AllowCIDRs = []netip.Prefix{loopbackV4, netip.MustParsePrefix("fd00::/8")} }, ""},
		{"port zero", func(c *Config) { c.AllowedPorts = []int{0} }, "allowed port 0"},
		{"port too large", func(c *Config) { c.AllowedPorts = []int{65536} }, "allowed port 65536"},
		{"invalid CIDR", func(c *Config) { c.AllowCIDRs = []netip.Prefix{{}} }, "not valid"},
		{"mapped CIDR", func(c *Config) { c.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("::ffff:127.0.0.0/104")} }, "IPv4-mapped"},
		{"no connect timeout", func(c *Config) { c.ConnectTimeout = 0 }, "connect timeout"},
		{"negative TLS timeout", func(c *Config) { c.TLSHandshakeTimeout = -time.Second }, "TLS handshake timeout"},
		{"no request timeout", func(c *Config) { c.RequestTimeout = 0 }, "request timeout"},
		{"no response limit", func(c *Config) { c.MaxResponseBytes = 0 }, "max response bytes"},
		{"no resolver", func(c *Config) { c.Resolver = nil }, "resolver is nil"},
	}
	testenv.CheckValidate(t, DefaultConfig, Config.Validate, tests)
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.Change(&cfg)
		if _, err := New(cfg); tt.Want != "" && err == nil {
			t.Errorf("%s: New accepted an invalid config", tt.Name)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	testenv.ErrorMentions(t, Config{}.Validate(), "connect timeout", "request timeout", "max response bytes", "resolver")
}

func TestEffectivePorts(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   []int
	}{
		{"https only", nil, []int{443, 8443}},
		{"http allowed adds 80", func(c *Config) { c.AllowHTTP = true }, []int{443, 8443, 80}},
		{"explicit list is exact", func(c *Config) { c.AllowHTTP = true; c.AllowedPorts = []int{9000} }, []int{9000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGuard(t, testConfig(newFakeResolver(), tt.change))
			if got := g.Config().AllowedPorts; !slices.Equal(got, tt.want) {
				t.Fatalf("ports = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConfigIsACopy(t *testing.T) {
	cfg := testConfig(newFakeResolver(), func(c *Config) { c.AllowCIDRs = []netip.Prefix{loopbackV4} })
	g := mustGuard(t, cfg)
	cfg.AllowCIDRs[0] = netip.MustParsePrefix("10.0.0.0/8")
	g.Config().AllowCIDRs[0] = netip.MustParsePrefix("10.0.0.0/8")
	if err := g.CheckAddr(netip.MustParseAddr("10.0.0.1")); err == nil {
		t.Fatal("changing the caller's slices widened the guard's policy")
	}
}
