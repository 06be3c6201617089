package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/ledger"
	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/localinfra"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
)

// Names of the run's installation.
const (
	prefix = "chaos"
	slot   = "hookstream"
)

// session is one chaos run in progress.
type session struct {
	o       options
	w       io.Writer
	began   time.Time
	inf     *infra
	pool    *pgxpool.Pool
	cluster *cluster
	admin   *harness.AdminClient
	eps     []*endpoint
	rec     *receipts
	rep     *report
	steps   []func() error // cleanup, run in reverse order
	// stopMonitor ends the pipeline lines once the drain is over.
	stopMonitor context.CancelFunc
}

// logf prints a progress line with the time since the start.
func (s *session) logf(format string, args ...any) {
	fmt.Fprintf(s.w, "[%6.1fs] %s\n", time.Since(s.began).Seconds(), fmt.Sprintf(format, args...))
}

// chaos does the run: services, processes, topology, load and faults, drain, ledger. The
// report is returned as far as it got, also with an error.
func chaos(ctx context.Context, o options, w io.Writer) (rep *report, err error) {
	s := &session{o: o, w: w, began: time.Now(), rep: &report{o: o}}
	defer func() {
		if cerr := s.cleanup(); cerr != nil {
			fmt.Fprintf(w, "chaos: warning: cleanup: %v\n", cerr)
		}
	}()
	if err := s.prepare(ctx); err != nil {
		return s.rep, err
	}
	if err := s.startHookstream(ctx); err != nil {
		return s.rep, err
	}
	if err := s.load(ctx); err != nil {
		return s.rep, err
	}
	return s.rep, s.finish(ctx)
}

// cleanup stops everything the run started, in reverse order.
func (s *session) cleanup() error {
	var errs []error
	for i := len(s.steps) - 1; i >= 0; i-- {
		errs = append(errs, s.steps[i]())
	}
	s.steps = nil
	return errors.Join(errs...)
}

// prepare takes and empties the run directory, then starts the guard and the services.
func (s *session) prepare(ctx context.Context) error {
	repo, err := filepath.Abs(s.o.repo)
	if err != nil {
		return err
	}
	dir, err := s.takeDir()
	if err != nil {
		return err
	}
	infraLog, err := os.OpenFile(filepath.Join(dir, "logs", "services.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("services log: %w", err)
	}
	s.steps = append(s.steps, infraLog.Close)
	if s.inf, err = newInfra(repo, dir, infraLog); err != nil {
		return err
	}
	_ = s.inf.down() // a killed run's services, if its guard could not stop them
	if err := emptyDir(dir); err != nil {
		return err
	}
	return s.startServices(ctx)
}

// takeDir locks the run directory for this run and returns its absolute path.
func (s *session) takeDir() (string, error) {
	dir, err := filepath.Abs(s.o.dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return "", fmt.Errorf("run directory: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return "", err
	}
	s.steps = append(s.steps, unlock)
	return dir, nil
}

// startServices starts the guard, PostgreSQL and the broker, and opens the pool and the
// receipts file.
func (s *session) startServices(ctx context.Context) error {
	g, err := startGuard(s.inf)
	if err != nil {
		return err
	}
	s.steps = append(s.steps, g.Close, s.inf.down)
	s.logf("starting PostgreSQL on 127.0.0.1:%d and Kafka on 127.0.0.1:%d under %s", s.inf.pgPort, s.inf.kafkaPort, s.inf.dir)
	if err := s.inf.up(ctx); err != nil {
		return err
	}
	if s.pool, err = harness.NewPool(ctx, s.inf.databaseURL(), s.o.clients+4); err != nil {
		return err
	}
	s.steps = append(s.steps, func() error { s.pool.Close(); return nil })
	if s.rec, err = newReceipts(filepath.Join(s.inf.dir, "receipts.jsonl")); err != nil {
		return err
	}
	s.steps = append(s.steps, s.rec.close)
	return nil
}

// lockDir takes dir for this run: a second run on the same directory would stop this one's
// services when it clears what it takes for a killed run's leftovers.
func lockDir(dir string) (unlock func() error, err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another chaos run uses %s (%w)", dir, err)
	}
	return f.Close, nil
}

// emptyDir removes what a previous run left in dir but the log directory, which it empties.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	for _, e := range entries {
		if e.Name() == "logs" || e.Name() == ".lock" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("run directory: %w", err)
		}
	}
	logs, _ := os.ReadDir(filepath.Join(dir, "logs"))
	for _, e := range logs {
		if e.Name() != "services.log" {
			_ = os.Remove(filepath.Join(dir, "logs", e.Name()))
		}
	}
	return os.Truncate(filepath.Join(dir, "logs", "services.log"), 0)
}

// startHookstream migrates, creates the topics, starts every replica, waits until cdc streams
// and the consumer groups are stable, and creates the partners and endpoints.
func (s *session) startHookstream(ctx context.Context) error {
	vars, adminAddr, err := s.configure(ctx)
	if err != nil {
		return err
	}
	if err := s.startCluster(ctx, vars, adminAddr); err != nil {
		return err
	}
	f := &failures{share: s.o.failShare, timeouts: s.o.timeoutShare, hold: s.o.requestTimeout + 5*time.Second, rng: rand.New(rand.NewPCG(s.o.seed, 2))}
	if s.eps, err = createTopology(ctx, s.admin, f, s.rec); err != nil {
		return err
	}
	s.logf("%d partners, %d endpoints created; every process ready", len(partners), len(s.eps))
	return nil
}

// configure makes the installation's shared variables and admin client, migrates the database
// and creates the topics.
func (s *session) configure(ctx context.Context) (vars map[string]string, adminAddr string, err error) {
	port, err := localinfra.FreePorts(1)
	if err != nil {
		return nil, "", err
	}
	adminAddr = fmt.Sprintf("127.0.0.1:%d", port)
	token := harness.NewAdminToken()
	s.admin = harness.NewAdminClient("http://"+adminAddr, token)
	vars, err = harness.Installation{DatabaseURL: s.inf.databaseURL(), Brokers: s.inf.brokers(), Prefix: prefix,
		Partitions: s.o.partitions, Slot: slot, AdminAddr: adminAddr, AdminToken: token, RetrySchedule: s.o.schedule}.Vars()
	if err != nil {
		return nil, "", err
	}
	vars["HOOKSTREAM_REQUEST_TIMEOUT"] = s.o.requestTimeout.String()
	for _, args := range [][]string{{"migrate"}, {"topics", "create"}} {
		log := filepath.Join(s.inf.dir, "logs", args[0]+".log")
		if err := harness.RunToEnd(ctx, s.o.bin, args, harness.Environ(vars), log, s.o.startTimeout); err != nil {
			return nil, "", err
		}
	}
	return vars, adminAddr, nil
}

// startCluster starts every replica under supervision and waits until they are ready, cdc
// streams and the consumer groups of fanout, sender and recorder are stable.
func (s *session) startCluster(ctx context.Context, vars map[string]string, adminAddr string) error {
	var err error
	if s.cluster, err = newCluster(s.o.bin, filepath.Join(s.inf.dir, "logs"), vars, adminAddr, s.o.restart); err != nil {
		return err
	}
	s.logf("starting %d hookstream processes", len(s.cluster.instances))
	supervision, stopSupervision := context.WithCancel(context.WithoutCancel(ctx))
	s.steps = append(s.steps, func() error {
		stopSupervision()
		err := s.cluster.stop(30 * time.Second)
		for _, ep := range s.eps {
			ep.rx.Close()
		}
		return err
	})
	if err := s.cluster.start(supervision, s.o.startTimeout); err != nil {
		return err
	}
	if err := scratch.WaitSlotStreaming(ctx, s.pool, slot, s.o.startTimeout); err != nil {
		return err
	}
	groups := []string{prefix + ".fanout", prefix + ".sender", prefix + ".recorder"}
	return harness.WaitGroups(ctx, s.inf.brokers(), groups, s.o.startTimeout)
}

// load runs the load, the fault plan and the down receiver together for the duration.
func (s *session) load(ctx context.Context) error {
	src, err := newEventSource(s.o.seed)
	if err != nil {
		return err
	}
	gen, err := harness.NewGenerator(s.pool, s.o.clients, src.event)
	if err != nil {
		return err
	}
	gen.KeepGoing = true
	rng := rand.New(rand.NewPCG(s.o.seed, 3))
	var plan []fault
	if s.o.faults {
		plan = planFaults(s.o.duration, s.o.kills, rng)
	}
	ctl := &controller{cluster: s.cluster, inf: s.inf, rng: rng, log: s.logf}
	start := time.Now()
	s.logf("load: %d events/s for %s; %d faults planned; retry schedule %s", s.o.rate, s.o.duration, len(plan), s.o.schedule)
	mon, stopMon := context.WithCancel(ctx)
	s.stopMonitor = stopMon
	go (&monitor{cluster: s.cluster, log: s.logf}).run(mon, 10*time.Second)
	faultsDone := make(chan struct{})
	go func() { defer close(faultsDone); ctl.run(ctx, start, plan) }()
	downDone := make(chan error, 1)
	go func() { downDone <- downWindow(ctx, s.down(), start, s.o.duration/5, s.o.downFor, s.logf) }()
	commits, err := gen.SteadyFor(ctx, s.o.rate, s.o.duration)
	s.rep.loadEnd = time.Now()
	s.rep.loadFor = s.rep.loadEnd.Sub(start)
	if err != nil {
		return err
	}
	s.rep.commits = commits
	s.logf("load stopped: %d events committed (%.0f/s), %d transactions failed", len(commits.ByID), commits.Rate(), commits.Failed)
	select {
	case <-faultsDone:
	case <-time.After(3 * time.Minute): // each fault's recovery wait is bounded by 2 min
		s.rep.failures = append(s.rep.failures, "the fault controller did not finish within 3 min of the load's end")
	}
	s.rep.faults = ctl.done()
	if err := <-downDone; err != nil {
		return err
	}
	return ctx.Err()
}

// down is the endpoint whose receiver goes down.
func (s *session) down() *endpoint {
	for _, ep := range s.eps {
		if ep.behave == behaveDown {
			return ep
		}
	}
	return s.eps[0]
}

// finish drains, lets the history settle, runs the ledger and fills the report.
func (s *session) finish(ctx context.Context) error {
	want, err := s.drain(ctx)
	if err != nil {
		return err
	}
	s.rep.exits = s.cluster.exits()
	s.rep.latencies(s.eps)
	s.rep.drainTime(want)
	// As the admin API (killed and restarted twice) states it.
	if s.rep.goneStatus, err = s.admin.EndpointStatus(ctx, s.gone().partner, s.gone().id); err != nil {
		return fmt.Errorf("410 endpoint status: %w", err)
	}
	s.logf("senders stopped; running the ledger")
	// The in-flight bound of a sender kill: every endpoint's max_in_flight at once.
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(max_in_flight), 0) FROM endpoint`).Scan(&s.rep.inFlight); err != nil {
		return fmt.Errorf("max_in_flight of the endpoints: %w", err)
	}
	receipts := s.rec.snapshot()
	s.rep.finishedPerCommit = busiestWindow(receipts, senderCommitInterval)
	lr, err := ledger.Check(ctx, s.pool, ledger.Options{Receipts: receipts, CoverAll: true, ClockSkew: 500 * time.Millisecond,
		Boundary: 100 * time.Millisecond, Outages: s.rep.outages(), Kills: s.rep.kills(), MaxUnrecorded: s.rep.unrecordedBound(), RequestTimeout: s.o.requestTimeout})
	if err != nil {
		return err
	}
	s.rep.ledger = lr
	// Every writer takes its row locks in one order (design.md section 4): a deadlock any
	// process or PostgreSQL logged is a broken promise, though the work was tried again.
	if s.rep.deadlocks, err = deadlocksIn(s.inf.dir); err != nil {
		return fmt.Errorf("log scan: %w", err)
	}
	s.rep.judge()
	s.rep.receiptsFile, s.rep.databaseURL, s.rep.dir = s.rec.path, s.inf.databaseURL(), s.inf.dir
	return nil
}

// drain waits (bounded) until every expected delivery was accepted and the history has
// settled, then stops the senders so that no request comes after the receipts are taken, and
// lets the recorder catch up. It returns the expected deliveries.
func (s *session) drain(ctx context.Context) (map[*endpoint][]string, error) {
	want, total, err := expected(ctx, s.pool, s.eps)
	if err != nil {
		return nil, err
	}
	s.rep.expected = total
	s.logf("draining: %d deliveries expected", total)
	if s.rep.left, err = waitDrained(ctx, want, s.o.drainTimeout, s.logf); err != nil {
		return nil, err
	}
	s.rep.drainedAt = time.Now()
	s.stopMonitor()
	s.logf("drain done: %d missing", s.rep.left)
	if err := waitSettled(ctx, s.pool, s.inf.brokers(), prefix+".recorder", true, time.Minute); err != nil {
		s.rep.settle = err.Error()
	}
	if s.rep.left > 0 || s.rep.settle != "" {
		s.rep.lags = groupLags(ctx, s.inf.brokers()) // where the missing work waits
		// and what the processes that should move it were doing
		s.rep.dumps = s.cluster.dump("fanout", "sender", "retry", "recorder")
	}
	if err := s.cluster.retire("sender", 30*time.Second); err != nil {
		return nil, err
	}
	if err := waitSettled(ctx, s.pool, s.inf.brokers(), prefix+".recorder", false, 30*time.Second); err != nil && s.rep.settle == "" {
		s.rep.settle = err.Error()
	}
	return want, nil
}

// gone is the 410 endpoint.
func (s *session) gone() *endpoint {
	for _, ep := range s.eps {
		if ep.behave == behaveGone {
			return ep
		}
	}
	return s.eps[len(s.eps)-1]
}

// kindOf is the kind of a fault target ("sender-2" → "sender").
func kindOf(target string) string { k, _, _ := strings.Cut(target, "-"); return k }

// deadlocksIn reads the logs of the run in dir for PostgreSQL's "deadlock detected": the
// processes' logs (dir/logs) and the run's own cluster's server log (dir/pg-<port>.log,
// deploy/local/pg.sh), which has every deadlock PostgreSQL detected whichever client met it,
// whether that client logged it or not.
func deadlocksIn(dir string) ([]harness.LogMatch, error) {
	processes, err := harness.FindInLogs(filepath.Join(dir, "logs"), harness.DeadlockDetected)
	if err != nil {
		return nil, err
	}
	server, err := harness.FindInLogs(dir, harness.DeadlockDetected)
	return append(processes, server...), err
}
