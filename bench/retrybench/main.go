// Command retrybench measures the retry tiers (retrytopics, `hookstream retry`): the memory of a
// process holding a large backlog of retries, and how late near-due retries are released while
// it does.
//
//	go run ./bench/retrybench -brokers 127.0.0.1:19092
//	go run ./bench/retrybench -embedded
//
// It fills the tiers with -records retries due hours to a day away (the backlog), runs every
// tier consumer in this process, waits until the look-ahead buffers are full, and reads this
// process's VmRSS and VmHWM. Then, -runs times, a stream of -near retries due -near-wait after
// they are scheduled measures release lateness (released_at − due_at); medians over the runs are
// reported. Filling and the near-due stream run in child processes, and with -embedded the
// Kafka cluster does too, so the memory figures are the tier consumers' alone.
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/embeddedkafka"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/retrytopics"
)

type options struct {
	brokers    string
	embedded   bool
	records    int
	body       int
	partitions int
	runs       int
	near       int
	nearWait   time.Duration
	rate       int
	keep       bool
	lookRecs   int
	lookBytes  int
	prefix     string
	role       string
	run        int
	workers    int
	verbose    bool
}

func main() {
	var o options
	flag.StringVar(&o.brokers, "brokers", "", "Kafka seed brokers, comma separated (or -embedded)")
	flag.BoolVar(&o.embedded, "embedded", false, "run an embedded kfake cluster in a child process")
	flag.IntVar(&o.records, "records", 1_000_000, "retries held in the tiers (the backlog)")
	flag.IntVar(&o.body, "body", 512, "event body bytes per retry")
	flag.IntVar(&o.partitions, "partitions", 12, "partitions per topic")
	flag.IntVar(&o.runs, "runs", 3, "lateness runs (medians are reported)")
	flag.IntVar(&o.near, "near", 2000, "near-due retries per lateness run")
	flag.DurationVar(&o.nearWait, "near-wait", 5*time.Second, "wait of the near-due retries")
	flag.IntVar(&o.rate, "rate", 200, "near-due retries scheduled per second")
	flag.BoolVar(&o.keep, "keep", false, "keep the benchmark's topics")
	def := retrytopics.DefaultConfig()
	flag.IntVar(&o.lookRecs, "lookahead-records", def.LookAheadRecords, "look-ahead records per tier")
	flag.IntVar(&o.lookBytes, "lookahead-bytes", def.LookAheadBytes, "look-ahead bytes per tier")
	flag.IntVar(&o.workers, "workers", 256, "concurrent Scheduler calls while filling")
	flag.BoolVar(&o.verbose, "v", false, "log the tier consumers")
	// Roles of the child processes.
	flag.StringVar(&o.role, "role", "", "internal: fill, near or kafka")
	flag.StringVar(&o.prefix, "prefix", "", "internal: topic prefix")
	flag.IntVar(&o.run, "run", 0, "internal: lateness run number")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch o.role {
	case "":
		err = drive(ctx, o)
	case "kafka":
		err = serveKafka()
	case "fill":
		err = fill(ctx, o)
	case "near":
		err = near(ctx, o)
	default:
		err = fmt.Errorf("unknown role %q", o.role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "retrybench:", err)
		os.Exit(1)
	}
}

// config is the retry configuration of the benchmark: the defaults, on its brokers and prefix.
func (o options) config() retrytopics.Config {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg := retrytopics.DefaultConfig()
	cfg.Base = component.Base{Brokers: strings.Split(o.brokers, ","), Prefix: o.prefix, Logger: log}
	cfg.LookAheadRecords = o.lookRecs
	cfg.LookAheadBytes = o.lookBytes
	cfg.StatsInterval = time.Second
	return cfg
}

// child runs this program again in another role.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Scanner
}

func startChild(ctx context.Context, args ...string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	return &child{cmd: cmd, stdin: stdin, stdout: sc}, nil
}

// result reads the child's lines until one starts with prefix and returns the rest of it.
func (c *child) result(prefix string) (string, error) {
	for c.stdout.Scan() {
		line := c.stdout.Text()
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return rest, nil
		}
		fmt.Println("  " + line)
	}
	if err := c.stdout.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("child ended without %q", prefix)
}

func (c *child) wait() error {
	_ = c.stdin.Close()
	return c.cmd.Wait()
}

// memory is what /proc/self/status says of this process.
type memory struct{ rss, hwm int64 } // bytes

func readMemory() memory {
	var m memory
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = kb << 10
		case "VmHWM:":
			m.hwm = kb << 10
		}
	}
	return m
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// lateness is a near-due run's result, as the near child prints it.
type lateness struct {
	Released int           `json:"released"`
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
	Max      time.Duration `json:"max"`
	Early    int           `json:"early"`
	Dups     int           `json:"dups"`
}

// drive is the retry process: it prepares the topics, has them filled, runs the tiers and
// measures.
func drive(ctx context.Context, o options) error {
	began := time.Now()
	if o.embedded == (o.brokers != "") {
		return errors.New("give -brokers or -embedded")
	}
	if o.embedded {
		k, err := startChild(ctx, "-role", "kafka")
		if err != nil {
			return err
		}
		defer func() { _ = k.wait() }()
		if o.brokers, err = k.result("ADDR "); err != nil {
			return err
		}
	}
	o.prefix = "retrybench" + scratch.RandomHex(4)
	fmt.Printf("retrybench: %d held retries of %d-byte bodies, %d partitions, brokers %s, prefix %s\n",
		o.records, o.body, o.partitions, o.brokers, o.prefix)
	cleanup, err := prepareTopics(ctx, o)
	if err != nil {
		return err
	}
	defer cleanup()
	common := []string{"-brokers", o.brokers, "-prefix", o.prefix, "-body", strconv.Itoa(o.body)}

	// 1. The backlog, written by a child process (the sender's side).
	r := results{}
	if r.fill, err = fillBacklog(ctx, o, common); err != nil {
		return err
	}
	r.before = readMemory()

	// 2. The tier consumers, in this process.
	ts, stopTiers, err := startTiers(ctx, o)
	if err != nil {
		return err
	}
	defer stopTiers()

	// 3. Wait until the tiers see the whole backlog and their buffers stopped growing.
	if r.held, err = awaitBacklog(ctx, ts, o.records); err != nil {
		return err
	}
	r.settled = readMemory()
	r.tiers = len(ts.Stats())

	// 4. Lateness runs, sampling this process's memory meanwhile.
	if r.runs, r.peak, err = measureLateness(ctx, o, common, r.settled.rss); err != nil {
		return err
	}
	r.end = readMemory()
	r.total = time.Since(began)
	return r.report(o)
}

// prepareTopics creates the benchmark's topics and returns what deletes them (unless -keep) and
// closes the admin client.
func prepareTopics(ctx context.Context, o options) (cleanup func(), err error) {
	admCl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(o.brokers, ",")...))
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(admCl)
	tc := topics.DefaultConfig()
	tc.Prefix, tc.Partitions = o.prefix, int32(o.partitions)
	if _, err := topics.Ensure(ctx, admCl, tc); err != nil {
		admCl.Close()
		return nil, err
	}
	return func() {
		defer admCl.Close()
		if o.keep {
			return
		}
		var names []string
		for _, s := range tc.Specs() {
			names = append(names, s.Name)
		}
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := adm.DeleteTopics(dctx, names...); err != nil {
			fmt.Fprintln(os.Stderr, "retrybench: delete topics:", err)
		}
	}, nil
}

// fillBacklog has a child process schedule the -records retries of the backlog and says how long
// it took.
func fillBacklog(ctx context.Context, o options, common []string) (time.Duration, error) {
	t0 := time.Now()
	f, err := startChild(ctx, append(common, "-role", "fill", "-records", strconv.Itoa(o.records), "-workers", strconv.Itoa(o.workers))...)
	if err != nil {
		return 0, err
	}
	if _, err := f.result("FILLED "); err != nil {
		return 0, err
	}
	if err := f.wait(); err != nil {
		return 0, fmt.Errorf("fill: %w", err)
	}
	took := time.Since(t0)
	fmt.Printf("filled %d retries in %s (%.0f/s)\n", o.records, took.Round(time.Millisecond), float64(o.records)/took.Seconds())
	return took, nil
}

// startTiers runs every tier consumer in this process until stop is called.
func startTiers(ctx context.Context, o options) (ts *retrytopics.Tiers, stop func(), err error) {
	ts, err = retrytopics.NewTiers(o.config())
	if err != nil {
		return nil, nil, err
	}
	tctx, stopTiers := context.WithCancel(ctx)
	tiersDone := make(chan error, 1)
	go func() { tiersDone <- ts.Run(tctx) }()
	return ts, func() {
		stopTiers()
		if err := <-tiersDone; err != nil {
			fmt.Fprintln(os.Stderr, "retrybench: tiers:", err)
		}
	}, nil
}

// awaitBacklog waits until the tiers hold all records and their look-ahead buffers stopped
// growing for three seconds, collects the garbage and prints what each tier holds in memory.
func awaitBacklog(ctx context.Context, ts *retrytopics.Tiers, records int) (held int64, err error) {
	t1 := time.Now()
	lastBuffered, stable := -1, 0
	for stable < 3 {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
		held = 0
		buffered := 0
		for _, s := range ts.Stats() {
			held += s.Held
			buffered += s.Buffered
		}
		if held >= int64(records) && buffered == lastBuffered {
			stable++
		} else {
			stable = 0
		}
		lastBuffered = buffered
		if time.Since(t1) > 5*time.Minute {
			return 0, fmt.Errorf("tiers hold %d of %d retries after 5 minutes", held, records)
		}
	}
	runtime.GC()
	fmt.Printf("tiers hold %d retries (settled in %s); in memory:\n", held, time.Since(t1).Round(time.Second))
	for _, s := range ts.Stats() {
		if s.Held > 0 {
			fmt.Printf("  %-4s held %8d  buffered %6d (%s)\n", s.Tier, s.Held, s.Buffered, mib(int64(s.BufferedBytes)))
		}
	}
	return held, nil
}

// measureLateness makes the -runs lateness runs, sampling this process's RSS meanwhile, and
// returns their results and the highest RSS seen (at least startRSS).
func measureLateness(ctx context.Context, o options, common []string, startRSS int64) ([]lateness, int64, error) {
	var peak atomic.Int64
	peak.Store(startRSS)
	sctx, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopSampling(); wg.Wait() }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-sctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			if m := readMemory(); m.rss > peak.Load() {
				peak.Store(m.rss)
			}
		}
	}()
	var runs []lateness
	for run := 1; run <= o.runs; run++ {
		l, err := latenessRun(ctx, o, common, run)
		if err != nil {
			return nil, 0, err
		}
		runs = append(runs, l)
	}
	stopSampling()
	wg.Wait()
	return runs, peak.Load(), nil
}

// latenessRun has a child process schedule -near retries due -near-wait later and report how
// late they were released.
func latenessRun(ctx context.Context, o options, common []string, run int) (lateness, error) {
	n, err := startChild(ctx, append(common, "-role", "near", "-near", strconv.Itoa(o.near),
		"-near-wait", o.nearWait.String(), "-rate", strconv.Itoa(o.rate), "-run", strconv.Itoa(run))...)
	if err != nil {
		return lateness{}, err
	}
	line, err := n.result("LATENESS ")
	if err != nil {
		return lateness{}, err
	}
	if err := n.wait(); err != nil {
		return lateness{}, fmt.Errorf("near: %w", err)
	}
	var l lateness
	if err := json.Unmarshal([]byte(line), &l); err != nil {
		return lateness{}, err
	}
	fmt.Printf("run %d: %d near-due retries (wait %s): lateness p50 %s, p99 %s, max %s; early %d, duplicates %d\n",
		run, l.Released, o.nearWait, l.P50.Round(time.Microsecond), l.P99.Round(time.Microsecond), l.Max.Round(time.Microsecond), l.Early, l.Dups)
	return l, nil
}

// results are what drive measured.
type results struct {
	held                 int64 // retries the tiers held
	tiers                int
	before, settled, end memory // before the tiers, holding the backlog, after the runs
	peak                 int64  // the highest RSS during the runs
	runs                 []lateness
	fill, total          time.Duration
}

// median is the median over the runs of one of their figures.
func (r results) median(f func(lateness) time.Duration) time.Duration {
	var v []time.Duration
	for _, l := range r.runs {
		v = append(v, f(l))
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

// report prints the summary, and fails the benchmark when a retry was released early or twice.
func (r results) report(o options) error {
	early, dups := 0, 0
	for _, l := range r.runs {
		early += l.Early
		dups += l.Dups
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println()
	fmt.Println("=== retrybench summary ===")
	fmt.Printf("held retries            %d (%d-byte bodies) across %d tiers\n", r.held, o.body, r.tiers)
	fmt.Printf("look-ahead per tier     %d records / %s\n", o.lookRecs, mib(int64(o.lookBytes)))
	fmt.Printf("RSS before the tiers    %s\n", mib(r.before.rss))
	fmt.Printf("RSS holding the backlog %s (settled), %s (peak during runs)\n", mib(r.settled.rss), mib(r.peak))
	fmt.Printf("VmHWM of this process   %s   (target: under 256 MiB)\n", mib(r.end.hwm))
	fmt.Printf("Go heap in use          %s\n", mib(int64(ms.HeapInuse)))
	fmt.Printf("release lateness        p50 %s, p99 %s (medians of %d runs of %d retries due %s after scheduling)\n",
		r.median(func(l lateness) time.Duration { return l.P50 }).Round(time.Microsecond),
		r.median(func(l lateness) time.Duration { return l.P99 }).Round(time.Microsecond), len(r.runs), o.near, o.nearWait)
	fmt.Printf("early releases          %d, duplicates %d\n", early, dups)
	fmt.Printf("fill                    %s; total %s\n", r.fill.Round(time.Second), r.total.Round(time.Second))
	if r.end.hwm >= 256<<20 {
		fmt.Println("RESULT: over the 256 MiB target")
	}
	if early > 0 || dups > 0 {
		return errors.New("early or duplicate releases")
	}
	return nil
}

// serveKafka runs an embedded cluster until stdin closes.
func serveKafka() error {
	c, err := embeddedkafka.Start(embeddedkafka.Config{})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Println("ADDR " + strings.Join(c.Brokers(), ","))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

func benchDelivery(run, i, body int) records.Delivery {
	ev := fmt.Sprintf("evt_r%02d_%022d", run, i)
	ep := fmt.Sprintf("ep_%04d", i%1000)
	// Random hex in a JSON document: about as compressible as a real event, unlike a
	// repeated pattern, which would let compressed fetches carry far more than they weigh.
	raw := make([]byte, max(body-20, 2)/2)
	for j := range raw {
		raw[j] = byte(rand.IntN(256))
	}
	b := []byte(fmt.Sprintf(`{"usage":%q}`, hex.EncodeToString(raw)))
	return records.NewDelivery(ev, ep, "partner_bench", "usage.reported", records.TriggerInitial, b, time.Now().UTC())
}

// fill writes the backlog through the Scheduler: retries due 1 to 30 hours away, spread over
// the 1h, 3h, 6h, 12h and 24h tiers.
func fill(ctx context.Context, o options) error {
	cfg := o.config()
	s, err := retrytopics.NewScheduler(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	var next, done atomic.Int64
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for w := 0; w < o.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= o.records || ctx.Err() != nil {
					return
				}
				wait := time.Hour + time.Duration(rand.Int64N(int64(29*time.Hour)))
				if err := s.Defer(ctx, benchDelivery(0, i, o.body), wait); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
				if n := done.Add(1); n%100000 == 0 {
					fmt.Printf("fill: %d\n", n)
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	fmt.Printf("FILLED %d\n", done.Load())
	return nil
}

// near schedules a stream of near-due retries and reads their releases from the deliveries
// topic; it prints their lateness.
func near(ctx context.Context, o options) error {
	cfg := o.config()
	names := topics.For(o.prefix)
	// Read from the current end of deliveries: earlier runs' releases are not ours.
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	if err != nil {
		return err
	}
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, names.Deliveries)
	cl.Close()
	if err != nil {
		return err
	}
	start := map[int32]kgo.Offset{}
	ends.Each(func(l kadm.ListedOffset) { start[l.Partition] = kgo.NewOffset().At(l.Offset) })
	rd, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{names.Deliveries: start}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return err
	}
	defer rd.Close()

	s, err := retrytopics.NewScheduler(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	run := o.run
	prodErr := make(chan error, 1)
	go func() {
		tick := time.NewTicker(time.Second / time.Duration(max(o.rate, 1)))
		defer tick.Stop()
		var wg sync.WaitGroup
		var failed atomic.Value
		for i := 0; i < o.near; i++ {
			select {
			case <-ctx.Done():
				prodErr <- ctx.Err()
				return
			case <-tick.C:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Defer(ctx, benchDelivery(run, i, o.body), o.nearWait); err != nil {
					failed.Store(err)
				}
			}()
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			prodErr <- err
			return
		}
		prodErr <- nil
	}()

	prefix := fmt.Sprintf("evt_r%02d_", run)
	seen := map[string]int{}
	var late []time.Duration
	var l lateness
	deadline := time.Now().Add(time.Duration(o.near/max(o.rate, 1))*time.Second + o.nearWait + 2*time.Minute)
	for len(seen) < o.near {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d near-due retries released in time", len(seen), o.near)
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := rd.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		at := time.Now()
		fs.EachRecord(func(r *kgo.Record) {
			var d records.Delivery
			if json.Unmarshal(r.Value, &d) != nil || !strings.HasPrefix(d.EventID, prefix) {
				return
			}
			if seen[d.DeliveryID]++; seen[d.DeliveryID] > 1 {
				l.Dups++
				return
			}
			var released time.Time
			for _, h := range r.Headers {
				if h.Key == retrytopics.HeaderReleasedAt {
					released, _ = time.Parse(time.RFC3339Nano, string(h.Value))
				}
			}
			if released.Before(d.DueAt) || at.Before(d.DueAt) {
				l.Early++
			}
			late = append(late, released.Sub(d.DueAt))
		})
	}
	if err := <-prodErr; err != nil {
		return err
	}
	time.Sleep(time.Second) // a late duplicate would arrive now
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	rd.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
		var d records.Delivery
		if json.Unmarshal(r.Value, &d) == nil && strings.HasPrefix(d.EventID, prefix) {
			l.Dups++
		}
	})
	cancel()
	slices.Sort(late)
	l.Released = len(late)
	l.P50, l.P99, l.Max = late[len(late)/2], late[(len(late)-1)*99/100], late[len(late)-1]
	b, _ := json.Marshal(l)
	fmt.Printf("LATENESS %s\n", b)
	return nil
}
