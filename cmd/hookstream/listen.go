package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/sender"
	"github.com/hookstream/hookstream/webhook"
)

const listenUsage = `usage: hookstream listen --forward-to URL [--events T,…] [flags]

Streams the partner's events as the deployment commits them (GET …/events/stream on the admin
API at --admin-url) and forwards each to --forward-to, signed the Standard Webhooks way with a
session secret printed at start, like 'stripe listen': a receiver on your machine gets real
events with no public URL and no endpoint. One line per event: time, type, event id, the local
answer's status and latency.

Events are forwarded one at a time, in commit order, and each until the local URL acknowledges
it with a 2xx. A forward that fails (connection refused, a timeout, any other status) is made
again after a backoff from 0.5 s doubling up to 10 s, with jitter (a Retry-After up to 10 s
is honoured), one line per attempt, and the later events wait for it. A 4xx is retried as
well, as the deployment's sender does by default: the receiver under work may be fixed
meanwhile (a receiver still verifying with the last session's secret answers 401 until it has
this one). --skip-client-errors moves on past an event answered with a 4xx other than 408,
425 and 429 instead: it is shown as skipped and is not forwarded again.

--forward-to may be any URL, localhost included: this process makes the request, on your
machine. The server's egress guard, which keeps endpoints off private addresses, is not in the
path, and no endpoint is created.

The cursor is kept in --data-dir (listen-<partner>.cursor) and moves only past events the local
URL acknowledged (or that were skipped): the next listen of the partner resumes at the first
event not acknowledged, also when this one was stopped while retrying it. No event is lost, and
one comes again only when its answer was not seen (listen stopped during the request, a
timeout), with the same webhook-id. Without a kept cursor listen starts with the events
committed from now on. --after resumes at a cursor printed before (or a feed page's
next_cursor); --after now skips what was kept. On a dropped connection listen reconnects,
backing off up to 10 s, from its last cursor.

The token is --api-key (a partner API key, which streams its own partner only), else
--admin-token (the operator's, with --partner), else the one hookstream dev keeps in --data-dir.
The config file HOOKSTREAM_CONFIG (default ~/.config/hookstream/config; mode 600) may hold
them: admin_url, api_key, admin_token, partner; flags and variables win over it.
`

// listenBackoff bounds the wait between reconnections; listenSilence is how long a stream may
// stay silent (the server writes a heartbeat every 15 s) before it is taken for dead;
// listenRetryFirst is the wait before a failed forward is made again, doubling up to
// listenBackoff.
const (
	listenBackoff    = 10 * time.Second
	listenSilence    = 45 * time.Second
	listenRetryFirst = 500 * time.Millisecond
)

func runListen(ctx context.Context, args []string, out io.Writer) error {
	fs := flagsOf("listen")
	fs.usage = listenUsage
	partner := fs.String("partner", "", "the partner whose events to forward; empty: the API key's own, or the deployment's only partner")
	forwardTo := fs.String("forward-to", "", "the local URL each event is POSTed to (required)")
	var events []string
	fs.Var((*listValue)(&events), "events", "comma-separated event types or wildcards (usage.*), as in endpoint filters; empty: every type")
	after := fs.String("after", "", "the cursor to resume after, or now; empty: the one kept in --data-dir, else now")
	skipClientErrors := fs.Bool("skip-client-errors", false, "move on past an event the local URL answers with a 4xx other than 408, 425 and 429, instead of retrying it")
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
		local:      &http.Client{Timeout: 30 * time.Second}, skipClientErrors: *skipClientErrors}
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
	cursor     string // the SSE id of the last message handled: events up to it were acknowledged
	cursorFile string
	// skipClientErrors moves the cursor past an event answered with a 4xx other than 408, 425
	// and 429; otherwise every failed forward is retried.
	skipClientErrors bool
}

// heldEvent is an event whose forward failed: later events wait until it is acknowledged.
type heldEvent struct {
	id   string // the cursor after it
	body []byte
	wait time.Duration // before the next attempt
}

// run streams until ctx ends or the API refuses the stream; a dropped or silent stream is
// reopened from the cursor, after a backoff that grows while reconnections keep failing.
func (l *listener) run(ctx context.Context) error {
	wait := 250 * time.Millisecond
	for {
		got, held, err := l.stream(ctx)
		if held != nil {
			if err := l.retry(ctx, held); err != nil {
				return err
			}
			wait = 250 * time.Millisecond
			continue // from the cursor after the held event
		}
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

// retry forwards the held event again, backing off, until it is acknowledged (or skipped) and the
// cursor moves past it, or ctx ends with the cursor still before it.
func (l *listener) retry(ctx context.Context, held *heldEvent) error {
	for attempt := 2; ; attempt++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(held.wait):
		}
		wait, done := l.forward(ctx, held.body, attempt)
		if done {
			if held.id != "" {
				l.keep(held.id)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		held.wait = wait
	}
}

// stream reads one connection of the stream until it ends; got is whether it was opened. An event
// whose forward fails ends the connection and is returned as held: the server is not left
// writing to a reader that stopped reading while the event is retried, and the next connection
// starts after it once it is acknowledged.
func (l *listener) stream(ctx context.Context) (got bool, held *heldEvent, err error) {
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
		return false, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return false, nil, adminclient.Check(rawResponse{resp.StatusCode, body}, nil)
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
			return true, nil, err
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
			return true, nil, &adminclient.APIError{Status: status, Problem: body}
		}
		if m.Data != nil {
			if wait, done := l.forward(ctx, m.Data, 1); !done {
				return true, &heldEvent{id: m.ID, body: m.Data, wait: wait}, nil
			}
		}
		if m.ID != "" && m.ID != l.cursor {
			l.keep(m.ID)
		}
	}
}

// forward POSTs one envelope to the local URL, signed with the session secret, and prints its
// line. done is whether the cursor may move past it: acknowledged with a 2xx, skipped as a client
// error with --skip-client-errors, or no envelope to forward. Otherwise (and unless ctx ended
// during the request) wait is the backoff before attempt+1.
func (l *listener) forward(ctx context.Context, body []byte, attempt int) (wait time.Duration, done bool) {
	var env outbox.Envelope
	if err := json.Unmarshal(body, &env); err != nil {
		fmt.Fprintf(l.out, "%s  an event that is not an envelope: %v\n", time.Now().Format("15:04:05"), err)
		return 0, true
	}
	began := time.Now()
	var resp *http.Response
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.to, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", thisBuild().userAgent()+" (listen)")
		l.signer.SetHeaders(req.Header, env.EventID, began, body)
		resp, err = l.local.Do(req)
	}
	status := ""
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		status = fmt.Sprint(resp.StatusCode)
	} else {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err // the method and URL are those of every line
		}
		status = "error: " + err.Error()
	}
	line := fmt.Sprintf("%s  %-26s %s  -> %s  %.1fms", began.Format("15:04:05"), printable(env.Type), printable(env.EventID), printable(status),
		float64(time.Since(began).Microseconds())/1000)
	// The deployment's response policy (design.md section 7) with its default for client errors,
	// retried (R20); --skip-client-errors makes them final instead.
	failure := sender.Classify(resp, err, time.Now(), sender.Policy{RetryClientErrors: true, MaxRetryAfter: listenBackoff})
	switch {
	case failure == nil:
		fmt.Fprintln(l.out, line)
		return 0, true
	case ctx.Err() != nil:
		fmt.Fprintf(l.out, "%s  (stopped; not acknowledged)\n", line)
		return 0, false
	case l.skipClientErrors && (failure.ClientError || failure.Gone):
		fmt.Fprintf(l.out, "%s  skipped (--skip-client-errors)\n", line)
		return 0, true
	}
	wait = listenRetryWait(attempt, failure.RetryAfter)
	fmt.Fprintf(l.out, "%s  attempt %d; again in %.1fs, later events wait\n", line, attempt, wait.Seconds())
	return wait, false
}

// listenRetryWait is the wait after the failed attempt (1 the first): listenRetryFirst doubling
// up to listenBackoff, less up to a quarter of jitter (so that listens restarted together do not
// retry in step), or the local server's Retry-After when longer (capped at listenBackoff by
// the caller).
func listenRetryWait(attempt int, retryAfter time.Duration) time.Duration {
	wait := min(listenRetryFirst<<min(max(attempt, 1)-1, 10), listenBackoff)
	wait -= time.Duration(rand.Int64N(int64(wait/4) + 1))
	return max(wait, retryAfter)
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
