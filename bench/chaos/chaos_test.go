package main

import (
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/eventtype"
	"github.com/hookstream/hookstream/internal/ledger"
	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// The plan kills every kind at least twice, the broker and PostgreSQL once each, all inside
// 5 %–80 % of the run, in time order.
func TestPlanFaults(t *testing.T) {
	for _, d := range []time.Duration{time.Minute, 5 * time.Minute} {
		kills := max(12, int(d/(8*time.Second)))
		plan := planFaults(d, kills, rand.New(rand.NewPCG(1, 2)))
		count := map[string]int{}
		for i, f := range plan {
			count[f.kind]++
			if f.at < d/20 || f.at > d*80/100 {
				t.Errorf("%s: fault %d (%s) at %s, outside 5%%–80%%", d, i, f.kind, f.at)
			}
			if i > 0 && f.at < plan[i-1].at {
				t.Errorf("%s: plan not in time order at %d", d, i)
			}
		}
		for _, k := range kinds {
			if count[k] < 2 {
				t.Errorf("%s: %s killed %d times, want at least 2", d, k, count[k])
			}
		}
		if count[faultBroker] != 1 || count[faultPostgres] != 1 || len(plan) != kills+2 {
			t.Errorf("%s: plan %v, want %d kills, one broker and one PostgreSQL fault", d, count, kills)
		}
	}
}

// The load's events are valid catalog events, and with the topology an event reaches about 3
// endpoints on average (the 410 endpoint counted, as before it is disabled).
func TestLoadAndTopology(t *testing.T) {
	catalog, err := eventcatalog.New()
	if err != nil {
		t.Fatal(err)
	}
	src, err := newEventSource(7)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	reached := 0
	for i := range int64(n) {
		ev := src.event(i + 1)
		if i < 100 {
			if err := catalog.CheckEvent(ev); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		for _, ep := range topology {
			if ep.partner == ev.PartnerID && eventtype.MatchesAny(ep.types, ev.Type) {
				reached++
			}
		}
	}
	if avg := float64(reached) / n; avg < 2.8 || avg > 3.2 {
		t.Fatalf("average fanout %.2f, want about 3", avg)
	}
}

// A normal receiver fails the configured share, some of it by holding; the rate-limited one
// adds a tenth of 429s with Retry-After; the gone one answers 410 to all.
func TestResponder(t *testing.T) {
	f := &failures{share: 0.1, timeouts: 0.1, hold: time.Second, rng: rand.New(rand.NewPCG(3, 4))}
	count := func(behave string) map[int]int {
		out := map[int]int{}
		r := f.responder(behave)
		for range 20000 {
			a := r(nil)
			out[a.Status]++
			if a.Status == http.StatusTooManyRequests && a.RetryAfter == "" {
				t.Fatal("429 without Retry-After")
			}
			if a.Status == http.StatusServiceUnavailable && a.Hold == 0 {
				t.Fatal("a timeout that does not hold")
			}
		}
		return out
	}
	near := func(got, want int) bool { return got > want*8/10 && got < want*12/10 }
	if c := count(behaveNormal); !near(c[500], 1800) || !near(c[503], 200) || c[429] != 0 {
		t.Errorf("normal: %v", c)
	}
	if c := count(behaveRateLimited); !near(c[429], 2000) || !near(c[500], 1800) {
		t.Errorf("rate-limited: %v", c)
	}
	if c := count(behaveGone); c[410] != 20000 {
		t.Errorf("gone: %v", c)
	}
}

// The run fails for each broken promise it measured, and only for those.
func TestJudge(t *testing.T) {
	o := options{faults: true, drainBound: time.Minute}
	var faults []faultRecord
	for _, k := range kinds {
		faults = append(faults, faultRecord{kind: k}, faultRecord{kind: k})
	}
	faults = append(faults, faultRecord{kind: faultBroker, back: 6 * time.Second}, faultRecord{kind: faultPostgres, back: 7 * time.Second})
	clean := func() *report {
		return &report{o: o, faults: slices.Clone(faults), goneStatus: "disabled", drain: 5 * time.Second, ledger: &ledger.Report{MaxUnrecorded: 10}}
	}
	r := clean()
	if r.judge(); len(r.failures) != 0 {
		t.Fatalf("a clean run failed: %q", r.failures)
	}
	for name, spoil := range map[string]func(r *report){
		"410 endpoint active": func(r *report) { r.goneStatus = "active" },
		"slow drain":          func(r *report) { r.drain = 2 * time.Minute },
		"not drained":         func(r *report) { r.left, r.drain = 3, -1 },
		"history not settled": func(r *report) { r.settle = "not settled" },
		"a kind killed once":  func(r *report) { r.faults = r.faults[1:] },
		"a kill that failed":  func(r *report) { r.faults[0].err = "no such process" },
		"no broker outage": func(r *report) {
			r.faults = slices.DeleteFunc(r.faults, func(f faultRecord) bool { return f.kind == faultBroker })
		},
		"postgres not back":    func(r *report) { r.faults[len(r.faults)-1].back = -1 },
		"missing":              func(r *report) { r.ledger.Missing = 1 },
		"unrecorded, no kill":  func(r *report) { r.ledger.Unrecorded = 1 },
		"unrecorded past cap":  func(r *report) { r.ledger.Unrecorded, r.ledger.UnrecordedAtKill = 11, 11 },
		"contradicting states": func(r *report) { r.ledger.Contradictions = 1 },
		"deadlock logged": func(r *report) {
			r.deadlocks = []harness.LogMatch{{Path: "recorder-1.log", Lines: 2, First: "deadlock detected (SQLSTATE 40P01)"}}
		},
	} {
		r := clean()
		spoil(r)
		if r.judge(); len(r.failures) != 1 {
			t.Errorf("%s: failures %q, want one", name, r.failures)
		}
	}
}

// Sender kills and broker outages share one budget of duplicates, each bringing its bound (the
// ledger counts a duplicate against the first of them whose window meets it, and their windows
// overlap); a kill of another kind may cost none.
func TestDuplicateBudget(t *testing.T) {
	done := map[string]int{"sender": 2, faultBroker: 1, "retry": 2}
	cases := []struct {
		byKill map[string]int
		fails  bool
	}{
		{map[string]int{faultBroker: 2058}, false}, // two sender kills inside the outage's window
		{map[string]int{"sender": 1000, faultBroker: 3000}, false},
		{map[string]int{"sender": 1000, faultBroker: 3801}, true}, // over 3 × 1,600
		{map[string]int{"retry": 1}, true},
	}
	for _, c := range cases {
		r := &report{inFlight: 576, ledger: &ledger.Report{DuplicatesByKill: c.byKill}}
		r.judgeDuplicates(done)
		if got := len(r.failures) > 0; got != c.fails {
			t.Errorf("%v: failed %v (%q), want %v", c.byKill, got, r.failures, c.fails)
		}
	}
	// What a sender finished since its last commit is sent again too: at most what the
	// receivers accepted in the run's busiest commit interval, per outage.
	r := &report{inFlight: 576, finishedPerCommit: 340, ledger: &ledger.Report{DuplicatesByKill: map[string]int{"sender": 3881, faultBroker: 1900}}}
	if r.judgeDuplicates(done); len(r.failures) > 0 {
		t.Errorf("3 × (1,600 + 340) = 5,820 allowed, 5,781 failed: %q", r.failures)
	}
}

// The busiest window counts the accepted receipts (verified, 2xx) of the densest span, its
// end excluded.
func TestBusiestWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	at := func(ms int, status int, verified bool) ledger.Receipt {
		return ledger.Receipt{ReceivedAt: t0.Add(time.Duration(ms) * time.Millisecond), Status: status, Verified: verified}
	}
	receipts := []ledger.Receipt{
		at(250, 200, true), at(0, 200, true), at(40, 204, true), at(99, 200, true), at(100, 200, true),
		at(120, 500, true), at(130, 200, false), at(180, 200, true), at(199, 200, true),
	}
	if got := busiestWindow(receipts, 100*time.Millisecond); got != 3 {
		t.Errorf("busiest 100 ms: %d accepted, want 3 (0, 40, 99; or 100, 180, 199)", got)
	}
	if got := busiestWindow(nil, 100*time.Millisecond); got != 0 {
		t.Errorf("no receipts: %d, want 0", got)
	}
}

// The run's deadlock scan reads the processes' logs and the run's own PostgreSQL server log,
// which names every deadlock PostgreSQL detected, whether or not a process logged it.
func TestDeadlocksInReadsProcessAndServerLogs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("logs/recorder-1.log", `{"msg":"started"}`+"\n")
	write("pg-5433.log", "2026-12-05 06:00:00.000 UTC [42] LOG:  database system is ready to accept connections\n")
	write("receipts.jsonl", "deadlock detected\n") // not a log
	if got, err := deadlocksIn(dir); err != nil || len(got) != 0 {
		t.Fatalf("clean logs: %v, %v; want none", got, err)
	}
	write("pg-5433.log", "2026-12-05 06:00:01.000 UTC [43] ERROR:  deadlock detected\n"+
		"2026-12-05 06:00:01.000 UTC [43] DETAIL:  Process 43 waits for ShareLock on transaction 9; blocked by process 44.\n")
	write("logs/recorder-2.log", `{"msg":"batch not stored; trying it again","err":"ERROR: deadlock detected (SQLSTATE 40P01)"}`+"\n")
	got, err := deadlocksIn(dir)
	if err != nil || len(got) != 2 || filepath.Base(got[0].Path) != "recorder-2.log" || filepath.Base(got[1].Path) != "pg-5433.log" ||
		got[1].Lines != 1 || got[1].First != "2026-12-05 06:00:01.000 UTC [43] ERROR:  deadlock detected" {
		t.Fatalf("deadlocks %v, %v; want recorder-2.log and the server log's line", got, err)
	}
}
