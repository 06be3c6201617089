package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// The benchmark's core on tiny sizes, so `make bench` cannot go stale: workloads a1, b, f and g in one
// run against the test services (mode separate on a real broker; mode dev when the test Kafka
// is embedded, since separate processes cannot share an in-process cluster). Every delivery must
// arrive verified, and the report files must be written.
func TestBenchmarkSmoke(t *testing.T) {
	server := testenv.ServerURL(t)
	o := options{
		bin: buildHookstream(t), databaseURL: server, runs: 1, workloads: []string{"a1", "b", "c3", "f", "g"},
		out: t.TempDir(), kafkaPIDFile: "/nonexistent",
		clients: 8, partitions: 2, aEvents: 200, bEvents: 200, bEndpoints: 10, cRate: 10, c2Rate: 20, c3Rate: 6, cDuration: time.Second, dEvents: 200,
		fDeliveries: 200, fEndpoints: 2, fRate: 10, fDuration: time.Second, gEndpoints: 3, gRate: 20,
		bareRequests: 500, limitEvents: 200, warmupEvents: 50, warmupSteady: time.Second,
		startTimeout: time.Minute, tailTimeout: time.Minute, drainTimeout: time.Minute, recoverTimeout: time.Minute, stopGrace: 20 * time.Second,
	}
	switch kafka := strings.TrimSpace(os.Getenv(testenv.KafkaVar)); kafka {
	case "":
		t.Fatalf("%s is not set: run `make kafka-up` and set it to 127.0.0.1:19092, or set it to embedded", testenv.KafkaVar)
	case "embedded":
		o.modes = []string{modeDev}
	default:
		o.modes, o.brokers = []string{modeSeparate}, splitList(kafka)
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	rep, err := benchmark(ctx, o, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.failures(); len(f) > 0 {
		t.Fatalf("failures: %q", f)
	}
	// Mode separate warms the broker up with a burst, then (steady workloads follow) a steady
	// load; neither counts among the results below.
	if o.modes[0] == modeSeparate {
		for _, line := range []string{"warm-up (not measured), mode separate, workload a1 with 50 events",
			"warm-up (not measured), mode separate, workload c for 1s"} {
			if !strings.Contains(out.String(), line) {
				t.Errorf("the output has no %q", line)
			}
		}
	}
	// f: partner A's replay and partner B's two steady loads (alone, then beside the replay).
	// g: partner B's three steady loads; partner A's events reach no endpoint, each is evaluated
	// against every filter of A's endpoints.
	want := map[string]float64{"a1": 200, "b": 2000, "c3": 6, "f": 200 + 2*10, "g": 3 * 10}
	if len(rep.results) != len(want) {
		t.Fatalf("%d results, want %d", len(rep.results), len(want))
	}
	for _, res := range rep.results {
		f := res.fig
		if f[figDeliveries] != want[res.workload] || f[figMissing] != 0 || f[figBadSignatures] != 0 || f[figDuplicates] != 0 || !(f[figRate] > 0) {
			t.Errorf("%s: deliveries %v, missing %v, bad signatures %v, duplicates %v, rate %v; want %v delivered once each",
				res.workload, f[figDeliveries], f[figMissing], f[figBadSignatures], f[figDuplicates], f[figRate], want[res.workload])
		}
	}
	// The bursts and steady loads end when the history holds every attempt: the figure is how
	// long after the last receipt that was.
	for _, res := range rep.results {
		if res.workload != "f" && res.workload != "g" && !(res.fig[figHistoryLag] >= 0) {
			t.Errorf("%s: history lag %v, want the seconds from the last receipt to the last attempt recorded", res.workload, res.fig[figHistoryLag])
		}
	}
	// A burst keeps work waiting at each endpoint: the ends of its rounds change the adaptive
	// limits, up or down, and the sender table shows how.
	for _, res := range rep.results {
		f := res.fig
		if res.workload == "b" && !(f[figLimitChanges+"raised"]+f[figLimitChanges+"slowed"]+f[figLimitChanges+"failed"] > 0) {
			t.Errorf("b: no change of the endpoints' concurrency limits (raised %v, slowed %v, failed %v)",
				f[figLimitChanges+"raised"], f[figLimitChanges+"slowed"], f[figLimitChanges+"failed"])
		}
	}
	for _, res := range rep.results {
		if res.workload == "g" && !(res.fig[figFilterEvals] >= 3*10) {
			t.Errorf("g: %v filter evaluations, want 3 for each of A's events (about 20)", res.fig[figFilterEvals])
		}
	}
	// The CPU split by process adds up to the parties it splits: hookstream's commands to
	// hookstream's, PostgreSQL's kinds to PostgreSQL's (when the server runs on this machine).
	for _, res := range rep.results {
		f := res.fig
		procs, pg := 0.0, 0.0
		for _, k := range cpuKinds {
			switch v := nanAsZero(f[figCPUKind+k]); {
			case slices.Contains(pgKinds, k):
				pg += v
			default:
				procs += v
			}
		}
		if math.Abs(procs-f[figCPUHookstream]) > 1e-9 {
			t.Errorf("%s: hookstream's CPU by command adds up to %v, hookstream's is %v", res.workload, procs, f[figCPUHookstream])
		}
		if !math.IsNaN(f[figCPUPostgres]) && math.Abs(pg-f[figCPUPostgres]) > 1e-9 {
			t.Errorf("%s: PostgreSQL's CPU by kind adds up to %v, PostgreSQL's is %v", res.workload, pg, f[figCPUPostgres])
		}
	}
	if a1 := rep.results[0]; !(a1.fig[figHopSender+"p50"] >= 0) {
		t.Errorf("a1 has no per-hop latency: %v", a1.fig)
	}
	md, err := os.ReadFile(filepath.Join(o.out, "results.md"))
	if err != nil || !strings.Contains(string(md), "Throughput and correctness") {
		t.Errorf("results.md: %v\n%s", err, md)
	}
	for _, w := range []string{"a1", "b"} {
		if _, err := os.Stat(filepath.Join(o.out, "latency-"+w+"-"+o.modes[0]+".png")); err != nil {
			t.Error(err)
		}
	}
}

// buildHookstream builds the command into the test's temporary directory, as make bench does.
func buildHookstream(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hookstream")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hookstream")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// PostgreSQL's own count of an environment's deadlocks fails the workload even when no process
// log names one (a process logging above warnings, a client that swallowed the error).
func TestServerDeadlocksFailTheWorkload(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "recorder.log"), []byte(`{"msg":"started"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := envDeadlocks(dir, 0, nil); got != "" {
		t.Fatalf("no deadlock: %q, want none", got)
	}
	got := envDeadlocks(dir, 3, nil)
	if !strings.Contains(got, "PostgreSQL counted 3 deadlocks") {
		t.Fatalf("3 counted: %q, want them named", got)
	}
	res := newResult(1, modeDev, "b")
	res.deadlocks = got
	rep := &report{results: []*result{res}}
	if f := rep.failures(); len(f) != 1 || !strings.Contains(f[0], "PostgreSQL counted 3 deadlocks") {
		t.Fatalf("failures %q, want the deadlocks", f)
	}
	if got := envDeadlocks(dir, 0, errors.New("connection refused")); !strings.Contains(got, "reading PostgreSQL's count of deadlocks: connection refused") {
		t.Fatalf("count not read: %q, want the reason", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "recorder.log"), []byte(`{"err":"ERROR: deadlock detected (SQLSTATE 40P01)"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := envDeadlocks(dir, 1, nil); !strings.Contains(got, "1 log lines in recorder.log") || !strings.Contains(got, "PostgreSQL counted 1 deadlocks") {
		t.Fatalf("logged and counted: %q, want both", got)
	}
}

// A process log saying PostgreSQL detected a deadlock fails the workload, naming the logs; logs
// without one do not.
func TestLogDeadlocksFailTheWorkload(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sender.log", `{"msg":"started"}`+"\n")
	write("timeline.csv", "deadlock detected\n")
	if got, err := logDeadlocks(dir); err != nil || got != "" {
		t.Fatalf("clean logs: %q, %v; want none", got, err)
	}
	write("recorder.log", `{"msg":"batch not stored; trying it again","err":"deadlocks: ERROR: deadlock detected (SQLSTATE 40P01)"}`+"\n"+
		`{"msg":"pending rows not stored; trying it again","err":"ERROR: deadlock detected (SQLSTATE 40P01)"}`+"\n")
	got, err := logDeadlocks(dir)
	if err != nil || !strings.Contains(got, "2 log lines in recorder.log") || !strings.Contains(got, "batch not stored") {
		t.Fatalf("deadlocks: %q, %v; want recorder.log's 2 lines named", got, err)
	}
	res := newResult(1, modeSeparate, "a1")
	res.deadlocks = got
	rep := &report{results: []*result{res}}
	if f := rep.failures(); len(f) != 1 || !strings.HasPrefix(f[0], "run 1 separate a1: PostgreSQL detected deadlocks") {
		t.Fatalf("failures %q, want the deadlock", f)
	}
}
