package egress

import (
	"errors"
	"net"
	"net/netip"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	prefixes := func(ps ...string) []netip.Prefix {
		out := make([]netip.Prefix, len(ps))
		for i, p := range ps {
			out[i] = netip.MustParsePrefix(p)
		}
		return out
	}
	tests := []struct {
		name  string
		allow []netip.Prefix
		addr  string
		rule  string // empty: allowed
	}{
		{"public IPv4", nil, publicV4, ""},
		{"public IPv6", nil, publicV6, ""},
		{"mapped public IPv4", nil, "::ffff:" + publicV4, ""},
		{"loopback", nil, "127.0.0.1", RuleBlockedAddress},
		{"zero address", nil, "0.0.0.0", RuleBlockedAddress},
		{"IPv6 loopback", nil, "::1", RuleBlockedAddress},
		{"NAT64 of public, range not allowed", nil, "64:ff9b::5db8:d822", RuleBlockedAddress},
		{"6to4 of public", nil, "2002:5db8:d822::1", RuleBlockedAddress},
		{"Teredo with public ends", nil, "2001:0:5db8:d822::a247:27dd", RuleBlockedAddress},
		{"metadata", nil, "169.254.169.254", RuleMetadata},
		{"metadata, mapped", nil, "::ffff:169.254.169.254", RuleMetadata},
		{"metadata, NAT64", nil, "64:ff9b::a9fe:a9fe", RuleMetadata},
		{"metadata, 6to4", nil, "2002:a9fe:a9fe::", RuleMetadata},
		{"metadata, IPv6", nil, "fd00:ec2::254", RuleMetadata},
		{"Azure WireServer is public but refused", nil, "168.63.129.16", RuleMetadata},

		// Operator-allowed ranges.
		{"allowed loopback", prefixes("127.0.0.0/8"), "127.0.0.1", ""},
		{"allowed loopback, mapped", prefixes("127.0.0.0/8"), "::ffff:127.0.0.1", ""},
		{"allowed loopback does not allow ::1", prefixes("127.0.0.0/8"), "::1", RuleBlockedAddress},
		{"allowed private network", prefixes("10.0.0.0/8"), "10.1.2.3", ""},
		{"metadata stays refused in allowed link-local", prefixes("169.254.0.0/16"), "169.254.169.254", RuleMetadata},
		{"rest of allowed link-local", prefixes("169.254.0.0/16"), "169.254.1.1", ""},
		{"Alibaba metadata stays refused in allowed CGNAT", prefixes("100.64.0.0/10"), "100.100.100.200", RuleMetadata},
		{"AWS IPv6 metadata stays refused in allowed ULA", prefixes("fd00::/8"), "fd00:ec2::254", RuleMetadata},
		{"allowed ULA", prefixes("fd00::/8"), "fd00:1::1", ""},
		{"allowed NAT64 reaching public", prefixes("64:ff9b::/96"), "64:ff9b::5db8:d822", ""},
		{"allowed NAT64 reaching loopback", prefixes("64:ff9b::/96"), "64:ff9b::7f00:1", RuleBlockedAddress},
		{"allowed NAT64 reaching private", prefixes("64:ff9b::/96"), "64:ff9b::a00:1", RuleBlockedAddress},
		{"allowed 6to4 reaching private", prefixes("2002::/16"), "2002:c0a8:101::1", RuleBlockedAddress},
		{"allowed Teredo, private server", prefixes("2001::/32"), "2001:0:a00:1::a247:27dd", RuleBlockedAddress},
		{"allowed Teredo, private client", prefixes("2001::/32"), "2001:0:5db8:d822::f5ff:fffe", RuleBlockedAddress},
		{"allowed Teredo, public ends", prefixes("2001::/32"), "2001:0:5db8:d822::a247:27dd", ""},
		{"NAT64 reaching allowed loopback", prefixes("64:ff9b::/96", "127.0.0.0/8"), "64:ff9b::7f00:1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGuard(t, testConfig(newFakeResolver(), func(c *Config) { c.AllowCIDRs = tt.allow }))
			err := g.CheckAddr(netip.MustParseAddr(tt.addr))
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("CheckAddr(%s): %v", tt.addr, err)
				}
				return
			}
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.Rule != tt.rule {
				t.Fatalf("CheckAddr(%s) = %v, want rule %q", tt.addr, err, tt.rule)
			}
		})
	}
}

func TestCheckAddrInvalid(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, testConfig(newFakeResolver(), nil))
	if err := g.CheckAddr(netip.Addr{}); !errors.Is(err, ErrBlockedDestination) {
		t.Fatalf("CheckAddr(zero Addr) = %v, want ErrBlockedDestination", err)
	}
}

func TestEmbeddedIPv4(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want []string
	}{
		{"::ffff:10.0.0.1", nil}, // judged after Unmap, not here
		{"::", nil},
		{"::1", nil},
		{"::7f00:1", []string{"127.0.0.1"}},
		{"64:ff9b::a00:1", []string{"10.0.0.1"}},
		{"64:ff9b:1::a00:1", nil},
		{"2002:c000:0201::", []string{"192.0.2.1"}},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", []string{"65.54.227.120", "192.0.2.45"}}, // RFC 4380 example
		{publicV6, nil},
		{"10.0.0.1", nil},
	}
	for _, tt := range tests {
		got := embeddedIPv4(netip.MustParseAddr(tt.addr))
		if len(got) != len(tt.want) {
			t.Errorf("embeddedIPv4(%s) = %v, want %v", tt.addr, got, tt.want)
			continue
		}
		for i, e := range got {
			if e.addr.String() != tt.want[i] {
				t.Errorf("embeddedIPv4(%s)[%d] = %s, want %s", tt.addr, i, e.addr, tt.want[i])
			}
		}
	}
}

func TestPolicyErrorMatching(t *testing.T) {
	t.Parallel()
	dnsErr := &net.DNSError{Err: "no such host", Name: "x.test", IsNotFound: true}
	tests := []struct {
		err         *PolicyError
		wantBlocked bool
		wantDNS     bool
	}{
		{refuse(RuleBlockedAddress, "10.0.0.1 is private"), true, false},
		{refuse(RuleMetadata, "metadata"), true, false},
		{refuse(RulePort, "22"), true, false},
		{&PolicyError{Rule: RuleResolve, Detail: "cannot resolve x.test", Err: dnsErr}, false, true},
	}
	for _, tt := range tests {
		wrapped := &net.OpError{Op: "dial", Net: "tcp", Err: tt.err}
		if got := errors.Is(wrapped, ErrBlockedDestination); got != tt.wantBlocked {
			t.Errorf("%v: errors.Is(ErrBlockedDestination) = %v, want %v", tt.err, got, tt.wantBlocked)
		}
		var de *net.DNSError
		if got := errors.As(wrapped, &de); got != tt.wantDNS {
			t.Errorf("%v: errors.As(*net.DNSError) = %v, want %v", tt.err, got, tt.wantDNS)
		}
	}
}
