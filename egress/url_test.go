package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// policyResolver answers for the names used by the URL policy tables.
func policyResolver() *fakeResolver {
	r := newFakeResolver()
	r.set("example.com", publicV4)
	r.set("v6.example.com", publicV6)
	r.set("dual.example.com", publicV4, publicV6)
	r.set("mapped.example.com", "::ffff:"+publicV4) // how net.Resolver often returns IPv4
	r.set("mixed.example.com", publicV4, "10.0.0.1")
	r.set("mixed-last.example.com", publicV4, publicV6, "fd00::1")
	r.set("private.example.com", "192.168.1.1")
	r.set("mapped-loopback.example.com", "::ffff:127.0.0.1")
	r.set("imds.example.com", "169.254.169.254")
	r.set("nat64.example.com", "64:ff9b::a9fe:a9fe")
	r.set("receiver.test", "127.0.0.1")
	r.set("empty.example.com")
	return r
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	res := policyResolver()
	guards := map[string]*Guard{
		"https": mustGuard(t, testConfig(res, nil)),
		"http":  mustGuard(t, testConfig(res, func(c *Config) { c.AllowHTTP = true })),
		"dev": mustGuard(t, testConfig(res, func(c *Config) {
			c.AllowHTTP = true
			c.AllowCIDRs = []netip.Prefix{loopbackV4}
		})),
	}
	tests := []struct {
		guard string
		url   string
		rule  string // empty: accepted
	}{
		// Accepted.
		{"https", "https://example.com", ""},
		{"https", "https://example.com/hooks?x=1", ""},
		{"https", "https://example.com:443/", ""},
		{"https", "https://example.com:8443/", ""},
		{"https", "https://EXAMPLE.com/", ""},
		{"https", "https://example.com./", ""},
		{"https", "https://v6.example.com/", ""},
		{"https", "https://dual.example.com/", ""},
		{"https", "https://mapped.example.com/", ""},
		{"https", "https://" + publicV4 + "/", ""},
		{"https", "https://[" + publicV6 + "]/", ""},
		{"https", "https://[::ffff:" + publicV4 + "]/", ""},
		{"http", "http://example.com/", ""},

		// Scheme (R26: HTTPS only unless configured).
		{"https", "http://example.com/", RuleScheme},
		{"https", "ftp://example.com/", RuleScheme},
		{"https", "ws://example.com/", RuleScheme},
		{"https", "file:///etc/passwd", RuleScheme},
		{"https", "gopher://example.com:443/", RuleScheme},

		// Not a usable URL.
		{"https", "", RuleURL},
		{"https", "example.com", RuleURL},
		{"https", "/hooks", RuleURL},
		{"https", "javascript:alert(1)", RuleURL},
		{"https", "https://example.com/%zz", RuleURL},
		{"https", "https://example.com/#section", RuleURL},
		{"https", "https://example.com/" + strings.Repeat("a", maxURLLength), RuleURL},
		{"https", "https://exa mple.com/", RuleURL},
		{"https", "https://ex%61mple.com/", RuleURL},
		{"https", "https://example.com:443:443/", RuleURL},

		// Ports.
		{"https", "https://example.com:22/", RulePort},
		{"https", "https://example.com:6379/", RulePort},
		{"https", "https://example.com:80/", RulePort},
		{"https", "https://example.com:0/", RulePort},
		{"https", "https://example.com:65536/", RulePort},
		{"http", "http://example.com:8080/", RulePort},

		// Userinfo.
		{"https", "https://user:pass@example.com/", RuleUserinfo},
		{"https", "https://user@example.com/", RuleUserinfo},
		{"https", "https://@example.com/", RuleUserinfo},

		// Host names.
		{"https", "https:///hooks", RuleHost},
		{"https", "https://localhost/", RuleHost},
		{"https", "https://LOCALHOST./", RuleHost},
		{"https", "https://api.localhost/", RuleHost},
		{"https", "https://exämple.com/", RuleHost},
		{"https", "https://example..com/", RuleHost},
		{"https", "https://" + strings.Repeat("a", 64) + ".com/", RuleHost},
		{"https", "https://1.2.3.4%25eth0/", RuleHost},

		// Non-standard IPv4 spellings: never resolved, never a path to loopback.
		{"http", "http://2130706433/", RuleHost},
		{"http", "http://0x7f.0.0.1/", RuleHost},
		{"http", "http://0x7f000001/", RuleHost},
		{"http", "http://0177.0.0.1/", RuleHost},
		{"http", "http://017700000001/", RuleHost},
		{"http", "http://127.1/", RuleHost},
		{"http", "http://127.0.0.1./", RuleHost},
		{"http", "http://example.0x10/", RuleHost},
		{"dev", "http://2130706433/", RuleHost},

		// Cloud metadata names and addresses.
		{"https", "https://metadata.google.internal/", RuleMetadata},
		{"https", "https://METADATA.GOOGLE.INTERNAL./computeMetadata/v1/", RuleMetadata},
		{"http", "http://metadata/", RuleMetadata},
		{"http", "http://instance-data/latest/", RuleMetadata},
		{"https", "https://metadata.goog/", RuleMetadata},
		{"https", "https://169.254.169.254/", RuleMetadata},
		{"https", "https://[fd00:ec2::254]/", RuleMetadata},
		{"https", "https://168.63.129.16/", RuleMetadata},
		{"https", "https://100.100.100.200/", RuleMetadata},
		{"https", "https://[::ffff:169.254.169.254]/", RuleMetadata},
		{"https", "https://imds.example.com/", RuleMetadata},
		{"https", "https://nat64.example.com/", RuleMetadata},
		{"dev", "http://169.254.169.254/", RuleMetadata},

		// IP literals that are not public.
		{"https", "https://127.0.0.1/", RuleBlockedAddress},
		{"https", "https://10.0.0.1/", RuleBlockedAddress},
		{"https", "https://172.16.0.1/", RuleBlockedAddress},
		{"https", "https://192.168.1.1/", RuleBlockedAddress},
		{"https", "https://169.254.1.1/", RuleBlockedAddress},
		{"https", "https://100.64.0.1/", RuleBlockedAddress},
		{"https", "https://0.0.0.0/", RuleBlockedAddress},
		{"https", "https://0.1.2.3/", RuleBlockedAddress},
		{"https", "https://255.255.255.255/", RuleBlockedAddress},
		{"https", "https://224.0.0.1/", RuleBlockedAddress},
		{"https", "https://239.255.255.250/", RuleBlockedAddress},
		{"https", "https://198.18.0.1/", RuleBlockedAddress},
		{"https", "https://192.0.2.1/", RuleBlockedAddress},
		{"https", "https://198.51.100.1/", RuleBlockedAddress},
		{"https", "https://203.0.113.1/", RuleBlockedAddress},
		{"https", "https://240.0.0.1/", RuleBlockedAddress},
		{"https", "https://[::1]/", RuleBlockedAddress},
		{"https", "https://[::]/", RuleBlockedAddress},
		{"https", "https://[fe80::1]/", RuleBlockedAddress},
		{"https", "https://[fe80::1%25eth0]/", RuleBlockedAddress},
		{"https", "https://[fc00::1]/", RuleBlockedAddress},
		{"https", "https://[fd12:3456::1]/", RuleBlockedAddress},
		{"https", "https://[fec0::1]/", RuleBlockedAddress},
		{"https", "https://[ff02::1]/", RuleBlockedAddress},
		{"https", "https://[2001:db8::1]/", RuleBlockedAddress},
		{"https", "https://[::ffff:127.0.0.1]/", RuleBlockedAddress},
		{"https", "https://[::ffff:10.0.0.1]/", RuleBlockedAddress},
		{"https", "https://[::ffff:7f00:1]/", RuleBlockedAddress},
		{"https", "https://[64:ff9b::a00:1]/", RuleBlockedAddress},
		{"https", "https://[64:ff9b::7f00:1]/", RuleBlockedAddress},
		{"https", "https://[64:ff9b:1::a00:1]/", RuleBlockedAddress},
		{"https", "https://[2002:a00:1::1]/", RuleBlockedAddress},
		{"https", "https://[2002:7f00:1::]/", RuleBlockedAddress},
		{"https", "https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", RuleBlockedAddress}, // Teredo, client 10.0.0.1
		{"https", "https://[::127.0.0.1]/", RuleBlockedAddress},
		{"https", "https://[::10.0.0.1]/", RuleBlockedAddress},

		// Every resolved address is checked.
		{"https", "https://mixed.example.com/", RuleBlockedAddress},
		{"https", "https://mixed-last.example.com/", RuleBlockedAddress},
		{"https", "https://private.example.com/", RuleBlockedAddress},
		{"https", "https://mapped-loopback.example.com/", RuleBlockedAddress},
		{"https", "https://receiver.test/", RuleBlockedAddress},
		{"https", "https://nowhere.example.com/", RuleResolve},
		{"https", "https://empty.example.com/", RuleResolve},

		// AllowCIDRs 127.0.0.0/8 (hookstream dev) opens loopback IPv4 and nothing else.
		{"dev", "http://127.0.0.1/", ""},
		{"dev", "http://127.0.0.1:8443/", ""},
		{"dev", "http://127.1.2.3/", ""},
		{"dev", "http://[::ffff:127.0.0.1]/", ""},
		{"dev", "http://localhost/", ""},
		{"dev", "http://receiver.test/", ""},
		{"dev", "http://127.0.0.1:22/", RulePort},
		{"dev", "http://[::1]/", RuleBlockedAddress},
		{"dev", "http://10.0.0.1/", RuleBlockedAddress},
		{"dev", "http://[64:ff9b::7f00:1]/", RuleBlockedAddress},
		{"dev", "http://[::127.0.0.1]/", RuleBlockedAddress},
	}
	for _, tt := range tests {
		t.Run(tt.guard+" "+tt.url, func(t *testing.T) {
			err := guards[tt.guard].CheckURL(context.Background(), tt.url)
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("CheckURL(%q): %v", tt.url, err)
				}
				return
			}
			var pe *PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("CheckURL(%q) = %v, want a *PolicyError with rule %q", tt.url, err, tt.rule)
			}
			if pe.Rule != tt.rule {
				t.Fatalf("CheckURL(%q) rule = %q (%v), want %q", tt.url, pe.Rule, err, tt.rule)
			}
			if blocked := errors.Is(err, ErrBlockedDestination); blocked != (tt.rule != RuleResolve) {
				t.Fatalf("errors.Is(%v, ErrBlockedDestination) = %v", err, blocked)
			}
		})
	}
}

func TestCheckURLNeverResolvesRefusedNames(t *testing.T) {
	t.Parallel()
	res := policyResolver()
	g := mustGuard(t, testConfig(res, func(c *Config) { c.AllowHTTP = true }))
	for _, u := range []string{
		"http://localhost/", "http://metadata.google.internal/", "http://2130706433/",
		"http://0x7f.0.0.1/", "ftp://example.com/", "http://user@example.com/", "http://example.com:22/",
	} {
		if err := g.CheckURL(context.Background(), u); err == nil {
			t.Errorf("CheckURL(%q) accepted", u)
		}
	}
	if n := res.lookupCount(); n != 0 {
		t.Fatalf("refused URLs caused %d DNS lookups, want 0", n)
	}
}

func TestCheckURLResolveErrorKeepsCause(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, testConfig(policyResolver(), nil))
	err := g.CheckURL(context.Background(), "https://nowhere.example.com/")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("CheckURL error = %v, want one wrapping a not-found *net.DNSError", err)
	}
	if errors.Is(err, ErrBlockedDestination) {
		t.Fatal("a DNS failure is reported as a blocked destination")
	}
}

func TestCheckURLDetailNamesTheReason(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, testConfig(policyResolver(), nil))
	tests := map[string]string{
		"https://mixed.example.com/":  "mixed.example.com has a refused address: 10.0.0.1 is private",
		"https://[64:ff9b::a00:1]/":   "NAT64 form of 10.0.0.1",
		"https://[2002:a00:1::1]/":    "6to4 form of 10.0.0.1",
		"https://example.com:22/":     "port 22 is not allowed (allowed: 443, 8443)",
		"https://100.64.0.1/":         "carrier-grade NAT",
		"https://169.254.169.254/":    "instance metadata service",
		"https://localhost/":          "localhost names this machine",
		"https://[::ffff:10.0.0.1]/":  "10.0.0.1 is private",
		"https://255.255.255.255/":    "broadcast",
		"https://198.18.0.1/":         "benchmarking",
		"https://[fec0::1]/":          "site-local",
		"https://[fe80::1%25eth0]/":   "zoned",
		"https://[2001:db8::1]/":      "documentation",
		"https://[::127.0.0.1]/":      "IPv4-compatible form of 127.0.0.1",
		"https://example.com/#x":      "fragment",
		"https://user:secret@x.test/": "credentials",
	}
	for u, want := range tests {
		err := g.CheckURL(context.Background(), u)
		var pe *PolicyError
		if !errors.As(err, &pe) || !strings.Contains(pe.Detail, want) {
			t.Errorf("CheckURL(%q) = %v, want detail containing %q", u, err, want)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("CheckURL(%q) error repeats the password: %v", u, err)
		}
	}
}

func TestCheckURLParseErrorHidesCredentials(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, testConfig(policyResolver(), nil))
	err := g.CheckURL(context.Background(), "https://user:hunter2@exa mple.com/")
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.Rule != RuleURL {
		t.Fatalf("CheckURL = %v, want rule %q", err, RuleURL)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error repeats the password: %v", err)
	}
}

func TestZeroGuardRefuses(t *testing.T) {
	t.Parallel()
	var g Guard
	if err := g.CheckURL(context.Background(), "https://"+publicV4+"/"); !errors.Is(err, ErrBlockedDestination) {
		t.Errorf("CheckURL = %v, want ErrBlockedDestination", err)
	}
	if _, err := g.DialContext(context.Background(), "tcp", publicV4+":443"); !errors.Is(err, ErrBlockedDestination) {
		t.Errorf("DialContext = %v, want ErrBlockedDestination", err)
	}
	if err := g.Control("tcp4", publicV4+":443", nil); !errors.Is(err, ErrBlockedDestination) {
		t.Errorf("Control = %v, want ErrBlockedDestination", err)
	}
}
