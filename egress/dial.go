package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Connection pooling for a worker that talks to many receivers.
const (
	maxIdleConns        = 1024
	maxIdleConnsPerHost = 64 // the default per-endpoint max_in_flight (design.md section 7)
	idleConnTimeout     = 90 * time.Second
	tcpKeepAlive        = 30 * time.Second
	// Receivers have no reason to send large headers; the default (1 MiB) is generous.
	maxResponseHeaderBytes = 64 << 10
)

// DialContext connects to address ("host:port") only if the port is allowed and every address
// the host resolves to, now, is allowed. It then dials the checked IPs in order. The transport
// still knows the host name, so TLS verifies the certificate against it and the Host header
// carries it (R27). Resolution and connection share Config.ConnectTimeout.
//
// With Config.Proxy set, DialContext connects through the proxy (see dialVia), after the same
// checks.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if g.cfg.Proxy != nil {
		return g.dialVia(ctx, g.cfg.Proxy, network, address)
	}
	return g.dialDirect(ctx, network, address)
}

// dialDirect connects to the checked addresses itself; the dialer's Control hook checks each
// socket address once more.
func (g *Guard) dialDirect(ctx context.Context, network, address string) (net.Conn, error) {
	dialer := &net.Dialer{KeepAlive: tcpKeepAlive, Control: g.Control}
	return g.dialChecked(ctx, network, address, "", func(ctx context.Context, target netip.AddrPort) (net.Conn, error) {
		return dialer.DialContext(ctx, network, target.String())
	})
}

// checkDialAddress applies the network and port rules to a dial and splits its address.
func (g *Guard) checkDialAddress(network, address string) (host string, port uint16, err error) {
	if !isTCP(network) {
		return "", 0, refuse(RuleNetwork, "network %q is not TCP", network)
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, &PolicyError{Rule: RuleHost, Detail: fmt.Sprintf("bad dial address %q", truncate(address)), Err: err}
	}
	p, err := strconv.Atoi(portText)
	if err != nil || !g.portAllowed(p) {
		return "", 0, refuse(RulePort, "port %q is not allowed (allowed: %s)", portText, joinInts(g.ports))
	}
	return host, uint16(p), nil
}

// dialChecked applies the network and port rules to a dial, resolves and checks its host, and
// connects to each checked address in the resolver's order until one connection opens. The
// resolution and the connections share Config.ConnectTimeout; route ("" when direct) says in
// the error how the dial went.
func (g *Guard) dialChecked(ctx context.Context, network, address, route string,
	connect func(context.Context, netip.AddrPort) (net.Conn, error)) (net.Conn, error) {
	host, port, err := g.checkDialAddress(network, address)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.ConnectTimeout)
	defer cancel() // ends the connect phase only; an established connection is unaffected
	addrs, err := g.destinations(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s: %w", address, err)
	}
	var errs []error
	for _, a := range addrs {
		if (network == "tcp4" && !a.Is4()) || (network == "tcp6" && !a.Is6()) {
			continue
		}
		conn, err := connect(ctx, netip.AddrPortFrom(a, port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("egress: dial %s: no %s address among %v", address, network, addrs)
	}
	return nil, fmt.Errorf("egress: dial %s%s: %w", address, route, errors.Join(errs...))
}

// Control is a net.Dialer Control hook that refuses a socket whose destination is not allowed.
// It sees the address actually being connected to, after any resolution, so it also protects
// dialers that resolve by themselves. Guard.DialContext installs it as a second line of defence.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	if !isTCP(network) {
		return refuse(RuleNetwork, "network %q is not TCP", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &PolicyError{Rule: RuleBlockedAddress, Detail: fmt.Sprintf("cannot parse socket address %q", address), Err: err}
	}
	if !g.portAllowed(int(ap.Port())) {
		return refuse(RulePort, "port %d is not allowed (allowed: %s)", ap.Port(), joinInts(g.ports))
	}
	if pe := g.checkAddr(ap.Addr()); pe != nil {
		return pe
	}
	return nil
}

func isTCP(network string) bool {
	return network == "tcp" || network == "tcp4" || network == "tcp6"
}

// Transport returns a new transport that connects only through DialContext: no proxy of the
// transport's own (it would connect on our behalf, unchecked; Config.Proxy is used by
// DialContext, after the checks), TLS verified against the URL's host name, HTTP/2 when the
// receiver offers it, and pooled connections for many hosts. Each call has its own pool; keep
// one per process.
func (g *Guard) Transport() *http.Transport {
	tr, _ := g.transport(ClientOptions{}) // the default route always exists
	return tr
}

func (g *Guard) transport(o ClientOptions) (*http.Transport, error) {
	proxy, err := g.route(o)
	if err != nil {
		return nil, err
	}
	dial := g.dialDirect
	if proxy != nil {
		dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			return g.dialVia(ctx, proxy, network, address)
		}
	}
	// ServerName stays empty: the transport fills it with the URL's host for each connection,
	// which is what defeats a rebinding that serves another certificate.
	tlsConfig := &tls.Config{RootCAs: g.cfg.RootCAs, MinVersion: tls.VersionTLS12}
	if cert := o.Certificate; cert != nil {
		// Offered whenever asked, whatever CAs the receiver names: the partner registered this
		// certificate for this receiver, and a refusal is then the receiver's, recorded as tls.
		tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            dial,
		TLSClientConfig:        tlsConfig,
		TLSHandshakeTimeout:    g.cfg.TLSHandshakeTimeout,
		ResponseHeaderTimeout:  g.cfg.RequestTimeout,
		ForceAttemptHTTP2:      true, // a custom DialContext and TLS config turn HTTP/2 off otherwise
		MaxIdleConns:           maxIdleConns,
		MaxIdleConnsPerHost:    maxIdleConnsPerHost,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}, nil
}

// Client returns a new client over a new Transport that re-checks each request's URL (scheme,
// userinfo, port, host name) before sending, never follows redirects (the 3xx response is
// returned as is, R27) and gives up after Config.RequestTimeout, body included.
//
// The timeout is the transport's, not http.Client.Timeout: the client enforces its own timeout
// on a RoundTripper it does not know with a goroutine and a timer per request, a cost the
// sender's hot path does not need. A timed-out request fails with context.DeadlineExceeded.
func (g *Guard) Client() *http.Client {
	c, _ := g.NewClient(ClientOptions{}) // the default route always exists
	return c
}

// NewClient is Client over the route and with the client certificate of o. It fails only
// when o names a proxy that is not configured.
func (g *Guard) NewClient(o ClientOptions) (*http.Client, error) {
	tr, err := g.transport(o)
	if err != nil {
		return nil, err
	}
	// The deadline below covers the wait for the response headers too; the transport's own
	// header timer would only cost a timer per request.
	tr.ResponseHeaderTimeout = 0
	return &http.Client{
		Transport:     &checkedTransport{guard: g, next: tr, timeout: g.cfg.RequestTimeout},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// checkedTransport applies the DNS-free part of the URL policy to every request and bounds the
// whole exchange, from sending the request to closing the response body, by timeout.
type checkedTransport struct {
	guard   *Guard
	next    *http.Transport
	timeout time.Duration
}

func (t *checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.guard.checkTarget(req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip must close the body, even when refusing
		}
		return nil, err
	}
	if t.timeout <= 0 {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends the request's deadline context when the caller is done with the body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the pool.
func (t *checkedTransport) CloseIdleConnections() { t.next.CloseIdleConnections() }
