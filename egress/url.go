package egress

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// maxURLLength bounds what a partner may register; longer URLs are almost certainly abuse.
const maxURLLength = 2048

// metadataHosts are names of cloud metadata services, refused before any DNS lookup and also as
// the suffix of a longer name.
var metadataHosts = []string{
	"metadata.google.internal",
	"metadata.goog",
	"metadata",
	"instance-data",
	"instance-data.ec2.internal",
	"metadata.tencentyun.com",
}

// CheckURL applies the registration policy to a callback URL (R26): an absolute https URL (http
// only when AllowHTTP), an allowed port, no userinfo, no fragment, a well-formed host that is not
// a metadata or localhost name, and only allowed addresses behind it. Fragments are refused
// rather than stripped because they are never sent: the stored URL must be the URL requested.
// Host names must be ASCII; internationalised names are registered in their punycode form.
// Resolution is bounded by Config.ConnectTimeout.
func (g *Guard) CheckURL(ctx context.Context, rawURL string) error {
	if len(rawURL) > maxURLLength {
		return refuse(RuleURL, "URL is longer than %d bytes", maxURLLength)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// Report the parser's reason without the URL, which may hold credentials.
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		return &PolicyError{Rule: RuleURL, Detail: "not a valid URL", Err: err}
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return refuse(RuleURL, "URL has a fragment, which is never sent")
	}
	if err := g.checkTarget(u); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.ConnectTimeout)
	defer cancel()
	_, err = g.destinations(ctx, u.Hostname())
	return err
}

// checkTarget is the part of the URL policy that needs no DNS; Client applies it to every
// request so a URL that bypassed registration still cannot use another scheme or port.
func (g *Guard) checkTarget(u *url.URL) error {
	if !u.IsAbs() || u.Opaque != "" {
		return refuse(RuleURL, "not an absolute http(s) URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && g.cfg.AllowHTTP:
	case u.Scheme == "http":
		return refuse(RuleScheme, "plain http is not allowed; use https")
	default:
		return refuse(RuleScheme, "scheme %q is not allowed; use https", truncate(u.Scheme))
	}
	if u.User != nil {
		return refuse(RuleUserinfo, "credentials in the URL are not allowed")
	}
	if err := g.checkURLPort(u); err != nil {
		return err
	}
	host := u.Hostname()
	if host == "" {
		return refuse(RuleHost, "URL has no host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if pe := g.checkAddr(a); pe != nil {
			return pe
		}
		return nil
	}
	if _, pe := checkHostname(host); pe != nil {
		return pe
	}
	return nil
}

func (g *Guard) checkURLPort(u *url.URL) error {
	p := u.Port()
	if p == "" {
		if u.Scheme == "http" {
			p = "80"
		} else {
			p = "443"
		}
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return refuse(RulePort, "port %q is not a valid port", p)
	}
	if !g.portAllowed(port) {
		return refuse(RulePort, "port %d is not allowed (allowed: %s)", port, joinInts(g.ports))
	}
	return nil
}

// checkHostname checks the syntax of a DNS name and refuses metadata and numeric names before
// anything is resolved. It returns the name lower-cased and without a trailing dot.
func checkHostname(host string) (string, *PolicyError) {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if len(name) == 0 || len(name) > 253 {
		return "", refuse(RuleHost, "host name must be 1 to 253 characters")
	}
	for label := range strings.SplitSeq(name, ".") {
		if len(label) == 0 || len(label) > 63 {
			return "", refuse(RuleHost, "host %q has an empty or over-long label", truncate(host))
		}
		for _, c := range []byte(label) {
			if !isHostByte(c) {
				return "", refuse(RuleHost, "host %q may only contain ASCII letters, digits, '-', '_' and '.' (use the punycode form)", truncate(host))
			}
		}
	}
	if endsInNumber(name) {
		// Resolvers built on inet_aton read 2130706433, 0x7f.1 or 0177.0.0.1 as IPv4 addresses;
		// only the dotted-quad form is accepted, and it is parsed as an address, not a name.
		return "", refuse(RuleHost, "host %q is a non-standard IPv4 address; write it as a.b.c.d", truncate(host))
	}
	for _, m := range metadataHosts {
		if name == m || strings.HasSuffix(name, "."+m) {
			return "", refuse(RuleMetadata, "%s is a cloud metadata service name", name)
		}
	}
	return name, nil
}

func isHostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// endsInNumber follows the WHATWG URL standard: a host whose last label is decimal digits or a
// 0x hexadecimal number is an IPv4 address in some spelling, never a DNS name.
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return false
}

func isLocalhost(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

// joinInts lists ports for error messages, runs of consecutive ports as ranges ("8000-9999").
func joinInts(ns []int) string {
	ns = slices.Clone(ns)
	slices.Sort(ns)
	var s []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j > i+1 {
			s = append(s, strconv.Itoa(ns[i])+"-"+strconv.Itoa(ns[j]))
		} else {
			for k := i; k <= j; k++ {
				s = append(s, strconv.Itoa(ns[k]))
			}
		}
		i = j + 1
	}
	return strings.Join(s, ", ")
}

// truncate keeps hostile input from flooding error messages.
func truncate(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
