package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

const listenUsage = `usage: hookstream listen --forward-to URL [--events T,…] [flags]

Streams the partner's events as the deployment commits them (GET …/events/stream on the admin
API at --admin-url) and forwards each to --forward-to, signed the Standard Webhooks way with a
session secret printed at start, like 'stripe listen': a receiver on your machine gets real
events with no public URL and no endpoint. One line per event: time, type, event id, the local
answer's status and latency. A failed forward is shown, not retried.

--forward-to may be any URL, localhost included: this process makes the request, on your
machine. The server's egress guard, which keeps endpoints off private addresses, is not in the
path, and no endpoint is created.

The cursor of the last event forwarded is kept in --data-dir (listen-<partner>.cursor), and the
next listen of the partner resumes there, with no gap and no duplicate; without one it starts
with the events committed from now on. --after resumes at a cursor printed before (or a feed
page's next_cursor); --after now skips what was kept. On a dropped connection listen reconnects,
backing off up to 10 s, from its last cursor.

The token is --api-key (a partner API key, which streams its own partner only), else
--admin-token (the operator's, with --partner), else the one hookstream dev keeps in --data-dir.
The config file HOOKSTREAM_CONFIG (default ~/.config/hookstream/config; mode 600) may hold
them: admin_url, api_key, admin_token, partner; flags and variables win over it.
`

// listenBackoff bounds the wait between reconnections; listenSilence is how long a stream may
// stay silent (the server writes a heartbeat every 15 s) before it is taken for dead.
const (
	listenBackoff = 10 * time.Second
	listenSilence = 45 * time.Second
)

func runListen(ctx context.Context, args []string, out io.Writer) error {
	fs := flagsOf("listen")
	fs.usage = listenUsage
	partner := fs.String("partner", "", "the partner whose events to forward; empty: the API key's own, or the deployment's only partner")
	forwardTo := fs.String("forward-to", "", "the local URL each event is POSTed to (required)")
	var events []string
	fs.Var((*listValue)(&events), "events", "comma-separated event types or wildcards (usage.*), as in endpoint filters; empty: every type")
	after := fs.String("after", "", "the cursor to resume after, or now; empty: the one kept in --data-dir, else now")
	s, err := fs.parse(args, out)
	if err != nil {
		return err
	}
	if *forwardTo == "" {
		return fs.usageError(errors.New("--forward-to is required"))
	}
	if u, err := url.Parse(*forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fs.usageError(fmt.Errorf("--forward-to %q is not an http or https URL", *forwardTo))
	}
	s, api, err := openAPISession(ctx, fs, s, *partner, "table", out)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	signer, err := webhook.NewSigner(secret)
	if err != nil {
		return err
	}
	l := &listener{api: api, to: *forwardTo, types: strings.Join(events, ","), signer: signer, out: out,
		cursorFile: filepath.Join(s.DataDir, "listen-"+api.partner+".cursor"),
		local:      &http.Client{Timeout: 30 * time.Second}}
	switch *after {
	case "now":
	case "":
		if b, err := os.ReadFile(l.cursorFile); err == nil {
			l.cursor = strings.TrimSpace(string(b))
		}
	default:
		l.cursor = *after
	}
	filter := "every event type"
	if l.types != "" {
		filter = l.types
	}
	from := "from now on"
	if l.cursor != "" {
		from = "after cursor " + l.cursor
	}
	fmt.Fprintf(out, "Forwarding %s's events (%s) to %s, %s.\n", api.partner, filter, l.to, from)
	fmt.Fprintf(out, "Session secret (verify with it; for this session only): %s\n", secret)
	err = l.run(ctx)
	var refused *adminclient.APIError
	if errors.As(err, &refused) && refused.Problem.Code == adminclient.ProblemCodeInvalidCursor && *after == "" {
		err = fmt.Errorf("%w (the cursor kept in %s; --after now starts afresh)", err, l.cursorFile)
	}
	if l.cursor != "" {
		fmt.Fprintf(out, "Stopped; resume with --after %s\n", l.cursor)
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("listen: %w", err)
}

// listener is one listen session: the stream's cursor, and where and how events are forwarded.
type listener struct {
	api        *apiSession
	to, types  string
	signer     *webhook.Signer
	local      *http.Client
	out        io.Writer
	cursor     string // the SSE id of the last message handled
	cursorFile string
}

// run streams until ctx ends or the API refuses the stream; a dropped or silent stream is
// reopened from the cursor, after a backoff that grows while reconnections keep failing.
func (l *listener) run(ctx context.Context) error {
	wait := 250 * time.Millisecond
	for {
		got, err := l.stream(ctx)
		var refused *adminclient.APIError
		if ctx.Err() != nil || (errors.As(err, &refused) && refused.Status < 500) {
			return err
		}
		if got {
			wait = 250 * time.Millisecond
		}
		fmt.Fprintf(l.out, "%s  stream lost (%s); reconnecting in %s\n", time.Now().Format("15:04:05"), printable(fmt.Sprint(err)), wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, listenBackoff)
	}
}

// stream reads one connection of the stream until it ends; got is whether it was opened.
func (l *listener) stream(ctx context.Context) (got bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	params := &adminclient.StreamEventsParams{}
	if l.cursor != "" {
		params.LastEventID = &l.cursor
	}
	if l.types != "" {
		params.Types = &l.types
	}
	resp, err := l.api.c.StreamEvents(sctx, l.api.partner, params)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return false, adminclient.Check(rawResponse{resp.StatusCode, body}, nil)
	}
	fmt.Fprintf(l.out, "%s  connected\n", time.Now().Format("15:04:05"))
	// The watchdog ends a stream that stopped sending even its heartbeats (a half-open TCP
	// connection would otherwise wait forever).
	alive := make(chan struct{}, 1)
	go func() {
		t := time.NewTimer(listenSilence)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-alive:
				t.Reset(listenSilence)
			case <-t.C:
				cancel()
				return
			}
		}
	}()
	r := adminclient.NewStreamReader(resp.Body)
	for {
		m, err := r.Next()
		if err != nil {
			if sctx.Err() != nil && ctx.Err() == nil {
				err = fmt.Errorf("silent for %s", listenSilence)
			}
			return true, err
		}
		select {
		case alive <- struct{}{}:
		default:
		}
		if m.Event == "error" {
			var body adminclient.Problem
			_ = json.Unmarshal(m.Data, &body)
			status := http.StatusGone // what the first servers sent without a status
			if body.Status >= 400 {
				status = body.Status // 401 when the stream's key was revoked
			}
			return true, &adminclient.APIError{Status: status, Problem: body}
		}
		if m.Data != nil {
			l.forward(ctx, m.Data)
		}
		if m.ID != "" && m.ID != l.cursor {
			l.keep(m.ID)
		}
	}
}

// forward POSTs one envelope to the local URL, signed with the session secret, and prints its
// line. The cursor moves past it whatever the answer: listen shows a failure and goes on, as a
// developer's receiver under work fails often.
func (l *listener) forward(ctx context.Context, body []byte) {
	var env outbox.Envelope
	if err := json.Unmarshal(body, &env); err != nil {
		fmt.Fprintf(l.out, "%s  an event that is not an envelope: %v\n", time.Now().Format("15:04:05"), err)
		return
	}
	began := time.Now()
	status := ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.to, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", thisBuild().userAgent()+" (listen)")
		l.signer.SetHeaders(req.Header, env.EventID, began, body)
		var resp *http.Response
		if resp, err = l.local.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			status = fmt.Sprint(resp.StatusCode)
		}
	}
	if err != nil {
		status = "error: " + err.Error()
	}
	fmt.Fprintf(l.out, "%s  %-26s %s  -> %s  %.1fms\n", began.Format("15:04:05"), printable(env.Type), printable(env.EventID), printable(status),
		float64(time.Since(began).Microseconds())/1000)
}

// keep records the cursor, in memory and in the cursor file (a failure to write it is said
// once: listen still works, it just cannot resume by itself).
func (l *listener) keep(cursor string) {
	l.cursor = cursor
	if l.cursorFile == "" {
		return
	}
	tmp := l.cursorFile + ".tmp"
	err := os.MkdirAll(filepath.Dir(l.cursorFile), 0o700)
	if err == nil {
		err = os.WriteFile(tmp, []byte(cursor+"\n"), 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, l.cursorFile)
	}
	if err != nil {
		fmt.Fprintf(l.out, "cannot keep the cursor in %s (%v); resume with --after\n", l.cursorFile, err)
		l.cursorFile = ""
	}
}

// rawResponse lets adminclient.Check read an answer the generated client did not parse.
type rawResponse struct {
	status int
	body   []byte
}

func (r rawResponse) StatusCode() int { return r.status }
func (r rawResponse) GetBody() []byte { return r.body }
