package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// R24, design.md section 12: `hookstream replay` over the range of deliveries that failed (a receiver answering
// 500) creates a replay job and follows it: with output not a terminal, plain progress lines end
// at 100 %, the final counts are the ones GET of the job reports, the receiver gets each failed
// event again, and the succeeded delivery is not replayed. A job that fails exits 1; a command
// line without --since exits 2.
func TestReplayCommand(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	// One retry a second after the first attempt: a delivery answered 500 fails in about 1 s.
	dev := startDev(t, db, "--retry-schedule", "1s", "--limit-replay-deliveries", "2")
	ctx := context.Background()
	var failing atomic.Bool
	var rx received
	srv := httptest.NewServer(rx.handler(func(int) int {
		if failing.Load() {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	}))
	defer srv.Close()
	eid, _ := dev.createEndpoint(t, "pr", srv.URL+"/hooks", "*")
	time.Sleep(500 * time.Millisecond) // the endpoint record reaches the views before the events

	hs := func(args ...string) (int, string, string) {
		t.Helper()
		return cli(t, append(args, "--admin-url", dev.adminURL, "--data-dir", dev.dataDir)...)
	}
	if status, _, stderr := hs("replay", "--endpoint", eid); status != 2 || !strings.Contains(stderr, "want --endpoint and --since") {
		t.Fatalf("replay without --since: status %d\n%s", status, stderr)
	}
	if status, _, stderr := hs("replay", "--endpoint", eid, "--since", "yesterday"); status != 2 || !strings.Contains(stderr, "--since") {
		t.Fatalf("replay --since yesterday: status %d\n%s", status, stderr)
	}

	start := time.Now().Add(-time.Second)
	succeeded := appendEvent(t, db, "pr", "customer.created")
	rx.waitFor(t, 1, 60*time.Second)
	failing.Store(true)
	failed := map[string]bool{}
	for range 2 {
		failed[appendEvent(t, db, "pr", "customer.updated")] = true
	}
	waitDeliveries(t, dev, "pr", eid, adminclient.DeliveryStateFailed, len(failed))
	failing.Store(false)
	before := len(rx.all())

	status, stdout, stderr := hs("replay", "--endpoint", eid, "--since", start.UTC().Format(time.RFC3339Nano), "--until", "0s", "--state", "failed")
	if status != 0 {
		t.Fatalf("replay: status %d\nstdout:\n%s\nstderr:\n%s", status, stdout, stderr)
	}
	m := regexp.MustCompile(`replay job (rpl_\w+) queued`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("replay printed no job id:\n%s", stdout)
	}
	job, err := dev.api.GetReplayJobWithResponse(ctx, "pr", m[1])
	must(t, "get replay job", job, err)
	j := job.JSON200
	if j.State != adminclient.ReplayJobStateSucceeded || j.Total != 2 || j.Done != 2 || j.Failed != 0 {
		t.Fatalf("the job as the API reports it: %+v", j)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if strings.Contains(stdout, "\r") || len(lines) < 3 {
		t.Fatalf("replay output not a terminal: want plain lines:\n%q", stdout)
	}
	if !hasRow(lines[len(lines)-2], "100", "%", "2/2", "replayed,", "0", "failed", "succeeded") {
		t.Fatalf("the last progress line is not at 100 %% with the job's counts:\n%s", stdout)
	}
	if want := "replay job " + j.ID + " succeeded: total 2, done 2, failed 0"; lines[len(lines)-1] != want {
		t.Fatalf("replay ends with %q, want %q", lines[len(lines)-1], want)
	}
	msgs := rx.waitFor(t, before+len(failed), 60*time.Second)
	time.Sleep(time.Second) // nothing more arrives: the succeeded delivery is not replayed
	for _, msg := range rx.all()[before:] {
		if id := msg.header.Get("webhook-id"); !failed[id] || id == succeeded {
			t.Fatalf("replayed %s, which had not failed", id)
		}
	}
	if len(rx.all()) != len(msgs) {
		t.Fatalf("the receiver got %d replays, want %d", len(rx.all())-before, len(failed))
	}

	// --output json prints the job as the API answers it at its end.
	status, stdout, stderr = hs("replay", "--endpoint", eid, "--since", "10m", "--state", "failed", "--output", "json")
	var final adminclient.ReplayJob
	if err := json.Unmarshal([]byte(stdout), &final); status != 0 || err != nil || final.State != adminclient.ReplayJobStateSucceeded {
		t.Fatalf("replay --output json: status %d, %v\n%s\n%s", status, err, stdout, stderr)
	}

	// A log job through the limit of 2 deliveries (3 events in the range) fails: exit 1, counts shown.
	status, stdout, stderr = hs("replay", "--endpoint", eid, "--since", start.UTC().Format(time.RFC3339Nano), "--source", "log")
	if status != 1 || !strings.Contains(stdout, " failed: total ") || !strings.Contains(stderr, "the replay job failed") {
		t.Fatalf("replay over the limit: status %d\nstdout:\n%s\nstderr:\n%s", status, stdout, stderr)
	}
}

// waitDeliveries waits until n of the endpoint's deliveries are in state.
func waitDeliveries(t *testing.T, dev *devInstance, partner, eid string, state adminclient.DeliveryState, n int) {
	t.Helper()
	st := adminclient.ListDeliveriesParamsState(state)
	for deadline := time.Now().Add(60 * time.Second); ; {
		res, err := dev.api.ListDeliveriesWithResponse(context.Background(), partner, eid, &adminclient.ListDeliveriesParams{State: &st})
		must(t, "list deliveries", res, err)
		if len(res.JSON200.Data) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries %s after 60s, want %d", len(res.JSON200.Data), state, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// On a terminal the progress is one line redrawn in place (\r), its bar full at the end, and the
// line ended so the final counts start on their own line.
func TestReplayCommandProgressOnTerminal(t *testing.T) {
	var b strings.Builder
	p := replayProgress{out: &b, terminal: true}
	now := time.Now()
	p.show(&adminclient.ReplayJob{State: adminclient.ReplayJobStateRunning, Total: 4, Done: 1}, false, now)
	p.show(&adminclient.ReplayJob{State: adminclient.ReplayJobStateSucceeded, Total: 4, Done: 3, Failed: 1}, true, now)
	out := b.String()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") || strings.Count(out, "\r") != 2 {
		t.Fatalf("want two redraws of one line, then its end: %q", out)
	}
	last := out[strings.LastIndex(out, "\r")+1:]
	if !strings.HasPrefix(last, strings.Repeat("█", 30)+" 100 %  3/4 replayed, 1 failed  succeeded") {
		t.Fatalf("the last drawing: %q", last)
	}
	if first := out[1:strings.LastIndex(out, "\r")]; !strings.Contains(first, " 25 %  1/4") || !strings.Contains(first, "░") {
		t.Fatalf("the first drawing: %q", first)
	}
}
