package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/webhook"
)

const receiveUsage = `usage: hookstream receive --secret whsec_… [flags]

A webhook receiver to try an endpoint with (docs/getting-started.md): it listens on
127.0.0.1:--port, on any path, and verifies each request's Standard Webhooks signature with
webhook.NewVerifier and --secret, the endpoint's whsec_ secret (or its whpk_ public key for
signature scheme v1a; comma-separated, several during a rotation). An authentic request is
answered 204 and printed as one line: the time, the event type, the event id and the latency
from the event's occurred_at. Any other request is answered 401 (400 for an unreadable body)
and printed as a "refused" line with the reason. Runs until interrupted (Ctrl-C), then exits 0.
`

// receiveBodyLimit bounds the body read of one request: an envelope is far smaller.
const receiveBodyLimit = 4 << 20

// runReceive is `hookstream receive`.
func runReceive(ctx context.Context, args []string, out io.Writer) error {
	fs := flagsOf("receive")
	fs.usage = receiveUsage
	port := fs.Int("port", 9000, "the port to listen on, on 127.0.0.1 (0: any free port, printed at start)")
	var secrets []string
	fs.Var((*listValue)(&secrets), "secret", "the endpoint's secret (whsec_…) or public key (whpk_…); comma-separated for several")
	if _, err := fs.parse(args, out); err != nil {
		return err
	}
	switch {
	case len(secrets) == 0:
		return fs.usageError(errors.New("want --secret: the endpoint's whsec_ secret, shown when it was created"))
	case slices.ContainsFunc(secrets, func(s string) bool { return strings.Contains(s, "…") }):
		return fs.usageError(errors.New("--secret: put the secret `endpoints create` printed in place of whsec_…"))
	case *port < 0 || *port > 65535:
		return fs.usageError(fmt.Errorf("--port %d: want 0 to 65535", *port))
	}
	v, err := webhook.NewVerifier(secrets)
	if err != nil {
		// The verifier's error names the malformed key's kind, never its value.
		return fs.usageError(fmt.Errorf("--secret: %w", err))
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	if err != nil {
		return fmt.Errorf("receive: %w (--port picks another)", err)
	}
	r := &receiver{verifier: v, out: out}
	fmt.Fprintf(out, "Receiving on http://%s/ (any path), verifying with the secret given; Ctrl-C stops.\n", ln.Addr())
	g, gctx := errgroup.WithContext(ctx)
	serveHTTP(gctx, g, &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}, ln, 5*time.Second)
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("receive: %w", err)
	}
	return nil
}

// receiver verifies each request and prints one line for it.
type receiver struct {
	verifier *webhook.Verifier
	mu       sync.Mutex // one line at a time
	out      io.Writer
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, receiveBodyLimit))
	if err != nil {
		r.line("refused   %s %s: unreadable body: %v", req.Method, req.URL.Path, err)
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	msg, err := r.verifier.VerifyRequest(req.Header, body)
	if err != nil {
		r.line("refused   %s %s: %v", req.Method, req.URL.Path, err)
		http.Error(w, "signature does not verify", http.StatusUnauthorized)
		return
	}
	var event struct {
		OccurredAt time.Time `json:"occurred_at"`
	}
	latency := "-"
	if json.Unmarshal(body, &event) == nil && !event.OccurredAt.IsZero() {
		latency = time.Since(event.OccurredAt).Round(time.Millisecond).String()
	}
	r.line("verified  %-26s %s  %s", msg.Type, msg.ID, latency)
	w.WriteHeader(http.StatusNoContent)
}

// line prints one line, the time first; what the request carried is escaped, as every
// partner-written text a command prints (terminal.go).
func (r *receiver) line(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, "%s  %s\n", time.Now().Format("15:04:05"), printable(fmt.Sprintf(format, args...)))
}
