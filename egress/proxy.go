package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Forward proxies (design.md section 9). A deployment that must show receivers fixed egress addresses
// sends every connection through an HTTP proxy by CONNECT. The proxy must not become a way
// around the guard: the destination is resolved and checked here exactly as for a direct
// connection, and the proxy is asked for a tunnel to the checked IP address, never to the host
// name, so it has nothing to resolve and a DNS answer that changed cannot steer it to an
// internal address. TLS still runs end to end, verified against the URL's host name. The
// proxy's own address is exempt from the address rules because the operator configured it
// (it is usually private); that exemption covers the proxy and nothing else.

// proxyNamePattern is what an endpoint may name in egress_proxy.
var proxyNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidProxyName reports whether name can name a proxy in Config.Proxies.
func ValidProxyName(name string) bool { return proxyNamePattern.MatchString(name) }

// checkProxyURL is the form of a proxy setting: http://[user:password@]host:port, nothing
// more. Its errors never quote the URL, which may hold a password.
func checkProxyURL(u *url.URL) error {
	switch {
	case u == nil:
		return errors.New("is empty")
	case u.Scheme != "http":
		return errors.New("must be an http:// URL (the tunnel carries TLS to the receiver; TLS to the proxy is not supported)")
	case u.Hostname() == "" || u.Port() == "":
		return errors.New("must name a host and a port")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return errors.New("must have no path, query or fragment")
	}
	if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
		return errors.New("port is not in 1-65535")
	}
	return nil
}

// ProxyDisplay is a proxy URL fit for logs: its password, if any, left out.
func ProxyDisplay(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	return c.String()
}

// ProxyError is a forward proxy's refusal to open a tunnel: its answer to CONNECT was not 2xx.
type ProxyError struct {
	Proxy  string // the proxy, as ProxyDisplay shows it
	Target string // the checked address asked for
	Status int    // the proxy's HTTP status
}

func (e *ProxyError) Error() string {
	return fmt.Sprintf("egress: proxy %s refused a tunnel to %s: HTTP %d", e.Proxy, e.Target, e.Status)
}

// Timeout reports a proxy's 504: the destination did not answer it in time.
func (e *ProxyError) Timeout() bool { return e.Status == http.StatusGatewayTimeout }

// ClientOptions choose how a client made by NewClient reaches receivers.
type ClientOptions struct {
	// Proxy names one of Config.Proxies; empty is the default route (Config.Proxy, or a
	// direct connection when there is none).
	Proxy string
	// Certificate, when set, is offered whenever a receiver asks for a client certificate
	// (mTLS). A client with a certificate has a connection pool of its own, so no other
	// endpoint's requests travel over a connection authenticated with it.
	Certificate *tls.Certificate
}

// HasProxy reports whether name is one of the configured named proxies.
func (g *Guard) HasProxy(name string) bool {
	_, ok := g.cfg.Proxies[name]
	return ok
}

// ProxyNames lists the configured named proxies, sorted.
func (g *Guard) ProxyNames() []string {
	names := make([]string, 0, len(g.cfg.Proxies))
	for n := range g.cfg.Proxies {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// route returns the proxy of o (nil: direct).
func (g *Guard) route(o ClientOptions) (*url.URL, error) {
	if o.Proxy == "" {
		return g.cfg.Proxy, nil
	}
	p, ok := g.cfg.Proxies[o.Proxy]
	if !ok {
		return nil, fmt.Errorf("egress: no proxy named %q is configured", o.Proxy)
	}
	return p, nil
}

// dialVia is DialContext through proxy: the same port and address checks, then a CONNECT
// tunnel to each checked address in turn until one opens.
func (g *Guard) dialVia(ctx context.Context, proxy *url.URL, network, address string) (net.Conn, error) {
	return g.dialChecked(ctx, network, address, " through proxy "+ProxyDisplay(proxy),
		func(ctx context.Context, target netip.AddrPort) (net.Conn, error) { return tunnel(ctx, proxy, target) })
}

// tunnel connects to proxy and asks it for a tunnel to target (an IP address and port).
func tunnel(ctx context.Context, proxy *url.URL, target netip.AddrPort) (net.Conn, error) {
	dialer := &net.Dialer{KeepAlive: tcpKeepAlive}
	conn, err := dialer.DialContext(ctx, "tcp", proxy.Host)
	if err != nil {
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	req := &http.Request{
		Method: http.MethodConnect,
		URL:    &url.URL{Opaque: target.String()},
		Host:   target.String(),
		Header: http.Header{},
	}
	if u := proxy.User; u != nil {
		password, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+password)))
	}
	fail := func(err error) (net.Conn, error) {
		_ = conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if err := req.Write(conn); err != nil {
		return fail(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fail(fmt.Errorf("reading the proxy's answer to CONNECT: %w", err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_ = resp.Body.Close()
		return fail(&ProxyError{Proxy: ProxyDisplay(proxy), Target: target.String(), Status: resp.StatusCode})
	}
	_ = conn.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		// Bytes the proxy sent after its answer belong to the tunnel.
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

// bufferedConn reads what the CONNECT reader had buffered before the connection itself.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
