// Command chaos proves hookstream's promises under faults (make chaos; R2, R10, R11, R13,
// R18, R21, R22, R38). It starts its own PostgreSQL cluster and Kafka broker on private ports
// with their data under -dir, every component as its own `hookstream` process (admin, and two
// each of cdc, fanout, sender, retry and recorder, each with its own instance id and probe
// port, restarted after every exit as a supervisor would), 4 partners with 9 endpoints on
// verifying loopback receivers that record every request, and a load generator committing
// catalog events through outbox.Writer at a steady rate. For the run's duration a controller
// SIGKILLs random replicas (each kind at least twice, cdc always the active one), kills the
// broker once and shuts PostgreSQL down immediately once; the receivers fail a share of
// requests with 500 or by holding them past the sender's deadline, one is down for a while,
// one answers 429 with Retry-After to a tenth of its requests, one answers 410 to all. Then the
// load stops, the run waits (bounded) until every expected delivery was accepted and the
// history has settled, runs the ledger (internal/ledger, as `hookstream verify-ledger`) with
// the receivers' records, prints its report and exits 1 when a promise was broken, or when a
// log under -dir/logs, or the run's PostgreSQL server log (-dir/pg-<port>.log), says PostgreSQL
// detected a deadlock (the history's writers take their row locks in one order, design.md
// section 4; work tried again after a deadlock is still a bug).
//
//	CHAOS_DURATION=60s CHAOS_RATE=1000 make chaos
//
// Logs of every process, the services and the receipts (receipts.jsonl) stay under -dir until
// the next run. The children die with this program (Pdeathsig); the broker and the cluster,
// daemons of their scripts, are stopped by a guard process when it exits, however it exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// options are the run's flags; CHAOS_* variables give their defaults.
type options struct {
	bin, repo, dir string
	duration       time.Duration
	rate           int
	seed           uint64
	kills          int
	clients        int
	partitions     int
	failShare      float64
	timeoutShare   float64
	requestTimeout time.Duration
	downFor        time.Duration
	restart        time.Duration
	drainBound     time.Duration
	drainTimeout   time.Duration
	startTimeout   time.Duration
	schedule       string
	faults         bool

	guard                       bool
	guardPGPort, guardKafkaPort int
}

// retrySchedule is the run's HOOKSTREAM_RETRY_SCHEDULE: retries come within seconds (1, 2, 4,
// then 5 s apart), so the random failures and the 429s clear soon after the load stops (a
// delivery needs 10 failures in a row to take 57 s), and the 10 s tail outlasts the longest
// outage a delivery meets (the receiver down for 60 s, the broker restart): 21 attempts over
// 157 s.
const retrySchedule = "1s,2s,4s,5s,5s,5s,5s,10s,10s,10s,10s,10s,10s,10s,10s,10s,10s,10s,10s,10s"

// requestTimeout is the run's HOOKSTREAM_REQUEST_TIMEOUT, compressed with the schedule: at the
// default 15 s one delivery whose requests were held twice took 32 s to arrive, half of the
// drain's bound, where the schedule's delays for the same failures take 3 s.
const requestTimeout = 5 * time.Second

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", ".data/chaos-bin/hookstream", "path of a built hookstream binary")
	fs.StringVar(&o.repo, "repo", ".", "the checkout: deploy/ scripts, and the Kafka jars in .data/kafka/libs ($HOOKSTREAM_DATA_DIR/kafka/libs when set)")
	fs.StringVar(&o.dir, "dir", envString("CHAOS_DIR", ".data/chaos"), "the run's data and logs, emptied at the start (CHAOS_DIR)")
	fs.DurationVar(&o.duration, "duration", envDuration("CHAOS_DURATION", 5*time.Minute), "how long the load and the faults run (CHAOS_DURATION)")
	fs.IntVar(&o.rate, "rate", envInt("CHAOS_RATE", 1000), "events committed per second (CHAOS_RATE)")
	seed := fs.Int64("seed", int64(envInt("CHAOS_SEED", int(time.Now().UnixNano()%1e9))), "seed of the fault plan, the load and the failures (CHAOS_SEED)")
	fs.IntVar(&o.kills, "kills", envInt("CHAOS_KILLS", 0), "component kills; 0: one per 8 s of the duration, at least 12 (CHAOS_KILLS)")
	fs.IntVar(&o.clients, "clients", 16, "concurrent committing clients of the load")
	fs.IntVar(&o.partitions, "partitions", 6, "partitions of the partitioned topics")
	fs.Float64Var(&o.failShare, "fail-share", 0.10, "share of requests a receiver fails, with 500 or a timeout")
	fs.Float64Var(&o.timeoutShare, "timeout-share", 0.02, "share of the failures that are timeouts: the receiver holds the request past the sender's deadline (-request-timeout)")
	fs.DurationVar(&o.requestTimeout, "request-timeout", requestTimeout, "HOOKSTREAM_REQUEST_TIMEOUT of the run")
	fs.DurationVar(&o.downFor, "down-for", 0, "how long one receiver is down; 0: 60 s, at most a third of the duration")
	fs.DurationVar(&o.restart, "restart-after", time.Second, "pause before a killed replica is started again")
	fs.DurationVar(&o.drainBound, "drain-bound", time.Minute, "every expected delivery must be received this soon after the load stops")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", 3*time.Minute, "how long to wait for the drain at most (the report says how long it took)")
	fs.DurationVar(&o.startTimeout, "start-timeout", 3*time.Minute, "bound on the start of the services and every process")
	fs.StringVar(&o.schedule, "retry-schedule", retrySchedule, "HOOKSTREAM_RETRY_SCHEDULE of the run")
	fs.BoolVar(&o.faults, "faults", envString("CHAOS_FAULTS", "on") != "off", "kill processes, the broker and PostgreSQL; false (CHAOS_FAULTS=off) is a baseline with the receivers' failures only")
	fs.BoolVar(&o.guard, "guard", false, "internal: be the guard of the services under -dir")
	fs.IntVar(&o.guardPGPort, "guard-pg-port", 0, "internal: the guarded cluster's port")
	fs.IntVar(&o.guardKafkaPort, "guard-kafka-port", 0, "internal: the guarded broker's port")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.seed = uint64(*seed)
	if o.kills == 0 {
		o.kills = max(2*len(kinds), int(o.duration/(8*time.Second)))
	}
	if o.downFor == 0 {
		o.downFor = min(time.Minute, o.duration/3)
	}
	return o, o.validate()
}

// validate reports every option the run cannot work with.
func (o options) validate() error {
	var errs []error
	if o.guard {
		return nil
	}
	if st, err := os.Stat(o.bin); err != nil || st.IsDir() {
		errs = append(errs, fmt.Errorf("-bin %s: not a built hookstream binary (go build -o %s ./cmd/hookstream)", o.bin, o.bin))
	}
	if _, err := os.Stat(filepath.Join(o.repo, "deploy", "kafka", "kafka.sh")); err != nil {
		errs = append(errs, fmt.Errorf("-repo %s: no deploy/kafka/kafka.sh there", o.repo))
	}
	if o.duration < 20*time.Second {
		errs = append(errs, fmt.Errorf("-duration %s: at least 20s", o.duration))
	}
	if o.rate < 1 || o.clients < 1 || o.partitions < 1 {
		errs = append(errs, fmt.Errorf("-rate, -clients and -partitions must be positive"))
	}
	if o.requestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("-request-timeout %v: must be positive", o.requestTimeout))
	}
	if o.failShare < 0 || o.failShare > 0.5 || o.timeoutShare < 0 || o.timeoutShare > 1 {
		errs = append(errs, fmt.Errorf("-fail-share %v and -timeout-share %v: between 0 and 0.5, and 0 and 1", o.failShare, o.timeoutShare))
	}
	return errors.Join(errs...)
}

func envString(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(envString(name, "")); err == nil {
		return d
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(envString(name, "")); err == nil {
		return n
	}
	return def
}

func main() {
	o := harness.ParseOptions("chaos", os.Args[1:], parseOptions)
	if o.guard {
		os.Exit(guard(&infra{repo: o.repo, dir: o.dir, pgPort: o.guardPGPort, kafkaPort: o.guardKafkaPort, log: os.Stderr}))
	}
	// If whatever started this run dies (make under `timeout`, a closed terminal), end the run
	// in order: the signal below stops it as SIGTERM does.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() { <-ctx.Done(); stop() }() // a second signal kills at once; the guard cleans up
	os.Exit(run(ctx, o, os.Stdout))
}

// run does one chaos run and returns the exit status: 1 when it failed, saying why on w.
func run(ctx context.Context, o options, w io.Writer) int {
	rep, err := chaos(ctx, o, w)
	if rep != nil {
		rep.print(w)
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(w, "chaos: interrupted; the processes and services were stopped")
		return 1
	case err != nil:
		fmt.Fprintln(w, "chaos: FAILED:", err)
		return 1
	case len(rep.failures) > 0:
		fmt.Fprintf(w, "chaos: FAILED: %d problems:\n  %s\n", len(rep.failures), strings.Join(rep.failures, "\n  "))
		return 1
	}
	fmt.Fprintln(w, "chaos: PASSED")
	return 0
}
