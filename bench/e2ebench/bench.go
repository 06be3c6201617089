package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// benchmark runs every run, mode and workload of o, then prints the report to w and writes
// results.md and the plots under o.out. A workload that cannot run is listed as a problem and
// the others go on; an interruption (ctx) ends everything.
func benchmark(ctx context.Context, o options, w io.Writer) (*report, error) {
	if err := os.MkdirAll(filepath.Join(o.out, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	swept, err := sweepStale(ctx, o.databaseURL)
	if err != nil {
		return nil, err
	}
	if len(swept) > 0 {
		fmt.Fprintf(w, "dropped %d databases an interrupted benchmark left: %s\n", len(swept), strings.Join(swept, ", "))
	}
	rx, err := harness.StartReceiver()
	if err != nil {
		return nil, err
	}
	defer rx.Close()
	rep := &report{o: o, started: time.Now()}
	if err := warmUp(ctx, o, rx, rep, w); err != nil {
		return rep, err
	}
	for run := 1; run <= o.runs; run++ {
		fmt.Fprintf(w, "run %d of %d: physical limits\n", run, o.runs)
		lim, err := measureLimits(ctx, o, rx)
		if err != nil {
			return rep, fmt.Errorf("run %d: %w", run, err)
		}
		fmt.Fprintf(w, "  bare loop %.0f requests/s; PostgreSQL %.0f events/s at 1/tx, %.0f at 100/tx\n", lim.bareRPS, lim.pgRate[1], lim.pgRate[100])
		rep.limits = append(rep.limits, lim)
		for _, mode := range o.modes {
			for _, name := range o.workloads {
				if err := runOne(ctx, o, rx, lim, run, mode, name, rep, w); err != nil {
					return rep, err
				}
			}
		}
	}
	rep.relate()
	rep.print(w)
	if err := rep.writePlots(o.out); err != nil {
		return rep, err
	}
	if err := rep.writeResults(filepath.Join(o.out, "results.md")); err != nil {
		return rep, err
	}
	fmt.Fprintf(w, "\nwrote %s and %d plots\n", filepath.Join(o.out, "results.md"), len(rep.lastRunResults()))
	return rep, nil
}

// warmUp runs, in mode separate, workloads whose figures are thrown away: the broker is a JVM,
// and the first workload after it starts would otherwise pay for its JIT compiler (a tenth of
// the machine during a1 of run 1, in a profile) and for its first topic and group metadata.
// A deployed broker is long warm; so is every workload after the first. An a1 of -warmup-events
// warms the paths of a burst; when a steady workload is to run, a c of -warmup-steady follows:
// after the a1 alone, the first c on a freshly started broker still found its compiler at work
// (6 % of the machine in a profile) and its p99 at 2-4x the next run's.
func warmUp(ctx context.Context, o options, rx *harness.Receiver, rep *report, w io.Writer) error {
	if !slices.Contains(o.modes, modeSeparate) {
		return nil
	}
	if o.warmupEvents > 0 {
		wo := o
		wo.aEvents = o.warmupEvents
		fmt.Fprintf(w, "warm-up (not measured), mode separate, workload a1 with %d events\n", wo.aEvents)
		if err := warmUpWith(ctx, wo, "a1", rx, rep, w); err != nil {
			return err
		}
	}
	if o.warmupSteady > 0 && slices.ContainsFunc(o.workloads, isSteady) {
		wo := o
		wo.cDuration = o.warmupSteady
		fmt.Fprintf(w, "warm-up (not measured), mode separate, workload c for %s\n", wo.cDuration)
		if err := warmUpWith(ctx, wo, "c", rx, rep, w); err != nil {
			return err
		}
	}
	return nil
}

// isSteady says whether workload name commits at a steady rate.
func isSteady(name string) bool {
	wl, ok := lookupWorkload(name)
	return ok && wl.steady
}

// warmUpWith runs workload name with o, unmeasured; only ctx's end stops the benchmark.
func warmUpWith(ctx context.Context, o options, name string, rx *harness.Receiver, rep *report, w io.Writer) error {
	wl, _ := lookupWorkload(name)
	res, err := measure(ctx, o, rx, limits{pgRate: map[int]float64{1: 1, 100: 1}, bareRPS: 1}, 0, modeSeparate, wl, w)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(w, "  warm-up failed (the runs go on): %v\n", err)
		return nil
	}
	if res.deadlocks != "" { // its figures do not count, but a deadlock is a bug all the same
		rep.problems = append(rep.problems, "warm-up: "+res.deadlocks)
		fmt.Fprintf(w, "  FAIL: %s\n", res.deadlocks)
	}
	return nil
}

// envDeadlocks says what shows a deadlock in an environment: its process logs in dir
// (logDeadlocks) and server, the deadlocks PostgreSQL counted in its database (scratch.Deadlocks,
// serverErr when it could not be read), which has them all even when no process logged one.
// Empty: none.
func envDeadlocks(dir string, server int64, serverErr error) string {
	logs, err := logDeadlocks(dir)
	var says []string
	switch {
	case err != nil:
		says = append(says, "reading the logs for deadlocks: "+err.Error())
	case logs != "":
		says = append(says, logs)
	}
	switch {
	case serverErr != nil:
		says = append(says, "reading PostgreSQL's count of deadlocks: "+serverErr.Error())
	case server > 0:
		says = append(says, fmt.Sprintf("PostgreSQL counted %d deadlocks (SQLSTATE 40P01) in the environment's database (pg_stat_database)", server))
	}
	return strings.Join(says, "; ")
}

// logDeadlocks reads the process logs in dir and says which hold PostgreSQL's "deadlock
// detected" (SQLSTATE 40P01): every writer takes its row locks in one order (design.md section
// 4), so one is a bug even though the work was tried again and stored. Empty: none.
func logDeadlocks(dir string) (string, error) {
	found, err := harness.FindInLogs(dir, harness.DeadlockDetected)
	if err != nil || len(found) == 0 {
		return "", err
	}
	lines, files := 0, make([]string, len(found))
	for i, m := range found {
		lines += m.Lines
		files[i] = filepath.Base(m.Path)
	}
	return fmt.Sprintf("PostgreSQL detected deadlocks (SQLSTATE 40P01): %d log lines in %s; %s", lines, strings.Join(files, ", "), found[0]), nil
}

// runOne runs one workload in a fresh environment and adds its result, or the reason it could
// not run, to rep. Only an interruption is returned.
func runOne(ctx context.Context, o options, rx *harness.Receiver, lim limits, run int, mode, name string, rep *report, w io.Writer) error {
	wl, _ := lookupWorkload(name) // validated with the flags
	fmt.Fprintf(w, "run %d, mode %s, workload %s: %s\n", run, mode, name, wl.about(o))
	began := time.Now()
	res, err := measure(ctx, o, rx, lim, run, mode, wl, w)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		rep.problems = append(rep.problems, fmt.Sprintf("run %d %s %s: %v", run, mode, name, err))
		fmt.Fprintf(w, "  FAILED: %v\n", err)
		return nil
	}
	rep.results = append(rep.results, res)
	if res.deadlocks != "" {
		fmt.Fprintf(w, "  FAIL: %s\n", res.deadlocks)
	}
	fmt.Fprintf(w, "  done in %s: %.0f deliveries/s, %.0f missing, p50 %.1f ms, p99 %.1f ms\n",
		time.Since(began).Round(time.Second), res.fig[figRate], res.fig[figMissing], res.fig[figP50], res.fig[figP99])
	return nil
}

// measure starts the workload's environment, runs the workload in it and stops it again. Once
// the processes are stopped, it reads their logs and PostgreSQL's count for deadlocks
// (envDeadlocks).
func measure(ctx context.Context, o options, rx *harness.Receiver, lim limits, run int, mode string, wl workload, w io.Writer) (res *result, err error) {
	spec := envSpec{run: run, mode: mode, workload: wl.name, retrySchedule: wl.retrySchedule}
	if wl.vars != nil {
		spec.vars = wl.vars(o)
	}
	e, err := startEnv(ctx, o, spec)
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := e.stop(); serr != nil {
			fmt.Fprintf(w, "  warning: stopping %s: %v\n", e.name, serr)
		}
		if res == nil {
			return
		}
		res.deadlocks = envDeadlocks(e.logDir(), e.serverDeadlocks, e.serverDeadlocksErr)
	}()
	rx.Reset()
	gen, err := newGenerator(e.pool, partner, o.clients)
	if err != nil {
		return nil, err
	}
	if err := e.admin.CreatePartner(ctx, partner); err != nil {
		return nil, err
	}
	var procs []proc
	for _, p := range e.procs {
		procs = append(procs, proc{p.Name, p.PID()})
	}
	s := &session{o: o, env: e, rx: rx, lim: lim, gen: gen, log: w, res: newResult(run, mode, wl.name),
		meter: newCPUMeter(ctx, procs, e.pool, o.kafkaPIDFile)}
	if err := wl.run(ctx, s); err != nil {
		return nil, errors.Join(err, processErrors(e))
	}
	s.checkProcesses()
	return s.res, nil
}

// processErrors says which processes of e have exited, with their last log lines.
func processErrors(e *env) error {
	var errs []error
	for _, p := range e.procs {
		if done, err := p.Exited(); done {
			errs = append(errs, fmt.Errorf("%s exited (%v):\n%s", p.Name, err, p.LogTail()))
		}
	}
	return errors.Join(errs...)
}
