package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
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
