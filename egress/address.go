package egress

import (
	"net/netip"
)

// metadataAddrs are cloud instance-metadata endpoints. Most also fall in a blocked range, but
// listing them makes the refusal say "metadata" and keeps them refused inside AllowCIDRs: an
// operator allowing 169.254.0.0/16 or 100.64.0.0/10 for a private network never means to expose
// instance credentials (R26).
var metadataAddrs = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"): "instance metadata service (AWS, GCP, Azure, OCI, ...)",
	netip.MustParseAddr("169.254.170.2"):   "AWS ECS task metadata service",
	netip.MustParseAddr("169.254.170.23"):  "AWS EKS pod identity agent",
	netip.MustParseAddr("fd00:ec2::254"):   "AWS instance metadata service (IPv6)",
	netip.MustParseAddr("fd00:ec2::23"):    "AWS EKS pod identity agent (IPv6)",
	netip.MustParseAddr("100.100.100.200"): "Alibaba Cloud metadata service",
	// A public address, so nothing else would refuse it; reachable from every Azure VM.
	netip.MustParseAddr("168.63.129.16"): "Azure WireServer",
}

// Prefixes whose addresses carry an IPv4 address that the packet ultimately reaches.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")          // deprecated, RFC 4291 2.5.5.1
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052
	sixToFour      = netip.MustParsePrefix("2002::/16")      // RFC 3056
	teredo         = netip.MustParsePrefix("2001::/32")      // RFC 4380
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215; embedding not decodable
)

// embedded is an IPv4 address found inside an IPv6 one, and the name of the mechanism.
type embedded struct {
	form string
	addr netip.Addr
}

// embeddedIPv4 returns the IPv4 addresses an IPv6 address leads to through a transition
// mechanism. The ssrf library refuses these ranges wholesale, which is right by default, but an
// operator who allows, say, 64:ff9b::/96 for DNS64 would otherwise also allow 64:ff9b::7f00:1,
// which a NAT64 gateway turns into 127.0.0.1.
func embeddedIPv4(a netip.Addr) []embedded {
	if !a.Is6() {
		return nil
	}
	b := a.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	switch {
	case ipv4Compatible.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return []embedded{{"IPv4-compatible", v4(12)}}
	case nat64WellKnown.Contains(a):
		return []embedded{{"NAT64", v4(12)}}
	case sixToFour.Contains(a):
		return []embedded{{"6to4", v4(2)}}
	case teredo.Contains(a):
		// The client address is stored with every bit inverted (RFC 4380 section 4).
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []embedded{{"Teredo server", v4(4)}, {"Teredo client", client}}
	}
	return nil
}

// namedRanges explain refusals that the netip predicates do not name. Only used for messages.
var namedRanges = []struct {
	prefix netip.Prefix
	name   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `in "this network" 0.0.0.0/8`},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT space"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved for IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved for benchmarking"},
	{netip.MustParsePrefix("255.255.255.255/32"), "the broadcast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved for documentation"},
	{netip.MustParsePrefix("3fff::/20"), "reserved for documentation"},
	{nat64Local, "a local-use NAT64 address"},
	{nat64WellKnown, "a NAT64 address"},
	{sixToFour, "a 6to4 address"},
	{teredo, "a Teredo address"},
	{netip.MustParsePrefix("2001::/23"), "reserved for IETF protocol assignments"},
}

// describe names the kind of a refused address for the Detail of a PolicyError.
func describe(a netip.Addr) string {
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, r := range namedRanges {
		if r.prefix.Contains(a) {
			return r.name
		}
	}
	if a.Is6() {
		return "not a public IPv6 address"
	}
	return "in a special-purpose range"
}
