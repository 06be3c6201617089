// Command e2ebench measures what a user of hookstream sees with the whole chain running
// (make bench): events committed through outbox.Writer in PostgreSQL, carried by cdc into Kafka,
// fanned out, signed and POSTed by the sender to a verifying receiver in this process.
//
//	go build -o .data/bench/hookstream ./cmd/hookstream
//	go run ./bench/e2ebench -bin .data/bench/hookstream -runs 1 -workloads a1
//
// Every workload of every run and mode gets a fresh environment: a migrated database and its
// cdc slot (named like the database), a topic prefix, a secret key, an operator token, new
// endpoints and new processes, started from the built binary (-bin) — one per component in mode
// separate, on the real broker; `hookstream dev` with its embedded Kafka in mode dev. Logs go to
// -out/logs/<run>-<mode>-<workload>/<component>.log, beside metrics-<i>.prom (every process's
// /metrics at the workload's end) and timeline.csv (per 250 ms: how many of the events were
// committed, on the events topic, on the deliveries topic and received: where a burst queues),
// and events.csv (each event's hops in milliseconds, in commit order: which hop a stall is in);
// the processes are stopped (SIGTERM, then SIGKILL) when the workload ends, and die with this
// program (Pdeathsig) if it is killed. Before run 1, mode separate runs an unmeasured a1 of
// -warmup-events and, when a steady workload is to run, an unmeasured c of -warmup-steady, so
// that no run pays for the JVM broker's JIT compiler.
//
// Workloads: a1 and a100 (a burst to one endpoint, 1 or 100 events per transaction), b (a burst
// to 10 endpoints), c, c2 and c3 (steady rates, 1,000, 2,000 and 600 events/s: latency), d (a
// backlog drained after the receiver was down, with a compressed retry schedule), e (a1 beside
// a second endpoint that hangs), f (one partner's steady load beside another's replay of 200,000 deliveries), g (one
// partner's steady load beside another's costly filters). Each
// run first measures the physical limits the figures are divided by: a bare net/http loop making
// the same signed POSTs to the same receiver, and PostgreSQL committing the same transactions
// with nothing else running. For a1, a100, b (its first endpoint), c, c2, c3 and e's hot
// endpoint the Kafka timestamps of the events and deliveries records split commit→receipt into
// its hops. The bursts and steady loads end when the history holds an attempt of every delivery
// (history +s: how long after the last receipt, to within 0.1 s; a history still short after
// -tail-timeout fails the workload), so the recorder's work counts. Per workload it also reports
// the sender's deferrals (metric increases) and the CPU
// per delivery of hookstream, the broker, PostgreSQL and this program, then split by process:
// each hookstream command, and PostgreSQL's by what it serves (the benchmark's own commits, by
// their application_name; cdc's walsender; hookstream's sessions; the rest).
//
// It prints per-run tables and the medians over the runs, writes them to -out/results.md and
// draws -out/latency-<workload>-<mode>.png. It exits 1 when a delivery is missing after the
// bounded wait, a signature does not verify, or a process's log says PostgreSQL detected a
// deadlock or PostgreSQL counted one in the environment's database (pg_stat_database; the
// warm-up's included), saying which.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hookstream/hookstream/internal/commalist"
	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// options are the program's flags.
type options struct {
	bin          string
	databaseURL  string
	brokers      []string
	runs         int
	modes        []string
	workloads    []string
	out          string
	kafkaPIDFile string

	clients    int
	partitions int
	aEvents    int
	bEvents    int
	bEndpoints int
	cRate      int
	c2Rate     int
	c3Rate     int
	cDuration  time.Duration
	dEvents    int
	// f: partner A's backlog in deliveries over fEndpoints endpoints, partner B's steady rate
	// and how long each of B's two loads lasts.
	fDeliveries int
	fEndpoints  int
	fRate       int
	fDuration   time.Duration
	// g: partner A's endpoints, each with the costliest payload filter the API accepts, and
	// A's steady rate beside partner B's (f's rate and duration).
	gEndpoints int
	gRate      int

	bareRequests int
	limitEvents  int

	startTimeout   time.Duration
	tailTimeout    time.Duration
	drainTimeout   time.Duration
	recoverTimeout time.Duration
	warmupEvents   int
	warmupSteady   time.Duration
	stopGrace      time.Duration
	logLevel       string
	set            setVars // extra HOOKSTREAM_ variables of every hookstream process
}

// parseOptions reads the flags of args.
func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("e2ebench", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", ".data/bench/hookstream", "path of a built hookstream binary")
	fs.StringVar(&o.databaseURL, "database-url", "postgres://postgres@127.0.0.1:54329/hookstream?sslmode=disable", "PostgreSQL server; a database is created per environment")
	brokers := fs.String("brokers", "127.0.0.1:19092", "Kafka brokers of mode separate, comma-separated")
	fs.IntVar(&o.runs, "runs", 3, "runs; figures are medians over them")
	modes := fs.String("modes", "separate,dev", "modes: separate (a process per component, real broker), dev (hookstream dev)")
	workloads := fs.String("workloads", "a1,a100,b,c,c2,c3,d,e,f,g", "workloads to run, comma-separated")
	fs.StringVar(&o.out, "out", ".data/bench", "directory of results.md, the plots and logs/")
	fs.StringVar(&o.kafkaPIDFile, "kafka-pid-file", ".data/kafka/kafka.pid", "pid file of the Kafka broker, for its CPU time (else every kafka.Kafka JVM counts)")
	fs.IntVar(&o.clients, "clients", 32, "concurrent committing clients of the load generator and of the bare loop")
	fs.IntVar(&o.partitions, "partitions", 12, "partitions of the partitioned topics (HOOKSTREAM_TOPIC_PARTITIONS)")
	fs.IntVar(&o.aEvents, "a-events", 20000, "events of a1, a100 and e")
	fs.IntVar(&o.warmupEvents, "warmup-events", 5000, "events of the unmeasured a1 that warms the broker up before run 1 (mode separate); 0: none")
	fs.DurationVar(&o.warmupSteady, "warmup-steady", 20*time.Second, "duration of the unmeasured c that follows it when a steady workload (c, c2, c3, f, g) is to run; 0: none")
	fs.IntVar(&o.bEvents, "b-events", 5000, "events of b")
	fs.IntVar(&o.bEndpoints, "b-endpoints", 10, "endpoints of b")
	fs.IntVar(&o.cRate, "c-rate", 1000, "events per second of c")
	fs.IntVar(&o.c2Rate, "c2-rate", 2000, "events per second of c2")
	fs.IntVar(&o.c3Rate, "c3-rate", 600, "events per second of c3")
	fs.DurationVar(&o.cDuration, "c-duration", time.Minute, "duration of c, c2 and c3")
	fs.IntVar(&o.dEvents, "d-events", 200000, "events of d")
	fs.IntVar(&o.fDeliveries, "f-deliveries", 200000, "deliveries of f's replay (partner A): its events are committed and delivered first, then replayed to each of -f-endpoints")
	fs.IntVar(&o.fEndpoints, "f-endpoints", 10, "endpoints of partner A in f, one replay job each")
	fs.IntVar(&o.fRate, "f-rate", 100, "events per second of f's steady partner B")
	fs.DurationVar(&o.fDuration, "f-duration", 30*time.Second, "duration of each of f's steady loads (B alone, B beside A's replay)")
	fs.IntVar(&o.gEndpoints, "g-endpoints", 98, "endpoints of partner A in g, each with the costliest filter the API accepts")
	fs.IntVar(&o.gRate, "g-rate", 400, "events per second of partner A in g, each evaluated against every filter of -g-endpoints")
	fs.IntVar(&o.bareRequests, "bare-requests", 20000, "requests of the bare HTTP loop")
	fs.IntVar(&o.limitEvents, "limit-events", 20000, "events of each PostgreSQL limit measurement")
	fs.DurationVar(&o.startTimeout, "start-timeout", 2*time.Minute, "bound on an environment's start")
	fs.DurationVar(&o.tailTimeout, "tail-timeout", 10*time.Minute, "bound on the wait for deliveries after a load ends (a, b, c, e's hot endpoint), and then for the history (a, b, c)")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", 15*time.Minute, "bound on d's waits: for fanout, and for the drain after the receiver is back")
	fs.DurationVar(&o.recoverTimeout, "recover-timeout", 5*time.Minute, "bound on the wait for e's hung endpoint after it answers again")
	fs.DurationVar(&o.stopGrace, "stop-grace", 30*time.Second, "time a process gets after SIGTERM before SIGKILL")
	o.set = setVars{}
	fs.Var(o.set, "set", "NAME=VALUE: a HOOKSTREAM_ variable of every hookstream process, e.g. HOOKSTREAM_CDC_COMMIT_INTERVAL=25ms to measure a trade-off (repeatable)")
	fs.StringVar(&o.logLevel, "log-level", "", "HOOKSTREAM_LOG_LEVEL of every hookstream process (debug adds the Kafka client's own log of transactions, metadata refreshes, produce errors and retries); empty: the default")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.brokers, o.modes, o.workloads = splitList(*brokers), splitList(*modes), splitList(*workloads)
	return o, o.validate()
}

// validate reports every flag the benchmark cannot run with.
func (o options) validate() error {
	var errs []error
	if st, err := os.Stat(o.bin); err != nil || st.IsDir() {
		errs = append(errs, fmt.Errorf("-bin %s: not a built hookstream binary (go build -o %s ./cmd/hookstream)", o.bin, o.bin))
	}
	for _, m := range o.modes {
		if m != modeSeparate && m != modeDev {
			errs = append(errs, fmt.Errorf("-modes: %q is neither separate nor dev", m))
		}
	}
	if slices.Contains(o.modes, modeSeparate) && len(o.brokers) == 0 {
		errs = append(errs, errors.New("-brokers: mode separate needs a broker"))
	}
	for _, w := range o.workloads {
		if _, ok := lookupWorkload(w); !ok {
			errs = append(errs, fmt.Errorf("-workloads: no workload %q (%s)", w, strings.Join(workloadNames(), ", ")))
		}
	}
	if len(o.modes) == 0 || len(o.workloads) == 0 {
		errs = append(errs, errors.New("-modes and -workloads must name at least one each"))
	}
	for name, v := range map[string]int{"runs": o.runs, "clients": o.clients, "partitions": o.partitions, "a-events": o.aEvents,
		"b-events": o.bEvents, "b-endpoints": o.bEndpoints, "c-rate": o.cRate, "c2-rate": o.c2Rate, "c3-rate": o.c3Rate, "d-events": o.dEvents,
		"f-deliveries": o.fDeliveries, "f-endpoints": o.fEndpoints, "f-rate": o.fRate,
		"g-endpoints": o.gEndpoints, "g-rate": o.gRate,
		"bare-requests": o.bareRequests, "limit-events": o.limitEvents} {
		if v < 1 {
			errs = append(errs, fmt.Errorf("-%s must be at least 1, got %d", name, v))
		}
	}
	if o.warmupEvents < 0 {
		errs = append(errs, fmt.Errorf("-warmup-events must be 0 or more, got %d", o.warmupEvents))
	}
	if o.warmupSteady < 0 {
		errs = append(errs, fmt.Errorf("-warmup-steady must be 0 or more, got %s", o.warmupSteady))
	}
	for name, v := range map[string]time.Duration{"c-duration": o.cDuration, "f-duration": o.fDuration, "start-timeout": o.startTimeout, "tail-timeout": o.tailTimeout,
		"drain-timeout": o.drainTimeout, "recover-timeout": o.recoverTimeout, "stop-grace": o.stopGrace} {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("-%s must be positive, got %s", name, v))
		}
	}
	return errors.Join(errs...)
}

// splitList reads the comma-separated lists of the flags as hookstream reads its settings'.
var splitList = commalist.Split

func main() {
	o := harness.ParseOptions("e2ebench", os.Args[1:], parseOptions)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }() // a second signal kills at once; the children die with us
	os.Exit(run(ctx, o, os.Stdout))
}

// run runs the benchmark and returns the exit status: 1 when it failed, saying why on w.
func run(ctx context.Context, o options, w io.Writer) int {
	rep, err := benchmark(ctx, o, w)
	if ctx.Err() != nil {
		fmt.Fprintln(w, "e2ebench: interrupted; the processes were stopped and the databases dropped")
		return 1
	}
	if err != nil {
		fmt.Fprintln(w, "e2ebench:", err)
		return 1
	}
	if f := rep.failures(); len(f) > 0 {
		fmt.Fprintf(w, "\ne2ebench: FAILED: %d problems (listed above as FAIL)\n", len(f))
		return 1
	}
	return 0
}

// setVars are the -set flags: variables given to every hookstream process.
type setVars map[string]string

func (v setVars) String() string {
	var out []string
	for k, val := range v {
		out = append(out, k+"="+val)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func (v setVars) Set(s string) error {
	name, val, ok := strings.Cut(s, "=")
	if !ok || !strings.HasPrefix(name, "HOOKSTREAM_") {
		return fmt.Errorf("want HOOKSTREAM_NAME=VALUE, got %q", s)
	}
	v[name] = val
	return nil
}
