package egress

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"

	"code.dny.dev/ssrf"
)

// registry holds the IANA special-purpose ranges. Only its address check is used: ports,
// networks and allowed ranges are handled by Guard so they apply the same way on every path.
var registry = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// Guard enforces a Config and is safe for concurrent use. Build it with New; the zero Guard
// allows no port and so refuses every destination.
type Guard struct {
	cfg   Config
	ports []int
	// portSet holds ports as a bit set: an allow-list such as 1024-65535 is checked on every
	// request, and a linear scan of it cost a tenth of the sender's CPU at volume.
	portSet *[65536 / 64]uint64
	allow   []netip.Prefix
}

// New returns a Guard for a valid configuration.
func New(cfg Config) (*Guard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	allow := make([]netip.Prefix, 0, len(cfg.AllowCIDRs))
	for _, p := range cfg.AllowCIDRs {
		allow = append(allow, p.Masked())
	}
	g := &Guard{cfg: cfg, ports: cfg.ports(), portSet: new([65536 / 64]uint64), allow: allow}
	for _, p := range g.ports {
		g.portSet[p/64] |= 1 << (p % 64)
	}
	g.cfg.AllowedPorts = slices.Clone(g.ports)
	g.cfg.AllowCIDRs = slices.Clone(allow)
	g.cfg.Proxies = maps.Clone(cfg.Proxies)
	return g, nil
}

// Config returns the policy in force, with the effective port list filled in, so a command can
// log what it allows (the dev mode announces that loopback HTTP is allowed).
func (g *Guard) Config() Config {
	cfg := g.cfg
	cfg.AllowedPorts = slices.Clone(g.cfg.AllowedPorts)
	cfg.AllowCIDRs = slices.Clone(g.cfg.AllowCIDRs)
	return cfg
}

// CheckAddr reports whether the guard would connect to a, as a *PolicyError if not.
func (g *Guard) CheckAddr(a netip.Addr) error {
	if pe := g.checkAddr(a); pe != nil {
		return pe
	}
	return nil
}

// checkAddr is the address rule of R26. Order matters: metadata and embedded IPv4 addresses are
// judged before AllowCIDRs so an allowed range cannot reopen them.
func (g *Guard) checkAddr(a netip.Addr) *PolicyError {
	if !a.IsValid() {
		return refuse(RuleBlockedAddress, "invalid address")
	}
	if a.Zone() != "" {
		// netip prefixes never contain zoned addresses, and a scoped address is never public.
		return refuse(RuleBlockedAddress, "%s is a scoped (zoned) IPv6 address", a)
	}
	a = a.Unmap() // ::ffff:a.b.c.d is a.b.c.d on the wire
	if name, ok := metadataAddrs[a]; ok {
		return refuse(RuleMetadata, "%s is the %s", a, name)
	}
	for _, e := range embeddedIPv4(a) {
		if pe := g.checkAddr(e.addr); pe != nil {
			return refuse(pe.Rule, "%s is the %s form of %s: %s", a, e.form, e.addr, pe.Detail)
		}
	}
	if g.allowed(a) {
		return nil
	}
	if err := registry.SafeAddr(a); err != nil {
		return refuse(RuleBlockedAddress, "%s is %s", a, describe(a))
	}
	return nil
}

func (g *Guard) allowed(a netip.Addr) bool {
	for _, p := range g.allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (g *Guard) portAllowed(port int) bool {
	if g.portSet == nil || port < 0 || port > 65535 {
		return false
	}
	return g.portSet[port/64]&(1<<(port%64)) != 0
}

// destinations returns the checked addresses for host (an IP literal or a name), refusing the
// host if any address it resolves to is not allowed (R26: every resolved address is checked).
func (g *Guard) destinations(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if pe := g.checkAddr(a); pe != nil {
			return nil, pe
		}
		return []netip.Addr{a.Unmap()}, nil
	}
	name, pe := checkHostname(host)
	if pe != nil {
		return nil, pe
	}
	if isLocalhost(name) {
		return g.localhost(host)
	}
	addrs, err := g.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, &PolicyError{Rule: RuleResolve, Detail: fmt.Sprintf("cannot resolve %s", host), Err: err}
	}
	if len(addrs) == 0 {
		// Carry a DNS error so callers classify an empty answer like any other DNS failure.
		noAddrs := &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		return nil, &PolicyError{Rule: RuleResolve, Detail: fmt.Sprintf("cannot resolve %s", host), Err: noAddrs}
	}
	checked := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if pe := g.checkAddr(a); pe != nil {
			return nil, refuse(pe.Rule, "%s has a refused address: %s", host, pe.Detail)
		}
		checked = append(checked, a.Unmap())
	}
	return checked, nil
}

// localhost answers for "localhost" names without asking DNS, as RFC 6761 section 6.3 asks, so
// no resolver can point them elsewhere. They are refused unless 127.0.0.1 is allowed, which is
// the case in `hookstream dev`.
func (g *Guard) localhost(host string) ([]netip.Addr, error) {
	loopback := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	if pe := g.checkAddr(loopback); pe != nil {
		return nil, refuse(RuleHost, "%s names this machine (%s)", host, pe.Detail)
	}
	return []netip.Addr{loopback}, nil
}
