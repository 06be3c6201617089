package egress

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"time"

	"github.com/hookstream/hookstream/internal/durations"
)

// Defaults from design.md section 7 (R28).
const (
	DefaultConnectTimeout      = 5 * time.Second
	DefaultTLSHandshakeTimeout = 5 * time.Second
	DefaultRequestTimeout      = 15 * time.Second
	DefaultMaxResponseBytes    = 64 << 10
)

// Resolver looks up the addresses of a host name. *net.Resolver satisfies it; tests supply fakes
// that change their answers to simulate DNS rebinding.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is the egress policy. Start from DefaultConfig and adjust fields; New validates.
type Config struct {
	// AllowHTTP permits plain-HTTP URLs. Off in production; `hookstream dev` turns it on.
	AllowHTTP bool
	// AllowedPorts lists the destination ports. Empty means 443 and 8443, plus 80 when
	// AllowHTTP is set; a non-empty list is used exactly as given.
	AllowedPorts []int
	// AllowCIDRs are ranges permitted although not public, for tests and private deployments
	// (127.0.0.0/8 for `hookstream dev`). Cloud metadata addresses stay refused inside them, and
	// an allowed NAT64, 6to4 or Teredo range still has its embedded IPv4 address checked.
	AllowCIDRs []netip.Prefix
	// ConnectTimeout bounds resolving a host and connecting to it.
	ConnectTimeout time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake.
	TLSHandshakeTimeout time.Duration
	// RequestTimeout bounds a whole request made with Guard.Client, body included.
	RequestTimeout time.Duration
	// MaxResponseBytes is how much of a response body callers read; the guard only carries it.
	MaxResponseBytes int64
	// Resolver answers DNS questions at registration and at every connection.
	Resolver Resolver
	// RootCAs replaces the system roots for TLS verification when set (tests).
	RootCAs *x509.CertPool
	// Proxy, when set, is the forward proxy every connection goes through by HTTP CONNECT
	// (http://[user:password@]host:port), so receivers see the proxy's fixed addresses. The
	// destination is still checked here first and the proxy is asked for the checked address
	// (proxy.go); the proxy's own address is allowed because it is configured here.
	Proxy *url.URL
	// Proxies are further forward proxies by name, which an endpoint may choose instead of
	// the default route (egress_proxy). Same form and rules as Proxy.
	Proxies map[string]*url.URL
}

// DefaultConfig returns the production policy: HTTPS to ports 443 and 8443 of public addresses
// found through the system resolver.
func DefaultConfig() Config {
	return Config{
		ConnectTimeout:      DefaultConnectTimeout,
		TLSHandshakeTimeout: DefaultTLSHandshakeTimeout,
		RequestTimeout:      DefaultRequestTimeout,
		MaxResponseBytes:    DefaultMaxResponseBytes,
		Resolver:            net.DefaultResolver,
	}
}

// Validate reports every problem with the configuration at once.
func (c Config) Validate() error {
	var errs []error
	for _, p := range c.AllowedPorts {
		if p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("allowed port %d is not in 1-65535", p))
		}
	}
	for _, p := range c.AllowCIDRs {
		switch {
		case !p.IsValid():
			errs = append(errs, fmt.Errorf("allowed CIDR %s is not valid", p))
		case p.Addr().Is4In6():
			// Addresses are judged in their IPv4 form, so a mapped prefix would never match.
			errs = append(errs, fmt.Errorf("allowed CIDR %s is IPv4-mapped; give the IPv4 prefix", p))
		}
	}
	errs = append(errs, durations.NotPositive(map[string]time.Duration{
		"connect timeout":       c.ConnectTimeout,
		"TLS handshake timeout": c.TLSHandshakeTimeout,
		"request timeout":       c.RequestTimeout,
	})...)
	if c.MaxResponseBytes <= 0 {
		errs = append(errs, fmt.Errorf("max response bytes %d must be positive", c.MaxResponseBytes))
	}
	if c.Proxy != nil {
		if err := checkProxyURL(c.Proxy); err != nil {
			errs = append(errs, fmt.Errorf("proxy %w", err))
		}
	}
	for name, u := range c.Proxies {
		if !ValidProxyName(name) {
			errs = append(errs, fmt.Errorf("proxy name %q must be lowercase letters, digits, _ and -, at most 63", truncate(name)))
		}
		if err := checkProxyURL(u); err != nil {
			errs = append(errs, fmt.Errorf("proxy %s %w", truncate(name), err))
		}
	}
	if c.Resolver == nil {
		errs = append(errs, errors.New("resolver is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("egress: config: %w", err)
	}
	return nil
}

// ports returns the effective port allow-list.
func (c Config) ports() []int {
	if len(c.AllowedPorts) > 0 {
		return slices.Clone(c.AllowedPorts)
	}
	if c.AllowHTTP {
		return []int{443, 8443, 80}
	}
	return []int{443, 8443}
}
