package main

import (
	"io"
	"strings"
	"testing"
)

// TestProxySettings: the proxy settings reach the egress configuration of every command that
// builds the guard, bad values are refused naming the flag, and a proxy password appears in no
// help text or error.
func TestProxySettings(t *testing.T) {
	withoutSettingsEnv(t)
	t.Setenv("HOOKSTREAM_EGRESS_PROXY", "http://egress:s3cr3t-proxy@proxy.internal:3128")
	t.Setenv("HOOKSTREAM_EGRESS_PROXIES", "eu=http://eu.proxy.internal:3128,us=http://us:s3cr3t-us@10.0.0.9:8080")
	for _, cmd := range []string{"sender", "admin", "dev"} {
		status, stdout, stderr := cli(t, cmd, "-h")
		if status != 0 || !strings.Contains(stdout, "-egress-proxy ") || !strings.Contains(stdout, "-egress-proxies") {
			t.Fatalf("%s -h: status %d, lists no proxy flags:\n%s%s", cmd, status, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, "s3cr3t") {
			t.Fatalf("%s -h shows a proxy password:\n%s", cmd, stdout)
		}
	}
	c := newCommandFlags("sender", "", egressSettings, nil)
	s, err := c.parse(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.egressConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Proxy == nil || cfg.Proxy.Host != "proxy.internal:3128" || len(cfg.Proxies) != 2 || cfg.Proxies["us"].Host != "10.0.0.9:8080" {
		t.Fatalf("egress config proxies %v %v", cfg.Proxy, cfg.Proxies)
	}
	if p, _ := cfg.Proxies["us"].User.Password(); p != "s3cr3t-us" {
		t.Fatal("the proxy credentials did not reach the configuration")
	}

	for _, tt := range []struct {
		flag, value, want string
	}{
		{"egress-proxies", "EU=http://eu.proxy:3128", "HOOKSTREAM_EGRESS_PROXIES"},
		{"egress-proxies", "eu=http://a:3128,eu=http://b:3128", "given twice"},
		{"egress-proxies", "eu=http://u:s3cr3t@%zz:3128", "proxy eu"},
		{"egress-proxies", "eu=https://u:s3cr3t@proxy:3128", "http:// URL"},
		{"egress-proxy", "http://u:s3cr3t@proxy.internal", "host and a port"},
		{"egress-proxy", "u:s3cr3t@proxy.internal:3128", "HOOKSTREAM_EGRESS_PROXY"},
	} {
		c := newCommandFlags("sender", "", egressSettings, nil)
		s, err := c.parse([]string{"--" + tt.flag, tt.value}, io.Discard)
		if err != nil {
			t.Fatalf("--%s %s: parse: %v", tt.flag, tt.value, err)
		}
		_, err = s.egressConfig()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("--%s %s: %v, want an error naming %q", tt.flag, tt.value, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("--%s: the error shows the password: %v", tt.flag, err)
		}
	}
}
