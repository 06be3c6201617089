package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

const transcriptFile = "../../docs/cli-transcript.md"

const transcriptHead = "# A terminal session with hookstream\n\n" +
	"What a developer sees, against `hookstream dev`, run from dev's directory (so the API commands\n" +
	"find its admin URL and operator token without flags): an endpoint for a local receiver,\n" +
	"`trigger`, `deliveries list`, a `replay` of the deliveries that failed while the receiver\n" +
	"answered 500 (output not a terminal: plain progress lines; on a terminal it is one line with a\n" +
	"bar, redrawn), and `listen` forwarding one event.\n\n" +
	"`TestTranscript` (cmd/hookstream/transcript_test.go) runs this session and fails when its output\n" +
	"differs from this file. Ids, secrets, cursors, times, latencies and ports are masked, and of the\n" +
	"replay's progress lines, whose number depends on timing, only the last is kept. Regenerate it\n" +
	"after a change of the output with\n\n" +
	"```sh\n" +
	"HOOKSTREAM_UPDATE_TRANSCRIPT=1 go test ./cmd/hookstream -run TestTranscript\n" +
	"```\n\n"

// A terminal session shows the output a user sees. The session runs
// against `hookstream dev` and its masked output must be the committed docs/cli-transcript.md.
func TestTranscript(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db, "--retry-schedule", "1s")
	ctx := context.Background()
	var failing atomic.Bool
	var rx, local received
	srv := httptest.NewServer(rx.handler(func(int) int {
		if failing.Load() {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	}))
	defer srv.Close()
	localSrv := httptest.NewServer(local.handler(func(int) int { return http.StatusOK }))
	defer localSrv.Close()
	res, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "acme", Name: ptr("Acme")})
	must(t, "create partner", res, err)

	var session strings.Builder
	hidden := []string{"--admin-url", dev.adminURL, "--data-dir", dev.dataDir}
	// hs runs a command of the session and records it and its output.
	hs := func(args ...string) string {
		t.Helper()
		extra := hidden
		if args[0] == "trigger" {
			extra = []string{"--database-url", db.URL}
		}
		status, stdout, stderr := cli(t, append(args, extra...)...)
		if status != 0 {
			t.Fatalf("hookstream %s: status %d\n%s%s", strings.Join(args, " "), status, stdout, stderr)
		}
		fmt.Fprintf(&session, "$ hookstream %s\n%s", quoteArgs(args), stdout)
		return stdout
	}
	comment := func(s string) { fmt.Fprintf(&session, "\n# %s\n", s) }

	comment("an endpoint for the receiver on port 9000")
	out := hs("endpoints", "create", "--url", srv.URL+"/hooks", "--events", "*")
	eid := regexp.MustCompile(`(?m)^id\s+(ep_\w+)`).FindStringSubmatch(out)
	if eid == nil {
		t.Fatalf("endpoints create printed no id:\n%s", out)
	}
	time.Sleep(500 * time.Millisecond) // the endpoint record reaches the views before the events
	comment("an event, delivered")
	hs("trigger", "customer.created", "--partner", "acme")
	waitDeliveries(t, dev, "acme", eid[1], adminclient.DeliveryStateSucceeded, 1)
	hs("deliveries", "list", eid[1])

	comment("the receiver answers 500 for a while: two deliveries fail")
	failing.Store(true)
	hs("trigger", "balance.low")
	hs("trigger", "usage.finalized")
	waitDeliveries(t, dev, "acme", eid[1], adminclient.DeliveryStateFailed, 2)
	failing.Store(false)
	comment("the receiver is back: replay what failed in the last 10 minutes")
	hs("replay", "--endpoint", eid[1], "--since", "10m", "--state", "failed")
	rx.waitFor(t, 1+2*2+2, 60*time.Second)

	comment("no endpoint needed: listen forwards the partner's events to a local URL")
	lctx, stop := context.WithCancel(ctx)
	var w testenv.Buffer
	done := make(chan int)
	largs := []string{"listen", "--forward-to", localSrv.URL + "/webhooks", "--after", "now"}
	go func() { done <- exitStatus(run(lctx, append(largs, hidden...), &w), &w) }()
	waitOutput(t, &w, "connected", stop)
	id := strings.TrimSpace(capture(t, "trigger", "customer.updated", "--database-url", db.URL))
	waitOutput(t, &w, id, stop)
	local.waitFor(t, 1, 30*time.Second)
	stop()
	if status := <-done; status != 0 {
		t.Fatalf("listen: status %d\n%s", status, w.String())
	}
	fmt.Fprintf(&session, "$ hookstream %s\n%s", quoteArgs(largs), strings.Replace(w.String(), "Stopped;", "^C\nStopped;", 1))

	got := transcriptHead + "```console\n" + maskTranscript(strings.TrimPrefix(session.String(), "\n")) + "```\n"
	if os.Getenv("HOOKSTREAM_UPDATE_TRANSCRIPT") != "" {
		if err := os.WriteFile(transcriptFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(transcriptFile)
	if err != nil {
		t.Fatalf("%v: run with HOOKSTREAM_UPDATE_TRANSCRIPT=1 to write it", err)
	}
	if string(want) != got {
		t.Fatalf("docs/cli-transcript.md differs from the session's output (HOOKSTREAM_UPDATE_TRANSCRIPT=1 rewrites it):\n%s", got)
	}
}

// capture runs a command outside the transcript and returns its output.
func capture(t *testing.T, args ...string) string {
	t.Helper()
	status, stdout, stderr := cli(t, args...)
	if status != 0 {
		t.Fatalf("hookstream %s: status %d\n%s%s", strings.Join(args, " "), status, stdout, stderr)
	}
	return stdout
}

func waitOutput(t *testing.T, w *testenv.Buffer, want string, stop func()) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(w.String(), want); {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("no %q in 30s:\n%s", want, w.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "*? ") {
			a = "'" + a + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

var transcriptID = regexp.MustCompile(`\b(evt|ep|dlv|rpl|whsk|whsec)_[0-9A-Za-z+/=]{8,}`)

var transcriptMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`http://127\.0\.0\.1:\d+/hooks`), "http://127.0.0.1:9000/hooks"},
	{regexp.MustCompile(`http://127\.0\.0\.1:\d+/webhooks`), "http://localhost:3000/webhooks"},
	{regexp.MustCompile(`resume with --after \S+`), "resume with --after <cursor>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "YYYY-MM-DDThh:mm:ssZ"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`), "hh:mm:ss"},
	{regexp.MustCompile(`\b\d+\.\dms\b`), "n.nms"},
}

// maskTranscript masks what changes from run to run, and keeps of each run of replay progress
// lines the last one only.
func maskTranscript(s string) string {
	progress := regexp.MustCompile(`^\s*\d+ %  `)
	lines := strings.Split(s, "\n")
	var kept []string
	for i, line := range lines {
		if progress.MatchString(line) && i+1 < len(lines) && progress.MatchString(lines[i+1]) {
			continue
		}
		kept = append(kept, line)
	}
	s = strings.Join(kept, "\n")
	// Ids and secrets keep their width, so that the tables stay aligned.
	s = transcriptID.ReplaceAllStringFunc(s, func(id string) string {
		prefix, body, _ := strings.Cut(id, "_")
		return prefix + "_" + strings.Repeat("x", len(body))
	})
	for _, m := range transcriptMasks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return s
}
