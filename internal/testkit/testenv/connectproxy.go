package testenv

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
)

// ConnectProxy is a forward proxy on loopback that opens HTTP CONNECT tunnels, as Squid or an
// egress gateway does, and records what it was asked for. With Credentials set it answers 407
// to a request without them.
type ConnectProxy struct {
	URL *url.URL // http://127.0.0.1:port, with the credentials when set

	ln       net.Listener
	user     string
	password string
	refuse   int // a status to answer every CONNECT with instead of a tunnel; 0: tunnel

	mu      sync.Mutex
	targets []string
	conns   map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// NewConnectProxy starts a CONNECT proxy, closed when the test ends. user and password, when
// user is not empty, are required of every client (Proxy-Authorization: Basic).
func NewConnectProxy(t testing.TB, user, password string) *ConnectProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: connect proxy: %v", err)
	}
	p := &ConnectProxy{ln: ln, user: user, password: password, URL: &url.URL{Scheme: "http", Host: ln.Addr().String()},
		conns: map[net.Conn]struct{}{}}
	if user != "" {
		p.URL.User = url.UserPassword(user, password)
	}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Refuse makes the proxy answer every later CONNECT with status instead of a tunnel.
func (p *ConnectProxy) Refuse(status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = status
}

// Targets are the authority-form targets of the CONNECT requests the proxy accepted, in order.
func (p *ConnectProxy) Targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

// close stops the proxy and ends its tunnels, which a client's idle connections keep open.
func (p *ConnectProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// track keeps c to be closed at the end; false when the proxy is closing.
func (p *ConnectProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *ConnectProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

func (p *ConnectProxy) serve(c net.Conn) {
	defer c.Close()
	if !p.track(c) {
		return
	}
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect {
		_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	}
	if p.user != "" {
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.password))
		if req.Header.Get("Proxy-Authorization") != want {
			_, _ = io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n")
			return
		}
	}
	p.mu.Lock()
	refuse := p.refuse
	if refuse == 0 {
		p.targets = append(p.targets, req.Host)
	}
	p.mu.Unlock()
	if refuse != 0 {
		_, _ = fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Length: 0\r\n\r\n", refuse, http.StatusText(refuse))
		return
	}
	up, err := net.Dial("tcp", req.Host)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	if !p.track(up) {
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, br); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
}
