package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/localinfra"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// listenSession is a `hookstream listen` running until stop.
type listenSession struct {
	out    *testenv.Buffer
	secret string
	stop   func() error
}

func startListen(t *testing.T, args ...string) *listenSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &testenv.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"listen"}, args...), out) }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("listen did not stop within 30s")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	secretLine := regexp.MustCompile(`Session secret[^\n]*: (whsec_[A-Za-z0-9+/=]+)\n`)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "connected\n") {
		select {
		case err := <-done:
			t.Fatalf("listen exited: %v\n%s", err, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen not connected after 30s:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m := secretLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("listen printed no session secret:\n%s", out)
	}
	if key, err := webhook.ParseSecret(m[1]); err != nil || len(key) < 24 || len(key) > 32 {
		t.Fatalf("session secret %s: %d bytes, %v", m[1], len(key), err)
	}
	return &listenSession{out: out, secret: m[1], stop: stop}
}

// verifiedIDs checks every request with the secret and returns their event ids in order; each
// request's body is the envelope of the id it is signed for.
func verifiedIDs(t *testing.T, msgs []receivedMsg, secret string) []string {
	t.Helper()
	v, err := webhook.NewVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range msgs {
		if err := v.VerifyHeader(m.header, m.body); err != nil {
			t.Fatalf("a forwarded request does not verify with the printed secret: %v", err)
		}
		var env outbox.Envelope
		if err := json.Unmarshal(m.body, &env); err != nil || env.EventID != m.header.Get("webhook-id") {
			t.Fatalf("forwarded body %s (signed as %s): %v", m.body, m.header.Get("webhook-id"), err)
		}
		ids = append(ids, env.EventID)
	}
	return ids
}

// R32, design.md section 12: `hookstream listen` against `hookstream dev` with a partner key forwards the
// partner's events as they are committed, signed with the secret it printed, to a local receiver,
// with one line per event; another partner's events never reach it. Restarted with the same data
// directory it resumes at its cursor: the events committed while it was down come, each once,
// and no event forwarded before comes again. --events filters by type.
func TestListenForwardsResumesAndStaysInScope(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	ctx := context.Background()
	key := map[string]string{}
	for _, p := range []string{"pt", "other"} {
		created, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: p, Name: &p})
		must(t, "create partner "+p, created, err)
		k, err := dev.api.CreateAPIKeyWithResponse(ctx, p, adminclient.APIKeyCreate{})
		must(t, "create api key of "+p, k, err)
		key[p] = k.JSON201.Key
	}
	var rx received
	srv := httptest.NewServer(rx.handler(func(int) int { return http.StatusAccepted }))
	defer srv.Close()
	dataDir := t.TempDir()
	listen := func(extra ...string) *listenSession {
		return startListen(t, append([]string{"--forward-to", srv.URL + "/webhooks", "--admin-url", dev.adminURL,
			"--api-key", key["pt"], "--data-dir", dataDir}, extra...)...)
	}

	first := listen()
	var want []string
	for i := 0; i < 3; i++ {
		appendEvent(t, db, "other", "customer.created")
		want = append(want, appendEvent(t, db, "pt", "customer.created"))
	}
	msgs := rx.waitFor(t, len(want), 60*time.Second)
	if got := verifiedIDs(t, msgs, first.secret); !slices.Equal(got, want) {
		t.Fatalf("listen forwarded %v, want %v (pt's, in commit order)", got, want)
	}
	for _, id := range want {
		line := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  customer\.created +` + id + `  -> 202  \d+\.\dms$`)
		if !line.MatchString(first.out.String()) {
			t.Errorf("listen's output has no line for %s:\n%s", id, first.out)
		}
	}
	if err := first.stop(); err != nil {
		t.Fatalf("listen stopped with %v", err)
	}
	if !strings.Contains(first.out.String(), "Stopped; resume with --after ") {
		t.Errorf("listen did not print its cursor at the end:\n%s", first.out)
	}

	// While listen is down: two of pt's events of the filtered type, one of another type, one
	// of the other partner.
	var missed []string
	missed = append(missed, appendEvent(t, db, "pt", "usage.finalized"))
	appendEvent(t, db, "pt", "customer.created")
	appendEvent(t, db, "other", "usage.finalized")
	missed = append(missed, appendEvent(t, db, "pt", "usage.finalized"))

	waitInFeed(t, dev, "pt", missed[len(missed)-1]) // so a listen starting from now would miss them

	second := listen("--events", "usage.*")
	if second.secret == first.secret {
		t.Fatal("a new session printed the same secret")
	}
	msgs = rx.waitFor(t, len(want)+len(missed), 60*time.Second)
	time.Sleep(time.Second) // a duplicate or another partner's event would arrive by now
	msgs = rx.all()
	if got := verifiedIDs(t, msgs[len(want):], second.secret); !slices.Equal(got, missed) {
		t.Fatalf("the resumed listen forwarded %v, want %v: the usage.* events committed while it was down, once each", got, missed)
	}
	if strings.Contains(second.out.String(), "customer.created") {
		t.Errorf("listen --events usage.* printed a customer.created:\n%s", second.out)
	}

	// Another partner's stream is refused to pt's key, whatever --partner says.
	status, _, stderr := cli(t, "listen", "--forward-to", srv.URL, "--admin-url", dev.adminURL,
		"--api-key", key["pt"], "--partner", "other", "--data-dir", t.TempDir())
	if status == 0 || !strings.Contains(stderr, "404 not_found") {
		t.Errorf("listen --partner other with pt's key: status %d\n%s", status, stderr)
	}
}

// waitInFeed waits until the event id is in the partner's feed: published to the events topic.
func waitInFeed(t *testing.T, dev *devInstance, partner, id string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		page, err := dev.api.ListEventsWithResponse(context.Background(), partner, &adminclient.ListEventsParams{Types: ptr("usage.*")})
		must(t, "feed of "+partner, page, err)
		for _, ev := range page.JSON200.Data {
			if ev.EventID == id {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not in the feed of %s after 60s", id, partner)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// localReceiver is a receiver on a port of its own that can be down (connection refused) and
// come up again on the same port; it records every request it gets, answered with answer's
// status for it.
type localReceiver struct {
	t      *testing.T
	addr   string
	rx     received
	answer func(receivedMsg) int
	srv    *httptest.Server
}

func newLocalReceiver(t *testing.T, answer func(receivedMsg) int) *localReceiver {
	t.Helper()
	port, err := localinfra.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	r := &localReceiver{t: t, addr: fmt.Sprintf("127.0.0.1:%d", port), answer: answer}
	t.Cleanup(r.down)
	return r
}

func (r *localReceiver) url() string { return "http://" + r.addr + "/webhooks" }

func (r *localReceiver) up() {
	r.t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("receiver back on %s: %v", r.addr, err)
	}
	r.srv = httptest.NewUnstartedServer(r.rx.handler(func(n int) int {
		return r.answer(r.rx.all()[n-1])
	}))
	r.srv.Listener.Close()
	r.srv.Listener = ln
	r.srv.Start()
}

func (r *localReceiver) down() {
	if r.srv != nil {
		r.srv.Close()
		r.srv = nil
	}
}

// waitOutput waits until the session's output matches re.
func (s *listenSession) waitOutput(t *testing.T, re *regexp.Regexp) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !re.MatchString(s.out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("listen's output does not match %s after 60s:\n%s", re, s.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// R32: a forward that fails is retried, in order, until the local server acknowledges it, and
// the cursor moves only past acknowledged events. The local server is down (connection refused)
// while events are committed; listen retries the first and forwards none of the later ones;
// stopped while retrying and started again with the same data directory, it resumes at the
// first event not acknowledged. The server comes up answering 503 once, then 202: every event
// is acknowledged exactly once, by webhook-id, in commit order, and a listen started after that
// forwards only what is committed next.
func TestListenRetriesFailedForwardsInOrderAcrossRestarts(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	ctx := context.Background()
	created, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "pt"})
	must(t, "create partner", created, err)
	k, err := dev.api.CreateAPIKeyWithResponse(ctx, "pt", adminclient.APIKeyCreate{})
	must(t, "create api key", k, err)
	var answered atomic.Int32
	local := newLocalReceiver(t, func(receivedMsg) int {
		if answered.Add(1) == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusAccepted
	})
	dataDir := t.TempDir()
	listen := func() *listenSession {
		return startListen(t, "--forward-to", local.url(), "--admin-url", dev.adminURL,
			"--api-key", k.JSON201.Key, "--data-dir", dataDir)
	}
	attemptLine := func(id, answer string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  customer\.created +` + id + `  -> ` + answer +
			`  \d+\.\dms  attempt \d+; again in \d+\.\ds, later events wait$`)
	}

	first := listen()
	var want []string
	for range 2 {
		want = append(want, appendEvent(t, db, "pt", "customer.created"))
	}
	// Until the first event was tried twice, or the second one once.
	first.waitOutput(t, regexp.MustCompile(`(?s)`+want[0]+`.*`+want[0]+`|`+want[1]))
	if err := first.stop(); err != nil {
		t.Fatalf("listen stopped with %v", err)
	}
	if strings.Contains(first.out.String(), want[1]) {
		t.Fatalf("listen forwarded %s while %s, committed before it, was not acknowledged:\n%s", want[1], want[0], first.out)
	}
	if !attemptLine(want[0], "error: dial tcp "+regexp.QuoteMeta(local.addr)+": connect: connection refused").MatchString(first.out.String()) {
		t.Errorf("listen's output has no retry line for %s:\n%s", want[0], first.out)
	}

	want = append(want, appendEvent(t, db, "pt", "customer.created")) // while no listen runs
	second := listen()
	second.waitOutput(t, regexp.MustCompile(want[0]+`  -> error: [^\n]*connection refused  \d+\.\dms  attempt 1; `))
	local.up()
	want = append(want, appendEvent(t, db, "pt", "customer.created"))
	acknowledged := func() []string {
		var ids []string
		for i, id := range verifiedIDs(t, local.rx.all(), second.secret) {
			if i > 0 { // the first request was answered 503
				ids = append(ids, id)
			}
		}
		return ids
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(acknowledged()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // a duplicate would arrive by now
	if got := verifiedIDs(t, local.rx.all(), second.secret); len(got) == 0 || got[0] != want[0] {
		t.Fatalf("the local server's first request was for %v, want %s", got, want[0])
	}
	if got := acknowledged(); !slices.Equal(got, want) {
		t.Fatalf("the local server acknowledged %v, want %v: each event once, in commit order\n%s\n%s", got, want, first.out, second.out)
	}
	if !attemptLine(want[0], "503").MatchString(second.out.String()) {
		t.Errorf("listen's output has no retry line for the 503 to %s:\n%s", want[0], second.out)
	}
	second.waitOutput(t, regexp.MustCompile(`(?m)`+want[len(want)-1]+`  -> 202  \d+\.\dms$`)) // acknowledged, not only received
	if err := second.stop(); err != nil {
		t.Fatalf("listen stopped with %v", err)
	}

	third := listen()
	next := appendEvent(t, db, "pt", "customer.created")
	msgs := local.rx.waitFor(t, len(want)+2, 60*time.Second)
	time.Sleep(time.Second)
	if got := verifiedIDs(t, local.rx.all()[len(msgs)-1:], third.secret); len(local.rx.all()) != len(msgs) || !slices.Equal(got, []string{next}) {
		t.Fatalf("a listen started after every event was acknowledged forwarded %v, want only %s", got, next)
	}
}

// R32: a 4xx is retried like any failure, holding the later events, until the local server takes
// the event (here a receiver that refuses usage.finalized with 422); with --skip-client-errors listen moves on past it instead, shown as skipped, and
// the cursor with it: a listen started afterwards does not forward it again.
func TestListenClientErrorsRetriedUnlessSkipped(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	ctx := context.Background()
	created, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "pt"})
	must(t, "create partner", created, err)
	k, err := dev.api.CreateAPIKeyWithResponse(ctx, "pt", adminclient.APIKeyCreate{})
	must(t, "create api key", k, err)
	local := newLocalReceiver(t, func(m receivedMsg) int {
		var env outbox.Envelope
		if json.Unmarshal(m.body, &env) == nil && env.Type == "usage.finalized" {
			return http.StatusUnprocessableEntity
		}
		return http.StatusAccepted
	})
	local.up()
	dataDir := t.TempDir()
	listen := func(extra ...string) *listenSession {
		return startListen(t, append([]string{"--forward-to", local.url(), "--admin-url", dev.adminURL,
			"--api-key", k.JSON201.Key, "--data-dir", dataDir}, extra...)...)
	}
	ids := func(s *listenSession, from int) []string {
		return verifiedIDs(t, local.rx.all()[from:], s.secret)
	}

	first := listen()
	rejected := appendEvent(t, db, "pt", "usage.finalized")
	later := appendEvent(t, db, "pt", "customer.created")
	first.waitOutput(t, regexp.MustCompile(rejected+`  -> 422  \d+\.\dms  attempt 2; again in `))
	if err := first.stop(); err != nil {
		t.Fatalf("listen stopped with %v", err)
	}
	got := ids(first, 0)
	if len(got) < 2 || slices.Contains(got, later) || slices.ContainsFunc(got, func(id string) bool { return id != rejected }) {
		t.Fatalf("listen forwarded %v, want %s again and again and not %s after it", got, rejected, later)
	}

	before := len(local.rx.all())
	second := listen("--skip-client-errors")
	local.rx.waitFor(t, before+2, 60*time.Second)
	if got := ids(second, before); !slices.Equal(got, []string{rejected, later}) {
		t.Fatalf("listen --skip-client-errors forwarded %v, want %s once (skipped) then %s", got, rejected, later)
	}
	second.waitOutput(t, regexp.MustCompile(`(?m)`+rejected+`  -> 422  \d+\.\dms  skipped \(--skip-client-errors\)$`))
	// The local server has the request before listen has the answer: stopping in between leaves
	// the event unacknowledged, to be forwarded again (at least once), so stop once it is taken.
	second.waitOutput(t, regexp.MustCompile(`(?m)`+later+`  -> 202  \d+\.\dms$`))
	if err := second.stop(); err != nil {
		t.Fatalf("listen stopped with %v", err)
	}

	before = len(local.rx.all())
	third := listen()
	next := appendEvent(t, db, "pt", "customer.created")
	local.rx.waitFor(t, before+1, 60*time.Second)
	time.Sleep(time.Second)
	if got := ids(third, before); !slices.Equal(got, []string{next}) {
		t.Fatalf("a listen started after the skip forwarded %v, want only %s", got, next)
	}
}

// The wait after a failed forward: 0.5 s doubling up to 10 s, less up to a quarter of jitter,
// or the local server's Retry-After when that is longer.
func TestListenRetryWait(t *testing.T) {
	for _, c := range []struct {
		attempt    int
		retryAfter time.Duration
		base       time.Duration // the wait is in [3/4 base, base]
	}{
		{1, 0, 500 * time.Millisecond},
		{2, 0, time.Second},
		{3, 0, 2 * time.Second},
		{5, 0, 8 * time.Second},
		{6, 0, 10 * time.Second},
		{1000, 0, 10 * time.Second},
		{0, 0, 500 * time.Millisecond},
		{1, 4 * time.Second, 4 * time.Second},
	} {
		for range 50 {
			if got := listenRetryWait(c.attempt, c.retryAfter); got < c.base*3/4 || got > c.base {
				t.Fatalf("listenRetryWait(%d, %s) = %s, want within [%s, %s]", c.attempt, c.retryAfter, got, c.base*3/4, c.base)
			}
		}
	}
}
