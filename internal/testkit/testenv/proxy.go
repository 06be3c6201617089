package testenv

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy on loopback in front of a server. Cut makes the server unreachable
// through it, the way a restart of the server looks to a client, without disturbing the other
// tests that share the server: every open connection is closed, and new ones are closed as soon
// as they are accepted, until Restore.
type Proxy struct {
	Addr string // host:port to connect to instead of the server's

	target string
	ln     net.Listener
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]struct{}
}

// NewProxy starts a proxy to target (host:port), closed when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: proxy: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.serve(&wg)
	}()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
		wg.Wait()
	})
	return p
}

// ThroughProxy returns a proxy to the database's server and the database's URL through it.
func (d *Database) ThroughProxy(t testing.TB) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(d.URL)
	if err != nil {
		t.Fatalf("testenv: database URL: %v", err)
	}
	p := NewProxy(t, u.Host)
	u.Host = p.Addr
	return p, u.String()
}

// Cut closes every connection through the proxy and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *Proxy) serve(wg *sync.WaitGroup) {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.pipe(client)
		}()
	}
}

// pipe copies between client and a new connection to the target until either side ends or
// the proxy is cut.
func (p *Proxy) pipe(client net.Conn) {
	defer client.Close()
	p.mu.Lock()
	cut := p.cut
	p.mu.Unlock()
	if cut {
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	p.mu.Lock()
	if p.cut { // cut while dialling
		p.mu.Unlock()
		return
	}
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, client)
		delete(p.conns, server)
		p.mu.Unlock()
	}()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(server, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, server); done <- struct{}{} }()
	<-done // one direction ended: end both
	client.Close()
	server.Close()
	<-done
}
