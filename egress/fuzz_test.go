package egress

import (
	"context"
	"errors"
	"hash/fnv"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"testing"
)

var knownRules = []string{
	RuleURL, RuleScheme, RulePort, RuleUserinfo, RuleHost, RuleMetadata, RuleBlockedAddress, RuleResolve, RuleNetwork,
}

// hashResolver gives every name a fixed answer chosen by its hash, so the fuzzer meets public,
// private, mixed, mapped and missing answers without a table.
type hashResolver struct{}

var hashAnswers = [][]netip.Addr{
	{netip.MustParseAddr(publicV4)},
	{netip.MustParseAddr(publicV6)},
	{netip.MustParseAddr("::ffff:" + publicV4)},
	{netip.MustParseAddr(publicV4), netip.MustParseAddr("10.0.0.1")},
	{netip.MustParseAddr("127.0.0.1")},
	{netip.MustParseAddr("169.254.169.254")},
	{netip.MustParseAddr("64:ff9b::7f00:1")},
	{netip.MustParseAddr("fe80::1")},
	{},
	nil, // not found
}

func (hashResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	answer := hashAnswers[hashIndex(host)]
	if answer == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return answer, nil
}

func hashIndex(host string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(host))
	return int(h.Sum32() % uint32(len(hashAnswers)))
}

// isPublic is an oracle written independently of the guard: the netip predicates and the IANA
// ranges a public webhook receiver can never be in.
func isPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.Zone() != "" || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3", "168.63.129.16/32",
		"::/8", "64:ff9b::/96", "64:ff9b:1::/48", "2001::/23", "2001:db8::/32", "2002::/16", "fc00::/7", "fec0::/10",
	} {
		if netip.MustParsePrefix(p).Contains(a) {
			return false
		}
	}
	return a.Is4() || netip.MustParsePrefix("2000::/3").Contains(a)
}

func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{
		"https://example.com/", "http://example.com:8443/hooks", "https://93.184.216.34/", "https://[::1]/",
		"http://2130706433/", "http://0x7f.0.0.1/", "https://[::ffff:127.0.0.1]/", "https://[64:ff9b::a00:1]/",
		"https://user:pw@example.com/", "https://example.com:22/", "https://localhost/",
		"https://metadata.google.internal/", "https://[fe80::1%25eth0]/", "https://example.com/#x",
		"javascript:alert(1)", "https:///", "https://a.b.c.d.e.f/", "HTTPS://EXAMPLE.COM./",
		"https://[2002:a00:1::1]:8443/", "https://[::127.0.0.1]/", "https://%31%32%37.0.0.1/",
	} {
		f.Add(seed)
	}
	g, err := New(testConfig(hashResolver{}, func(c *Config) { c.AllowHTTP = true }))
	if err != nil {
		f.Fatalf("New: %v", err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := g.CheckURL(context.Background(), raw)
		if err != nil {
			var pe *PolicyError
			if !errors.As(err, &pe) || !slices.Contains(knownRules, pe.Rule) {
				t.Fatalf("CheckURL(%q) = %v, want a *PolicyError with a known rule", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil {
			t.Fatalf("accepted %q, which does not parse: %v", raw, perr)
		}
		if u.Scheme != "https" && u.Scheme != "http" {
			t.Fatalf("accepted scheme %q in %q", u.Scheme, raw)
		}
		if u.User != nil {
			t.Fatalf("accepted userinfo in %q", raw)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		if n, _ := strconv.Atoi(port); n != 443 && n != 8443 && n != 80 {
			t.Fatalf("accepted port %q in %q", port, raw)
		}
		addrs, lerr := hashResolver{}.LookupNetIP(context.Background(), "ip", u.Hostname())
		if a, aerr := netip.ParseAddr(u.Hostname()); aerr == nil {
			addrs, lerr = []netip.Addr{a}, nil
		}
		if lerr != nil || len(addrs) == 0 {
			t.Fatalf("accepted %q whose host has no addresses", raw)
		}
		for _, a := range addrs {
			if !isPublic(a) {
				t.Fatalf("accepted %q, which reaches %s", raw, a)
			}
		}
	})
}

func FuzzCheckAddr(f *testing.F) {
	for _, seed := range []string{
		publicV4, publicV6, "127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "2002:a00:1::1",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2", "fd00:ec2::254", "::7f00:1", "ff02::1", "fec0::1",
	} {
		b := netip.MustParseAddr(seed).As16()
		f.Add(b[:])
	}
	g, err := New(testConfig(newFakeResolver(), nil))
	if err != nil {
		f.Fatalf("New: %v", err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, ok := netip.AddrFromSlice(raw)
		if !ok {
			return
		}
		err := g.CheckAddr(a)
		if err == nil && !isPublic(a) {
			t.Fatalf("CheckAddr accepted %s", a)
		}
		if err != nil && !errors.Is(err, ErrBlockedDestination) {
			t.Fatalf("CheckAddr(%s) = %v, not a blocked destination", a, err)
		}
		if ctrl := g.Control("tcp", netip.AddrPortFrom(a, 443).String(), nil); (ctrl == nil) != (err == nil) {
			t.Fatalf("Control and CheckAddr disagree on %s: %v vs %v", a, ctrl, err)
		}
	})
}
