package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/hookstream/hookstream/internal/ledger"
	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/sender"
)

// inFlightCap bounds the requests one sender can leave out of the history: max_in_flight (64,
// the default) per endpoint in flight, for the run's 9 endpoints, and the 1,024 answered ones
// whose attempt records Kafka may not have acknowledged yet (the sender's maxUnrecorded). A
// sender killed mid-request, or while the broker is away, leaves at most that many requests
// its history never hears of.
const inFlightCap = 64*9 + unacknowledgedCap

// unacknowledgedCap is the sender's maxUnrecorded: the answered requests whose attempt records
// Kafka has not acknowledged yet, which a killed sender's successor sends again.
const unacknowledgedCap = 1024

// report is what the run measured and judged.
type report struct {
	o        options
	faults   []faultRecord
	exits    map[string][]exit
	commits  *harness.CommitLog
	loadEnd  time.Time
	loadFor  time.Duration
	expected int // deliveries the drain waited for
	left     int // of them not received when it gave up
	// drain is from the load's stop to the last expected delivery's receipt; negative: never.
	drain     time.Duration
	drainedAt time.Time
	settle    string              // why the history did not settle, if it did not
	lags      map[string][]string // consumer groups still behind when the drain gave up
	dumps     []string            // logs holding goroutine dumps taken then
	deadlocks []harness.LogMatch  // logs saying PostgreSQL detected a deadlock
	endpoints []endpointRow       // the drain by endpoint
	// latency of healthy endpoints (commit → first acceptance, ms) by phase: before, during and
	// after the faults.
	latency    map[string][]float64
	faultSpan  [2]time.Time
	goneStatus string
	ledger     *ledger.Report
	// inFlight is the endpoints' max_in_flight summed: the most requests a sender has in flight.
	// With the answered ones not yet acknowledged (unacknowledgedCap) and those finished since
	// the sender's last commit (finishedPerCommit) it bounds the duplicate receipts one sender
	// kill or broker outage may cost (duplicateBound).
	inFlight int
	// finishedPerCommit is the most requests the receivers accepted within one of the sender's
	// commit intervals anywhere in the run (busiestWindow): the most a sender can have finished
	// since its last commit, which its successor sends again.
	finishedPerCommit int
	failures          []string

	receiptsFile, databaseURL, dir string
}

// phases of the latency figures.
var phases = []string{"before faults", "during faults", "after faults"}

// latencies sorts the healthy endpoints' commit-to-receipt latencies by the phase of their
// commit: before the first fault, until the last fault's recovery, after it.
func (r *report) latencies(eps []*endpoint) {
	r.latency = map[string][]float64{}
	r.faultSpan = faultSpan(r.faults, r.loadEnd)
	if r.commits == nil {
		return
	}
	for _, ep := range eps {
		if !ep.healthy() {
			continue
		}
		got, _ := ep.rx.Endpoint(0).Snapshot()
		for id, rc := range got {
			c, ok := r.commits.ByID[id]
			if !ok {
				continue
			}
			phase := phases[1]
			switch {
			case c.End.Before(r.faultSpan[0]):
				phase = phases[0]
			case c.End.After(r.faultSpan[1]):
				phase = phases[2]
			}
			r.latency[phase] = append(r.latency[phase], float64(rc.First.Sub(c.End))/float64(time.Millisecond))
		}
	}
	for _, v := range r.latency {
		slices.Sort(v)
	}
}

// faultSpan is from the first fault to the last one's recovery (its bounded wait when it never
// recovered).
func faultSpan(faults []faultRecord, loadEnd time.Time) [2]time.Time {
	if len(faults) == 0 {
		return [2]time.Time{loadEnd, loadEnd}
	}
	span := [2]time.Time{faults[0].at, faults[0].at}
	for _, f := range faults {
		end := f.at.Add(f.back)
		if f.back < 0 {
			end = f.at.Add(2 * time.Minute)
		}
		if end.After(span[1]) {
			span[1] = end
		}
	}
	return span
}

// drainTime sets drain from the receipts of the expected deliveries.
func (r *report) drainTime(want map[*endpoint][]string) {
	r.drain = -1
	var last time.Time
	for ep, ids := range want {
		got, _ := ep.rx.Endpoint(0).Snapshot()
		row := endpointRow{ep: ep, expected: len(ids)}
		for _, id := range ids {
			rc, ok := got[id]
			if !ok {
				row.missing++
				continue
			}
			if rc.First.After(row.last) {
				row.last = rc.First
			}
		}
		if row.last.After(last) {
			last = row.last
		}
		r.endpoints = append(r.endpoints, row)
	}
	slices.SortFunc(r.endpoints, func(a, b endpointRow) int { return strings.Compare(a.ep.id, b.ep.id) })
	if r.left == 0 {
		r.drain = max(0, last.Sub(r.loadEnd))
	}
}

// endpointRow is one endpoint's part of the drain.
type endpointRow struct {
	ep                *endpoint
	expected, missing int
	last              time.Time // its last first acceptance
}

// outages are the times a sender or the broker was down (killed until ready again, or exited
// by itself until restarted): what classifies duplicates and unrecorded requests in the ledger.
func (r *report) outages() []ledger.Outage {
	var out []ledger.Outage
	for _, f := range r.faults {
		if f.kind == "sender" || f.kind == faultBroker {
			back := f.back
			if back < 0 {
				back = 2 * time.Minute
			}
			out = append(out, ledger.Outage{Kind: f.kind, From: f.at, To: f.at.Add(back)})
		}
	}
	for id, exits := range r.exits {
		if kindOf(id) == "sender" {
			for _, e := range exits {
				out = append(out, ledger.Outage{Kind: "sender exit", From: e.at, To: e.at.Add(10 * time.Second)})
			}
		}
	}
	return out
}

// kills are the faults other than a sender's or the broker's (a component of another kind
// killed, PostgreSQL down): the ledger attributes to them only duplicates no outage explains.
func (r *report) kills() []ledger.Outage {
	var out []ledger.Outage
	for _, f := range r.faults {
		if f.kind == "sender" || f.kind == faultBroker {
			continue
		}
		back := f.back
		if back < 0 {
			back = 2 * time.Minute
		}
		out = append(out, ledger.Outage{Kind: f.kind, From: f.at, To: f.at.Add(back)})
	}
	return out
}

// duplicateBound is the most duplicate receipts one sender kill or broker outage may cost: the
// requests in flight, the answered ones whose attempt records Kafka had not acknowledged, and
// those finished since the sender's last commit (docs/reliability.md, Limits: the duplicates).
func (r *report) duplicateBound() int { return r.inFlight + unacknowledgedCap + r.finishedPerCommit }

// senderCommitInterval is how often a sender commits what it finished: the run's senders keep
// the default.
var senderCommitInterval = sender.DefaultConfig().CommitInterval

// busiestWindow is the most accepted receipts within any span of length w: a sliding window over
// their receipt times.
func busiestWindow(receipts []ledger.Receipt, w time.Duration) int {
	var at []time.Time
	for _, rc := range receipts {
		if rc.Accepted() {
			at = append(at, rc.ReceivedAt)
		}
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	most, first := 0, 0
	for i, t := range at {
		for t.Sub(at[first]) >= w {
			first++
		}
		most = max(most, i-first+1)
	}
	return most
}

// judgeDuplicates fails the run when kills cost more duplicate receipts than they must
// (docs/reliability.md, Limits: the duplicates): sender kills and broker outages at most duplicateBound
// each, together, and a kill of any other kind none, since fanout, cdc, retry and recorder are
// transactional and admin sends nothing.
func (r *report) judgeDuplicates(done map[string]int) {
	if r.ledger == nil {
		return
	}
	byKill := r.ledger.DuplicatesByKill
	senderDown := done["sender"]
	for id, exits := range r.exits {
		if kindOf(id) == "sender" {
			senderDown += len(exits) // only senders' exits are outages (outages)
		}
	}
	// One budget for both: their windows overlap (a sender killed while the broker is away, or
	// just after), and the ledger gives a duplicate to the first outage whose window meets it,
	// so which of them a duplicate is counted against says nothing of which caused it.
	bound, outages := r.duplicateBound(), senderDown+done[faultBroker]
	if d := byKill["sender"] + byKill["sender exit"] + byKill[faultBroker]; d > max(outages, 1)*bound {
		r.failures = append(r.failures, fmt.Sprintf("%d duplicate receipts after %d sender kills or exits and %d broker outages, more than %d each (in flight, unacknowledged and finished since the last commit)",
			d, senderDown, done[faultBroker], bound))
	}
	for _, k := range slices.Sorted(maps.Keys(byKill)) {
		if k != "sender" && k != "sender exit" && k != faultBroker && byKill[k] > 0 {
			r.failures = append(r.failures, fmt.Sprintf("%d duplicate receipts after kills of %s, which must cost none", byKill[k], k))
		}
	}
}

// unrecordedBound is the most requests the history may miss: the in-flight cap per outage.
func (r *report) unrecordedBound() int { return len(r.outages()) * inFlightCap }

// judge lists every broken promise of the run.
func (r *report) judge() {
	if r.ledger != nil {
		r.failures = append(r.failures, r.ledger.Failures()...)
		if r.ledger.UnrecordedAtKill < r.ledger.Unrecorded {
			r.failures = append(r.failures, fmt.Sprintf("requests absent from the history with no sender or broker kill near them: %d",
				r.ledger.Unrecorded-r.ledger.UnrecordedAtKill))
		}
	}
	if r.goneStatus != "disabled" {
		r.failures = append(r.failures, fmt.Sprintf("the 410 endpoint is %q, want disabled", r.goneStatus))
	}
	switch {
	case r.left > 0:
		r.failures = append(r.failures, fmt.Sprintf("not drained: %d of %d expected deliveries not received %s after the load stopped",
			r.left, r.expected, r.drainedAt.Sub(r.loadEnd).Round(time.Second)))
	case r.drain > r.o.drainBound:
		r.failures = append(r.failures, fmt.Sprintf("drained in %s, more than %s after the load stopped", r.drain.Round(100*time.Millisecond), r.o.drainBound))
	}
	if r.settle != "" {
		r.failures = append(r.failures, r.settle)
	}
	if len(r.deadlocks) > 0 {
		lines := 0
		for _, m := range r.deadlocks {
			lines += m.Lines
		}
		r.failures = append(r.failures, fmt.Sprintf("%d log lines say PostgreSQL detected a deadlock (SQLSTATE 40P01), in %d logs: %s",
			lines, len(r.deadlocks), r.deadlocks[0]))
	}
	if !r.o.faults {
		return
	}
	// A fault counts only if it happened: a kill that failed, or an outage whose service was not
	// taken down or not started again, proves nothing about the promises above.
	done := map[string]int{}
	for _, f := range r.faults {
		if f.err == "" && (f.back >= 0 || !slices.Contains(infraKinds, f.kind)) {
			done[f.kind]++
		}
	}
	r.judgeDuplicates(done)
	for _, k := range kinds {
		if done[k] < 2 {
			r.failures = append(r.failures, fmt.Sprintf("%s was killed %d times, want at least 2", k, done[k]))
		}
	}
	for _, k := range infraKinds {
		if done[k] < 1 {
			r.failures = append(r.failures, fmt.Sprintf("the planned %s outage did not happen (taken down and started again): %d of 1", k, done[k]))
		}
	}
}

// gitCommit names the checkout's commit, and says so when the tree has uncommitted changes.
func gitCommit(repo string) string {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		commit += " + uncommitted changes"
	}
	return commit
}

// print writes the report.
func (r *report) print(w io.Writer) {
	baseline := ""
	if !r.o.faults {
		baseline = " (baseline: no faults)"
	}
	fmt.Fprintf(w, "\n== chaos report%s: %s at %d events/s, seed %d, %d partners, %d endpoints, retry schedule %s, request timeout %s\n",
		baseline, r.o.duration, r.o.rate, r.o.seed, len(partners), len(topology), r.o.schedule, r.o.requestTimeout)
	fmt.Fprintf(w, "commit %s, %s\n", gitCommit(r.o.repo), time.Now().UTC().Format(time.RFC3339))
	r.printFaults(w)
	if r.commits != nil {
		fmt.Fprintf(w, "load: %d events committed in %s (%.0f/s), %d transactions failed (PostgreSQL down)\n",
			len(r.commits.ByID), r.loadFor.Round(100*time.Millisecond), r.commits.Rate(), r.commits.Failed)
	}
	if r.expected > 0 {
		drain := "not drained"
		if r.drain >= 0 {
			drain = fmt.Sprintf("%.1f s after the load stopped (bound %s)", r.drain.Seconds(), r.o.drainBound)
		}
		fmt.Fprintf(w, "deliveries: %d expected, %d not received; drain %s\n", r.expected, r.left, drain)
	}
	for _, row := range r.endpoints {
		last := "none received"
		if !row.last.IsZero() {
			last = fmt.Sprintf("the last %+.1f s after the load stopped", row.last.Sub(r.loadEnd).Seconds())
		}
		fmt.Fprintf(w, "  %-55s %s: %7d expected, %6d not received, %s\n", row.ep.String(),
			strings.Join(row.ep.types, ","), row.expected, row.missing, last)
	}
	for _, g := range slices.Sorted(maps.Keys(r.lags)) {
		fmt.Fprintf(w, "  still behind: %s: %s\n", g, strings.Join(r.lags[g], ", "))
	}
	if len(r.dumps) > 0 {
		fmt.Fprintf(w, "  goroutine dumps (SIGQUIT) taken then, in: %s\n", strings.Join(r.dumps, ", "))
	}
	for _, m := range r.deadlocks {
		fmt.Fprintf(w, "deadlock detected: %s\n", m)
	}
	r.printLatency(w)
	if r.goneStatus != "" {
		fmt.Fprintf(w, "410 endpoint: %s\n", r.goneStatus)
	}
	if r.ledger != nil {
		fmt.Fprintln(w, "ledger:")
		r.ledger.Print(w)
		r.printDuplicates(w)
	}
	if r.dir != "" {
		fmt.Fprintf(w, "logs: %s/logs; receipts: %s\n  (again: deploy/local/pg.sh up with HOOKSTREAM_DATA_DIR=%s PG_PORT=<port of %s>, then\n   hookstream verify-ledger -database-url '%s' -receipts %s -receipts-complete)\n",
			r.dir, r.receiptsFile, r.dir, r.databaseURL, r.databaseURL, r.receiptsFile)
	}
}

// printFaults writes the kills per kind, the infrastructure faults and the unplanned exits.
func (r *report) printFaults(w io.Writer) {
	kills, active, slowest := map[string]int{}, 0, map[string]time.Duration{}
	var takeovers []string
	for _, f := range r.faults {
		kills[f.kind]++
		if f.active {
			active++
			takeovers = append(takeovers, formatBack(f.takeover))
		}
		if prev, seen := slowest[f.kind]; !seen || (prev >= 0 && (f.back < 0 || f.back > prev)) {
			slowest[f.kind] = f.back // a replica that never came back stays the slowest
		}
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, kills[k]))
	}
	fmt.Fprintf(w, "kills: %s (cdc: %d of them the active one, streaming again after %s)\n", strings.Join(parts, ", "), active, strings.Join(takeovers, ", "))
	fmt.Fprintf(w, "  every kind answered /readyz again within: %s\n", formatBacks(slowest))
	for _, f := range r.faults {
		if f.kind == faultBroker || f.kind == faultPostgres || f.err != "" || f.back < 0 {
			fmt.Fprintf(w, "  %s %s at +%.1fs: back after %s %s\n", f.kind, f.target, f.at.Sub(r.loadEnd.Add(-r.loadFor)).Seconds(),
				formatBack(f.back), f.err)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.exits)) {
		exits := r.exits[id]
		fmt.Fprintf(w, "  unplanned exits of %s: %d, the first at +%.1fs (%s):\n%s\n", id, len(exits),
			exits[0].at.Sub(r.loadEnd.Add(-r.loadFor)).Seconds(), exits[0].status, exits[0].tail)
	}
}

func formatBacks(m map[string]time.Duration) string {
	var parts []string
	for _, k := range kinds {
		if d, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", k, formatBack(d)))
		}
	}
	return strings.Join(parts, ", ")
}

func formatBack(d time.Duration) string {
	if d < 0 {
		return "never (bounded wait)"
	}
	return d.Round(100 * time.Millisecond).String()
}

// printLatency writes p50, p99 and max of each phase.
func (r *report) printLatency(w io.Writer) {
	if len(r.latency) == 0 {
		return
	}
	fmt.Fprintln(w, "commit → receipt, healthy endpoints (ms):")
	for _, p := range phases {
		v := r.latency[p]
		fmt.Fprintf(w, "  %-14s %8d deliveries  p50 %8.1f  p99 %8.1f  max %8.1f\n", p, len(v), pct(v, 50), pct(v, 99), pct(v, 100))
	}
}

// pct is the p-th percentile of sorted v by nearest rank; NaN when empty.
func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)]
}

// printDuplicates writes the duplicate receipts per kill of each kind beside the in-flight bound.
func (r *report) printDuplicates(w io.Writer) {
	kills := map[string]int{}
	for _, f := range r.faults {
		if f.err == "" {
			kills[f.kind]++
		}
	}
	for id, exits := range r.exits {
		if kindOf(id) == "sender" {
			kills["sender exit"] += len(exits)
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kills)) {
		d := r.ledger.DuplicatesByKill[k]
		parts = append(parts, fmt.Sprintf("%s %d in %d (%.0f each)", k, d, kills[k], float64(d)/float64(max(kills[k], 1))))
	}
	fmt.Fprintf(w, "duplicate receipts per kill, by kind: %s; bound %d per sender kill or broker outage (in flight, the endpoints' max_in_flight summed, %d; answered, unacknowledged, %d; finished since the last commit, the most accepted in %s, %d), 0 for other kinds\n",
		strings.Join(parts, ", "), r.duplicateBound(), r.inFlight, unacknowledgedCap, senderCommitInterval, r.finishedPerCommit)
}
