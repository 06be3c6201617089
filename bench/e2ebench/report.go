package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/benchenv"
)

// Figure names: the keys of result.fig. NaN means "not measured" and prints as n/a.
const (
	figDeliveries     = "deliveries"
	figRate           = "rate"       // deliveries/s
	figBareRatio      = "bare_ratio" // rate ÷ the bare loop's requests/s
	figCommitRate     = "commit_rate"
	figPGRatio        = "pg_ratio" // commit rate ÷ PostgreSQL's rate for the same transactions
	figMissing        = "missing"
	figDuplicates     = "duplicates"
	figBadSignatures  = "bad_signatures"
	figUnknown        = "unknown"
	figHistoryLag     = "history_lag" // s from the last receipt until the history holds every attempt
	figP50            = "p50"         // commit→receipt, ms
	figP95            = "p95"
	figP99            = "p99"
	figMax            = "max"
	figHopCDC         = "hop_cdc_" // + p50 / p99, ms
	figHopFanout      = "hop_fanout_"
	figHopSender      = "hop_sender_"
	figDeferrals      = "deferrals_" // + reason
	figFailedAttempts = "failed_attempts"
	figLimitChanges   = "limit_changes_" // + change: raised, slowed, failed
	figCPUHookstream  = "cpu_hookstream" // ms per delivery
	figCPUBroker      = "cpu_broker"
	figCPUPostgres    = "cpu_postgres"
	figCPUBench       = "cpu_bench"
	figCPUTotal       = "cpu_total"
	figCPUKind        = "cpu_kind_"   // + a process (cdc, ..., dev) or a pgKinds kind: ms per delivery
	figDownFor        = "down_for"    // d: s from the first commit to the receiver's return
	figDrainFirst     = "drain_first" // d: s from the return to the first receipt
	figDrain99        = "drain_99"    // d: s from the return to 99 % received
	figDrain100       = "drain_100"
	// d: deliveries/s from the first receipt after the return to the last. The first waits for
	// the open circuit's next probe (sender.Config.BreakerCooldown, 10 s), whose phase against
	// the return differs from run to run and mode to mode; this rate leaves that wait out.
	figDrainFlowing = "drain_flowing"
	figHotRatio     = "hot_ratio" // e: hot endpoint's rate ÷ a1's of the same run and mode
	figHungRecovery = "hung_recovery"
	figHungMissing  = "hung_missing"
	// f: partner B's commit→receipt p99 (ms) alone and beside partner A's replay, and the
	// backlog's size in deliveries.
	figFairAloneP99  = "fair_alone_p99"
	figFairBesideP99 = "fair_beside_p99"
	figFairBacklog   = "fair_backlog"
	// g: partner B's commit→receipt p99 (ms) alone, beside partner A's events with a cheap filter
	// on each of A's endpoints and beside them with the costliest, and the evaluations of the
	// costliest fanout made.
	figFilterAloneP99  = "filter_alone_p99"
	figFilterCheapP99  = "filter_cheap_p99"
	figFilterCostlyP99 = "filter_costly_p99"
	figFilterEvals     = "filter_evaluations"
)

// deferralReasons are the sender's reasons (sender/metrics.go); any other counts as other.
var deferralReasons = []string{"queue_full", "circuit_open", "not_due", "other"}

// result is one workload of one run in one mode.
type result struct {
	run            int
	mode, workload string
	fig            map[string]float64
	points         map[string][]point // latency plot series
	failures       []string           // missing deliveries, bad signatures, dead processes
	deadlocks      string             // the logs that say PostgreSQL detected a deadlock; empty: none
	notes          []string
}

func newResult(run int, mode, workload string) *result {
	return &result{run: run, mode: mode, workload: workload, fig: map[string]float64{}, points: map[string][]point{}}
}

// report is everything a benchmark measured.
type report struct {
	o        options
	started  time.Time
	limits   []limits // by run
	results  []*result
	problems []string // workloads that could not be measured at all
}

// relate computes the figures that compare workloads: e's hot rate against a1's.
func (r *report) relate() {
	for _, e := range r.results {
		if e.workload != "e" {
			continue
		}
		e.fig[figHotRatio] = math.NaN()
		for _, a := range r.results {
			if a.workload == "a1" && a.run == e.run && a.mode == e.mode {
				e.fig[figHotRatio] = e.fig[figRate] / a.fig[figRate]
			}
		}
	}
}

// failures lists why the benchmark fails: missing deliveries, bad signatures, workloads that
// could not run, deadlocks in the logs.
func (r *report) failures() []string {
	out := slices.Clone(r.problems)
	for _, res := range r.results {
		for _, f := range res.allFailures() {
			out = append(out, fmt.Sprintf("run %d %s %s: %s", res.run, res.mode, res.workload, f))
		}
	}
	return out
}

// allFailures are the result's failures and its deadlocks.
func (r *result) allFailures() []string {
	if r.deadlocks == "" {
		return r.failures
	}
	return append(slices.Clone(r.failures), r.deadlocks)
}

// warnings are figures outside what the design promises that do not fail the benchmark.
func (r *report) warnings() []string {
	var out []string
	for _, res := range r.results {
		if v := res.fig[figDeferrals+"queue_full"]; v > 0 && slices.Contains([]string{"a1", "a100", "b", "c", "c2", "c3"}, res.workload) {
			out = append(out, fmt.Sprintf("run %d %s %s: %.0f deliveries deferred with reason queue_full (must be 0)", res.run, res.mode, res.workload, v))
		}
	}
	return out
}

// column is one figure of a table.
type column struct {
	header, key string
	format      string // fmt verb for the value
}

// table is a group of figures shown together; a result appears in it when it has the first
// figure.
type table struct {
	title   string
	columns []column
}

var tables = []table{
	{"Throughput and correctness", []column{
		{"deliveries", figDeliveries, "%.0f"}, {"deliveries/s", figRate, "%.0f"}, {"÷ bare loop", figBareRatio, "%.2f"},
		{"commits/s", figCommitRate, "%.0f"}, {"÷ PostgreSQL", figPGRatio, "%.2f"},
		{"missing", figMissing, "%.0f"}, {"dup", figDuplicates, "%.0f"}, {"bad sig", figBadSignatures, "%.0f"}, {"unknown", figUnknown, "%.0f"},
		{"history +s", figHistoryLag, "%.1f"}}},
	{"Commit-to-receipt latency (ms)", []column{
		{"p50", figP50, "%.1f"}, {"p95", figP95, "%.1f"}, {"p99", figP99, "%.1f"}, {"max", figMax, "%.1f"}}},
	{"Per hop (ms): commit→events (cdc), events→deliveries (fanout; about 0 for events cdc fans out itself), deliveries→receipt (sender+HTTP)", []column{
		{"cdc p50", figHopCDC + "p50", "%.1f"}, {"cdc p99", figHopCDC + "p99", "%.1f"},
		{"fanout p50", figHopFanout + "p50", "%.1f"}, {"fanout p99", figHopFanout + "p99", "%.1f"},
		{"sender p50", figHopSender + "p50", "%.1f"}, {"sender p99", figHopSender + "p99", "%.1f"}}},
	{"Sender (metric increases over the workload)", []column{
		{"deferred queue_full", figDeferrals + "queue_full", "%.0f"}, {"circuit_open", figDeferrals + "circuit_open", "%.0f"},
		{"not_due", figDeferrals + "not_due", "%.0f"}, {"other", figDeferrals + "other", "%.0f"},
		{"failed attempts", figFailedAttempts, "%.0f"},
		{"limit raised", figLimitChanges + "raised", "%.0f"}, {"cut slowed", figLimitChanges + "slowed", "%.0f"},
		{"cut failed", figLimitChanges + "failed", "%.0f"}}},
	{"CPU ms per delivery", []column{
		{"hookstream", figCPUHookstream, "%.3f"}, {"broker", figCPUBroker, "%.3f"}, {"postgres", figCPUPostgres, "%.3f"},
		{"bench", figCPUBench, "%.3f"}, {"total", figCPUTotal, "%.3f"}}},
	{"CPU ms per delivery by process: hookstream's by command; PostgreSQL's by what it serves " +
		"(the benchmark's commits, cdc's walsender, hookstream's connections, the rest)", cpuKindColumns()},
	{"Drain (d): receiver down, then back", []column{
		{"down s", figDownFor, "%.1f"}, {"to first s", figDrainFirst, "%.1f"}, {"to 99 % s", figDrain99, "%.1f"}, {"to 100 % s", figDrain100, "%.1f"},
		{"flowing /s", figDrainFlowing, "%.0f"}}},
	{"Isolation (e): hot endpoint beside a hanging one", []column{
		{"hot ÷ a1", figHotRatio, "%.2f"}, {"hung caught up s", figHungRecovery, "%.1f"}, {"hung missing", figHungMissing, "%.0f"}}},
	{"Fairness (f): partner B's steady load beside partner A's replay", []column{
		{"A's replay", figFairBacklog, "%.0f"}, {"A deliveries/s", figRate, "%.0f"},
		{"B p99 alone ms", figFairAloneP99, "%.1f"}, {"B p99 beside ms", figFairBesideP99, "%.1f"}}},
	{"Filter isolation (g): partner B's steady load beside partner A's cheap, then costliest, filters", []column{
		{"costliest evaluations", figFilterEvals, "%.0f"}, {"B p99 alone ms", figFilterAloneP99, "%.1f"},
		{"B p99 beside cheap ms", figFilterCheapP99, "%.1f"}, {"B p99 beside costliest ms", figFilterCostlyP99, "%.1f"}}},
}

// cpuKinds are the processes and PostgreSQL kinds the CPU split shows, in its order.
var cpuKinds = append([]string{"cdc", "fanout", "sender", "retry", "recorder", "admin", "dev"}, pgKinds...)

func cpuKindColumns() []column {
	var out []column
	for _, k := range cpuKinds {
		out = append(out, column{strings.ReplaceAll(k, "_", " "), figCPUKind + k, "%.3f"})
	}
	return out
}

// row is one line of a table: a run's result or the median of a workload's runs.
type row struct {
	label []string // workload, mode, run
	fig   map[string]float64
}

// perRunRows are every result in order.
func (r *report) perRunRows() []row {
	var rows []row
	for _, res := range r.results {
		rows = append(rows, row{[]string{res.workload, res.mode, fmt.Sprint(res.run)}, res.fig})
	}
	return rows
}

// medianRows are, per workload and mode, the median of each figure over the runs.
func (r *report) medianRows() []row {
	type group struct{ workload, mode string }
	var order []group
	figs := map[group]map[string][]float64{}
	for _, res := range r.results {
		g := group{res.workload, res.mode}
		if figs[g] == nil {
			figs[g] = map[string][]float64{}
			order = append(order, g)
		}
		for k, v := range res.fig {
			if !math.IsNaN(v) {
				figs[g][k] = append(figs[g][k], v)
			}
		}
		for k := range res.fig { // a figure that is n/a in every run stays n/a
			if _, ok := figs[g][k]; !ok {
				figs[g][k] = nil
			}
		}
	}
	var rows []row
	for _, g := range order {
		m := map[string]float64{}
		n := 0
		for k, vs := range figs[g] {
			m[k] = math.NaN()
			if len(vs) > 0 {
				m[k] = benchenv.Median(vs)
			}
			n = max(n, len(vs))
		}
		rows = append(rows, row{[]string{g.workload, g.mode, fmt.Sprintf("median of %d", n)}, m})
	}
	return rows
}

// cells formats a row's figures for t, or reports that the row has none of them.
func (t table) cells(rw row) ([]string, bool) {
	if _, ok := rw.fig[t.columns[0].key]; !ok {
		return nil, false
	}
	out := slices.Clone(rw.label)
	for _, c := range t.columns {
		v, ok := rw.fig[c.key]
		if !ok || math.IsNaN(v) {
			out = append(out, "n/a")
			continue
		}
		out = append(out, fmt.Sprintf(c.format, v))
	}
	return out, true
}

func (t table) header() []string {
	h := []string{"workload", "mode", "run"}
	for _, c := range t.columns {
		h = append(h, c.header)
	}
	return h
}

// eachTable calls write with every table that has lines for rows, in order, and those lines.
func eachTable(rows []row, write func(t table, lines [][]string)) {
	for _, t := range tables {
		var lines [][]string
		for _, rw := range rows {
			if c, ok := t.cells(rw); ok {
				lines = append(lines, c)
			}
		}
		if len(lines) > 0 {
			write(t, lines)
		}
	}
}

// writeText prints the tables of rows aligned in columns.
func writeText(w io.Writer, title string, rows []row) {
	fmt.Fprintf(w, "\n== %s ==\n", title)
	eachTable(rows, func(t table, lines [][]string) {
		fmt.Fprintf(w, "\n%s\n", t.title)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		for _, l := range append([][]string{t.header()}, lines...) {
			fmt.Fprintln(tw, strings.Join(l, "\t")+"\t")
		}
		tw.Flush()
	})
}

// writeMarkdown writes the tables of rows as Markdown.
func writeMarkdown(w io.Writer, title string, rows []row) {
	fmt.Fprintf(w, "\n## %s\n", title)
	eachTable(rows, func(t table, lines [][]string) {
		fmt.Fprintf(w, "\n### %s\n\n| %s |\n|%s\n", t.title, strings.Join(t.header(), " | "), strings.Repeat("---|", len(t.header())))
		for _, l := range lines {
			fmt.Fprintf(w, "| %s |\n", strings.Join(l, " | "))
		}
	})
}

// limitLines are the limits of each run and their median, as text lines.
func (r *report) limitLines() [][]string {
	lines := [][]string{{"run", "bare loop req/s", "PostgreSQL 1/tx events/s", "PostgreSQL 100/tx events/s"}}
	var bare, one, hundred []float64
	for i, l := range r.limits {
		lines = append(lines, []string{fmt.Sprint(i + 1), fmt.Sprintf("%.0f", l.bareRPS), fmt.Sprintf("%.0f", l.pgRate[1]), fmt.Sprintf("%.0f", l.pgRate[100])})
		bare, one, hundred = append(bare, l.bareRPS), append(one, l.pgRate[1]), append(hundred, l.pgRate[100])
	}
	if len(r.limits) > 0 {
		lines = append(lines, []string{"median", fmt.Sprintf("%.0f", benchenv.Median(bare)), fmt.Sprintf("%.0f", benchenv.Median(one)), fmt.Sprintf("%.0f", benchenv.Median(hundred))})
	}
	return lines
}

// print writes the whole report as text: limits, per-run tables, then the medians.
func (r *report) print(w io.Writer) {
	fmt.Fprintln(w, "\n== Physical limits (nothing of hookstream running) ==")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, l := range r.limitLines() {
		fmt.Fprintln(tw, strings.Join(l, "\t")+"\t")
	}
	tw.Flush()
	writeText(w, "Per run", r.perRunRows())
	writeText(w, fmt.Sprintf("Median over %d runs", r.o.runs), r.medianRows())
	r.printNotes(w, "")
}

// printNotes writes the notes, warnings and failures, each line prefixed (for Markdown lists).
func (r *report) printNotes(w io.Writer, bullet string) {
	seen := map[string]bool{}
	for _, res := range r.results {
		for _, n := range res.notes {
			line := fmt.Sprintf("%s %s: %s", res.mode, res.workload, n)
			if !seen[line] {
				seen[line] = true
				fmt.Fprintf(w, "%snote: %s\n", bullet, line)
			}
		}
	}
	for _, s := range r.warnings() {
		fmt.Fprintf(w, "%swarning: %s\n", bullet, s)
	}
	for _, s := range r.failures() {
		fmt.Fprintf(w, "%sFAIL: %s\n", bullet, s)
	}
}

// writeResults writes -out/results.md: when, which commit, which machine, how, and the tables.
func (r *report) writeResults(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	fmt.Fprintf(f, "# hookstream end-to-end benchmark\n\n")
	fmt.Fprintf(f, "- date: %s\n- commit: %s\n", r.started.Format(time.RFC3339), gitCommit())
	fmt.Fprintf(f, "- machine: %d CPUs (nproc), GOMAXPROCS %d, %s %s/%s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(f, "- runs %d, modes %s, %d clients, %d partitions; every workload in a fresh environment (database, cdc slot, topic prefix, secret key, processes)\n",
		r.o.runs, strings.Join(r.o.modes, ","), r.o.clients, r.o.partitions)
	fmt.Fprintf(f, "- command: `%s`\n\nWorkloads:\n\n", strings.Join(os.Args, " "))
	for _, name := range r.o.workloads {
		if w, ok := lookupWorkload(name); ok {
			fmt.Fprintf(f, "- **%s**: %s\n", w.name, w.about(r.o))
		}
	}
	fmt.Fprintf(f, "\n## Physical limits (nothing of hookstream running)\n\n")
	for i, l := range r.limitLines() {
		fmt.Fprintf(f, "| %s |\n", strings.Join(l, " | "))
		if i == 0 {
			fmt.Fprintf(f, "|%s\n", strings.Repeat("---|", len(l)))
		}
	}
	writeMarkdown(f, "Per run", r.perRunRows())
	writeMarkdown(f, fmt.Sprintf("Median over %d runs", r.o.runs), r.medianRows())
	fmt.Fprintln(f)
	r.printNotes(f, "- ")
	fmt.Fprintf(f, "\nLatency plots: %s\n", strings.Join(r.plotNames(), ", "))
	return f.Close()
}

// gitCommit is HEAD, marked when the work tree has changes.
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain").Output(); err == nil && len(st) > 0 {
		commit += " + uncommitted changes"
	}
	return commit
}

// plotNames are the PNG files of the report, relative to -out.
func (r *report) plotNames() []string {
	var out []string
	for _, res := range r.lastRunResults() {
		out = append(out, filepath.Base(plotPath("", res)))
	}
	return out
}
