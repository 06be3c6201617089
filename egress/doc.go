// Package egress is hookstream's SSRF boundary: the one place that decides whether a callback URL
// may be registered and whether a connection may be opened (design.md section 9).
//
// A [Guard] applies the same policy twice (R26). [Guard.CheckURL] runs at registration: HTTPS
// only (plain HTTP where configured), an allowed port, no userinfo or fragment, no metadata or
// localhost names, and every address the host resolves to must be public. [Guard.DialContext]
// runs on every connection: it resolves again, refuses the connection if any answer is not
// allowed, and connects to a checked IP while the URL's hostname stays in the request for TLS
// verification and the Host header. A [net.Dialer] Control hook re-checks the socket address
// itself, so a DNS answer that changes after validation (DNS rebinding) cannot reach an internal
// address (R27). [Guard.Client] never follows redirects and carries the connect, TLS and total
// timeouts (R28).
//
// Address classification builds on code.dny.dev/ssrf (the IANA special-purpose registries) and
// adds what it leaves out: IPv4-mapped addresses are judged as the IPv4 address they reach, the
// IPv4 inside IPv4-compatible, NAT64, 6to4 and Teredo addresses is checked even where an operator
// allows the outer range, cloud metadata names and addresses are refused even inside allowed
// ranges, and non-standard IPv4 spellings such as 2130706433 or 0x7f.0.0.1 are refused as hosts.
//
// Refusals are [*PolicyError] values whose Rule is a stable word the admin API can show, and they
// match [ErrBlockedDestination] with errors.Is, except resolution failures (RuleResolve), which
// wrap the resolver's error instead. The package knows nothing about endpoints or Kafka.
//
// With [Config.Proxy] (or a named proxy of [Config.Proxies] chosen through [Guard.NewClient]),
// connections go through an HTTP forward proxy by CONNECT. The destination is checked first,
// exactly as for a direct connection, and the proxy is asked for the checked IP address, so it
// cannot become a way around the guard; the proxy's own address is allowed because it is
// configured. [ClientOptions] also carry an mTLS client certificate.
package egress
