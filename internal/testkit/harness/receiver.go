package harness

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

// Receiver is the partners' side: one HTTP server on 127.0.0.1 with a path per endpoint
// (/ep/<n>), verifying every request with that endpoint's secret and recording, per webhook-id,
// when it first arrived and how often it was accepted. It answers 200 at once, unless the
// endpoint hangs or its Responder says otherwise.
type Receiver struct {
	addr string // 127.0.0.1:port, kept across down and up

	mu        sync.Mutex
	srv       *http.Server
	endpoints []*RxEndpoint // by path number
	unknown   int           // requests for paths no endpoint has
}

// RxEndpoint is what the receiver holds for one endpoint.
type RxEndpoint struct {
	mu        sync.Mutex
	verifier  *webhook.Verifier   // nil until SetSecret
	got       map[string]*Receipt // accepted (2xx) requests by webhook-id
	bad       int                 // requests whose signature did not verify
	release   chan struct{}       // non-nil while the endpoint hangs; closed to end the hang
	responder Responder           // nil: 200
	observer  Observer            // nil: none
}

// Receipt is the first and last accepted arrivals of one webhook-id at one endpoint, and how
// many came.
type Receipt struct {
	First, Last time.Time
	Count       int
}

// Request is what an endpoint saw of one request: for its Responder before the answer
// (Status 0), and for its Observer after it.
type Request struct {
	Endpoint   int // path number
	WebhookID  string
	Body       []byte
	Verified   bool
	ReceivedAt time.Time
	// Status is the answer given; 0 when none was (the client gave up while it was held).
	Status int
}

// Answer is how an endpoint answers one verified request.
type Answer struct {
	Status     int
	RetryAfter string // the Retry-After header, if any
	// Hold keeps the request open this long (or until the client gives up) before answering:
	// a receiver that times out.
	Hold time.Duration
}

// Responder picks the answer to a verified request.
type Responder func(r *Request) Answer

// Observer is told of every request an endpoint got and how it was answered.
type Observer func(r Request)

// StartReceiver listens on a port below the kernel's ephemeral range, so that while the
// receiver is down no outgoing connection can take the port and it can always listen again.
func StartReceiver() (*Receiver, error) {
	low := ephemeralLow()
	for range 100 {
		port := 10000 + rand.IntN(max(low-10000, 1))
		rx := &Receiver{addr: fmt.Sprintf("127.0.0.1:%d", port)}
		if err := rx.Up(); err == nil {
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

// Addr is the receiver's 127.0.0.1:port.
func (rx *Receiver) Addr() string { return rx.addr }

// Up (re)opens the listener on the receiver's address.
func (rx *Receiver) Up() error {
	ln, err := net.Listen("tcp", rx.addr)
	if err != nil {
		return fmt.Errorf("receiver: listen %s: %w", rx.addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(rx.serve), ReadHeaderTimeout: 10 * time.Second}
	rx.mu.Lock()
	rx.srv = srv
	rx.mu.Unlock()
	go func() { _ = srv.Serve(ln) }() // returns when Down or Close closes it
	return nil
}

// Down closes the listener and every open connection: senders now get connection refused.
func (rx *Receiver) Down() {
	rx.mu.Lock()
	srv := rx.srv
	rx.srv = nil
	rx.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// ComeBack reopens the receiver on the same port, retrying for a few seconds.
func (rx *Receiver) ComeBack(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := rx.Up()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		if err := Sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// EnsureUp brings the receiver back if it is down.
func (rx *Receiver) EnsureUp() error {
	rx.mu.Lock()
	down := rx.srv == nil
	rx.mu.Unlock()
	if !down {
		return nil
	}
	return rx.ComeBack(context.Background())
}

// Close stops the receiver for good, ending any hanging request.
func (rx *Receiver) Close() { rx.Down() }

// Reset forgets every endpoint and receipt, for the next workload.
func (rx *Receiver) Reset() {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	for _, ep := range rx.endpoints {
		ep.SetHang(false)
	}
	rx.endpoints, rx.unknown = nil, 0
}

// AddEndpoint adds an endpoint and returns its number and URL; it receives nothing until
// SetSecret gives it the secret the admin API returned for that URL.
func (rx *Receiver) AddEndpoint() (int, string) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.endpoints = append(rx.endpoints, &RxEndpoint{got: map[string]*Receipt{}})
	n := len(rx.endpoints) - 1
	return n, fmt.Sprintf("http://%s/ep/%d", rx.addr, n)
}

// SetSecret makes the endpoint verify with secret.
func (ep *RxEndpoint) SetSecret(secret string) error {
	v, err := webhook.NewVerifier([]string{secret})
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	ep.mu.Lock()
	ep.verifier = v
	ep.mu.Unlock()
	return nil
}

// SetResponder makes r pick the endpoint's answers; nil answers 200.
func (ep *RxEndpoint) SetResponder(r Responder) {
	ep.mu.Lock()
	ep.responder = r
	ep.mu.Unlock()
}

// SetObserver makes o hear of every request of the endpoint; nil none.
func (ep *RxEndpoint) SetObserver(o Observer) {
	ep.mu.Lock()
	ep.observer = o
	ep.mu.Unlock()
}

// Endpoint returns endpoint n, or nil.
func (rx *Receiver) Endpoint(n int) *RxEndpoint {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	if n < 0 || n >= len(rx.endpoints) {
		return nil
	}
	return rx.endpoints[n]
}

func (rx *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/ep/"))
	ep := rx.Endpoint(n)
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
	req := Request{Endpoint: n, WebhookID: r.Header.Get(webhook.HeaderID), Body: body, ReceivedAt: time.Now()}
	if req.Verified = ep.verify(r.Header, body); !req.Verified {
		w.WriteHeader(http.StatusUnauthorized)
		req.Status = http.StatusUnauthorized
		ep.observe(req)
		return
	}
	a, ok := ep.answer(r.Context(), &req)
	if !ok {
		ep.observe(req) // Status 0: the client gave up while the request was held
		return
	}
	if a.Status >= 200 && a.Status < 300 {
		ep.record(req.WebhookID, time.Now())
	}
	if a.RetryAfter != "" {
		w.Header().Set("Retry-After", a.RetryAfter)
	}
	w.WriteHeader(a.Status)
	req.Status = a.Status
	ep.observe(req)
}

// answer picks the answer to a verified request as the endpoint's hang and Responder say, after
// holding the request as long as they ask; false when the client gave up first.
func (ep *RxEndpoint) answer(ctx context.Context, req *Request) (Answer, bool) {
	if !ep.wait(ctx) {
		return Answer{}, false // the sender timed out while the endpoint hung: not received
	}
	ep.mu.Lock()
	responder := ep.responder
	ep.mu.Unlock()
	a := Answer{Status: http.StatusOK}
	if responder != nil {
		a = responder(req)
	}
	if a.Hold > 0 {
		t := time.NewTimer(a.Hold)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return Answer{}, false
		case <-t.C:
		}
	}
	return a, true
}

// observe tells the endpoint's Observer of req.
func (ep *RxEndpoint) observe(req Request) {
	ep.mu.Lock()
	o := ep.observer
	ep.mu.Unlock()
	if o != nil {
		o(req)
	}
}

// verify checks the request's signature and counts it when it is bad.
func (ep *RxEndpoint) verify(h http.Header, body []byte) bool {
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
func (ep *RxEndpoint) wait(ctx context.Context) bool {
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

func (ep *RxEndpoint) record(id string, at time.Time) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if r, ok := ep.got[id]; ok {
		r.Count++
		r.Last = at
		return
	}
	ep.got[id] = &Receipt{First: at, Last: at, Count: 1}
}

// SetHang makes the endpoint hold every request until the client gives up (on), or answers the
// held ones and every later one at once (off).
func (ep *RxEndpoint) SetHang(on bool) {
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

// Distinct is how many webhook-ids the endpoint accepted.
func (ep *RxEndpoint) Distinct() int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return len(ep.got)
}

// Unreceived returns the ids of ids the endpoint has not accepted yet.
func (ep *RxEndpoint) Unreceived(ids []string) []string {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	var out []string
	for _, id := range ids {
		if _, ok := ep.got[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// Snapshot copies the endpoint's receipts and its bad-signature count.
func (ep *RxEndpoint) Snapshot() (map[string]Receipt, int) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	out := make(map[string]Receipt, len(ep.got))
	for id, r := range ep.got {
		out[id] = *r
	}
	return out, ep.bad
}

// UnknownPaths is how many requests named no endpoint.
func (rx *Receiver) UnknownPaths() int {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	return rx.unknown
}
