package egress

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
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
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string // empty: valid
	}{
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.change(&cfg)
			err := cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate error = %v, want one mentioning %q", err, tt.wantErr)
			}
			if _, err := New(cfg); err == nil {
				t.Fatal("New accepted an invalid config")
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	err := Config{}.Validate()
	if err == nil {
		t.Fatal("zero Config is valid")
	}
	for _, want := range []string{"connect timeout", "request timeout", "max response bytes", "resolver"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
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
