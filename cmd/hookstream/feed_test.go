package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// R32: `hookstream feed` against `hookstream dev` reads the partner's cursor feed in log
// order, filtered by type, a page at a time with the cursor to go on from; --output json prints
// the events as delivered, one a line; --follow keeps paging and shows an event committed after
// it started, and prints where to resume when interrupted. Another partner's events never show.
func TestFeedCommand(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	dev.createEndpoint(t, "pf", "http://127.0.0.1:1999/none", "customer.*")
	dev.createEndpoint(t, "other", "http://127.0.0.1:1999/none", "customer.*")
	hs := func(args ...string) string {
		t.Helper()
		args = append(args, "--admin-url", dev.adminURL, "--data-dir", dev.dataDir, "--partner", "pf")
		status, stdout, stderr := cli(t, args...)
		if status != 0 {
			t.Fatalf("hookstream %s: status %d\n%s%s", strings.Join(args, " "), status, stdout, stderr)
		}
		return stdout
	}
	ids := []string{
		appendEvent(t, db, "pf", "customer.created"),
		appendEvent(t, db, "pf", "usage.finalized"),
		appendEvent(t, db, "other", "usage.finalized"),
		appendEvent(t, db, "pf", "usage.finalized"),
	}
	var out string
	for deadline := time.Now().Add(30 * time.Second); ; {
		if out = hs("feed"); strings.Count(out, "\n") == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("feed: want pf's 3 events and the cursor:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, id := range []string{ids[0], ids[1], ids[3]} {
		if !hasRow(lines[i], "*", "*", id) {
			t.Fatalf("feed line %d: want event %s:\n%s", i, id, out)
		}
	}
	if !hasRow(lines[0], "*", "customer.created", ids[0], "customer/cus_42") || !strings.HasPrefix(lines[3], "next cursor: ") {
		t.Fatalf("feed:\n%s", out)
	}

	// One usage event a page: the cursor printed reads the next one, then none.
	first := strings.Split(strings.TrimSpace(hs("feed", "--types", "usage.*", "--limit", "1")), "\n")
	if len(first) != 2 || !hasRow(first[0], "*", "usage.finalized", ids[1]) || !strings.Contains(first[1], "(more: hookstream feed --after ") {
		t.Fatalf("feed --limit 1:\n%s", strings.Join(first, "\n"))
	}
	cursor := strings.Fields(first[1])[2]
	var ev struct {
		EventID   string `json:"event_id"`
		PartnerID string `json:"partner_id"`
	}
	var end struct {
		NextCursor string `json:"next_cursor"`
		HasMore    bool   `json:"has_more"`
	}
	next := strings.Split(strings.TrimSpace(hs("feed", "--types", "usage.*", "--after", cursor, "--output", "json")), "\n")
	if len(next) != 2 || json.Unmarshal([]byte(next[0]), &ev) != nil || ev.EventID != ids[3] || ev.PartnerID != "pf" ||
		json.Unmarshal([]byte(next[1]), &end) != nil || end.NextCursor == "" || end.HasMore {
		t.Fatalf("feed --after %s --output json:\n%s", cursor, strings.Join(next, "\n"))
	}

	// --follow from the end shows what is committed next, and on interruption where to resume.
	ctx, cancel := context.WithCancel(context.Background())
	var w testenv.Buffer
	done := make(chan int)
	go func() {
		done <- exitStatus(run(ctx, []string{"feed", "--follow", "--after", end.NextCursor, "--admin-url", dev.adminURL,
			"--data-dir", dev.dataDir, "--partner", "pf"}, &w), &w)
	}()
	later := appendEvent(t, db, "pf", "customer.updated")
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(w.String(), later); {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("feed --follow did not show %s:\n%s", later, w.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if status := <-done; status != 0 {
		t.Fatalf("feed --follow interrupted: status %d\n%s", status, w.String())
	}
	got := strings.Split(strings.TrimSpace(w.String()), "\n")
	if len(got) != 2 || !hasRow(got[0], "*", "customer.updated", later) || !strings.HasPrefix(got[1], "next cursor: ") {
		t.Fatalf("feed --follow:\n%s", w.String())
	}
}
