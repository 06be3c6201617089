package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookstream/hookstream/webhook"
)

// receiver is the partners' side: one HTTP server on 127.0.0.1 with a path per endpoint
// (/ep/<n>), verifying every request with that endpoint's secret and recording, per webhook-id,
// when it first arrived and how often. It answers 200 at once, unless the endpoint hangs.
type receiver struct {
	addr string // 127.0.0.1:port, kept across down and up

	mu        sync.Mutex
	srv       *http.Server
	endpoints []*rxEndpoint // by path number
	unknown   int           // requests for paths no endpoint has
}

// rxEndpoint is what the receiver holds for one endpoint.
type rxEndpoint struct {
	mu       sync.Mutex
	verifier *webhook.Verifier   // nil until setSecret
	got      map[string]*receipt // by webhook-id
	bad      int                 // requests whose signature did not verify
	release  chan struct{}       // non-nil while the endpoint hangs; closed to end the hang
}

// receipt is the first arrival of one webhook-id at one endpoint, and how many came.
type receipt struct {
	first time.Time
	count int
}

// startReceiver listens on a port below the kernel's ephemeral range, so that while the
// receiver is down no outgoing connection can take the port and it can always listen again.
func startReceiver() (*receiver, error) {
	low := ephemeralLow()
	for range 100 {
		port := 10000 + rand.IntN(max(low-10000, 1))
		rx := &receiver{addr: fmt.Sprintf("127.0.0.1:%d", port)}
		if err := rx.up(); err == nil {
			return rx, nil
		}
	}
	return nil, fmt.Errorf("receiver: no free port between 10000 and %d", low)
}

// ephemeralLow is the lowest port the kernel hands to outgoing connections.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 10001 {
				return n
			}
		}
	}
	return 32768
}

// up (re)opens the listener on the receiver's address.
func (rx *receiver) up() error {
	ln, err := net.Listen("tcp", rx.addr)
	if err != nil {
		return fmt.Errorf("receiver: listen %s: %w", rx.addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(rx.serve), ReadHeaderTimeout: 10 * time.Second}
	rx.mu.Lock()
	rx.srv = srv
	rx.mu.Unlock()
	go func() { _ = srv.Serve(ln) }() // returns when down or close closes it
	return nil
}

// down closes the listener and every open connection: senders now get connection refused.
func (rx *receiver) down() {
	rx.mu.Lock()
	srv := rx.srv
	rx.srv = nil
	rx.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// comeBack reopens the receiver on the same port, retrying for a few seconds.
func (rx *receiver) comeBack(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := rx.up()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// ensureUp brings the receiver back if it is down.
func (rx *receiver) ensureUp() error {
	rx.mu.Lock()
	down := rx.srv == nil
	rx.mu.Unlock()
	if !down {
		return nil
	}
	return rx.comeBack(context.Background())
}

// close stops the receiver for good, ending any hanging request.
func (rx *receiver) close() { rx.down() }

// reset forgets every endpoint and receipt, for the next workload.
func (rx *receiver) reset() {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	for _, ep := range rx.endpoints {
		ep.setHang(false)
	}
	rx.endpoints, rx.unknown = nil, 0
}

// addEndpoint adds an endpoint and returns its number and URL; it receives nothing until
// setSecret gives it the secret the admin API returned for that URL.
func (rx *receiver) addEndpoint() (int, string) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.endpoints = append(rx.endpoints, &rxEndpoint{got: map[string]*receipt{}})
	n := len(rx.endpoints) - 1
	return n, fmt.Sprintf("http://%s/ep/%d", rx.addr, n)
}

// setSecret makes the endpoint verify with secret.
func (ep *rxEndpoint) setSecret(secret string) error {
	v, err := webhook.NewVerifier([]string{secret})
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	ep.mu.Lock()
	ep.verifier = v
	ep.mu.Unlock()
	return nil
}

// endpoint returns endpoint n, or nil.
func (rx *receiver) endpoint(n int) *rxEndpoint {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	if n < 0 || n >= len(rx.endpoints) {
		return nil
	}
	return rx.endpoints[n]
}

func (rx *receiver) serve(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/ep/"))
	ep := rx.endpoint(n)
	if err != nil || ep == nil || r.Method != http.MethodPost {
		rx.mu.Lock()
		rx.unknown++
		rx.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return // the sender gave up or the receiver went down
	}
	if !ep.verify(r.Header, body) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if !ep.wait(r.Context()) {
		return // the sender timed out while the endpoint hung: not received
	}
	ep.record(r.Header.Get(webhook.HeaderID), time.Now())
	w.WriteHeader(http.StatusOK)
}

// verify checks the request's signature and counts it when it is bad.
func (ep *rxEndpoint) verify(h http.Header, body []byte) bool {
	ep.mu.Lock()
	v := ep.verifier
	ep.mu.Unlock()
	if v != nil && v.VerifyHeader(h, body) == nil {
		return true
	}
	ep.mu.Lock()
	ep.bad++
	ep.mu.Unlock()
	return false
}

// wait holds the request while the endpoint hangs; false when the client gave up first.
func (ep *rxEndpoint) wait(ctx context.Context) bool {
	ep.mu.Lock()
	release := ep.release
	ep.mu.Unlock()
	if release == nil {
		return true
	}
	select {
	case <-release:
		return true
	case <-ctx.Done():
		return false
	}
}

func (ep *rxEndpoint) record(id string, at time.Time) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if r, ok := ep.got[id]; ok {
		r.count++
		return
	}
	ep.got[id] = &receipt{first: at, count: 1}
}

// setHang makes the endpoint hold every request until the client gives up (on), or answers the
// held ones and every later one at once (off).
func (ep *rxEndpoint) setHang(on bool) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch {
	case on && ep.release == nil:
		ep.release = make(chan struct{})
	case !on && ep.release != nil:
		close(ep.release)
		ep.release = nil
	}
}

// distinct is how many webhook-ids the endpoint received.
func (ep *rxEndpoint) distinct() int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return len(ep.got)
}

// snapshot copies the endpoint's receipts and its bad-signature count.
func (ep *rxEndpoint) snapshot() (map[string]receipt, int) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	out := make(map[string]receipt, len(ep.got))
	for id, r := range ep.got {
		out[id] = *r
	}
	return out, ep.bad
}

// unknownPaths is how many requests named no endpoint.
func (rx *receiver) unknownPaths() int {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	return rx.unknown
}
