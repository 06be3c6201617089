package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// Infrastructure faults, beside the component kinds.
const (
	faultBroker   = "broker"   // SIGKILL of the broker's JVM, restarted after infraDown
	faultPostgres = "postgres" // pg_ctl -m immediate, restarted after infraDown
)

// infraKinds are the infrastructure faults every run with faults plans once each.
var infraKinds = []string{faultBroker, faultPostgres}

// infraDown is how long the broker and PostgreSQL stay down before they are started again.
const infraDown = 5 * time.Second

// fault is one planned fault, at an offset from the load's start.
type fault struct {
	at   time.Duration
	kind string // a component kind, faultBroker or faultPostgres
}

// planFaults spreads kills component kills (each kind at least twice) at random over 5 %–80 %
// of the run, the broker kill at 35 % and the PostgreSQL shutdown at 60 %; the last fifth is
// quiet, for the latency after faults.
func planFaults(d time.Duration, kills int, rng *rand.Rand) []fault {
	var which []string
	for _, k := range kinds {
		which = append(which, k, k)
	}
	for len(which) < kills {
		which = append(which, kinds[rng.IntN(len(kinds))])
	}
	rng.Shuffle(len(which), func(i, j int) { which[i], which[j] = which[j], which[i] })
	lo, span := d/20, d*75/100
	var plan []fault
	for _, k := range which {
		plan = append(plan, fault{at: lo + time.Duration(rng.Int64N(int64(span))), kind: k})
	}
	plan = append(plan, fault{at: d * 35 / 100, kind: faultBroker}, fault{at: d * 60 / 100, kind: faultPostgres})
	slices.SortFunc(plan, func(a, b fault) int { return int(a.at - b.at) })
	return plan
}

// faultRecord is what one fault did.
type faultRecord struct {
	kind, target string // target: the instance id, or the kind for broker and PostgreSQL
	active       bool   // a cdc that was the active one
	at           time.Time
	back         time.Duration // until ready again; negative: not within the bound
	takeover     time.Duration // the active cdc: until a cdc streams again; negative: not within the bound
	err          string
}

// controller executes a fault plan against the cluster and the services.
type controller struct {
	cluster *cluster
	inf     *infra
	rng     *rand.Rand
	log     func(format string, args ...any)

	mu      sync.Mutex
	records []faultRecord
	wg      sync.WaitGroup
}

// run executes plan, each fault at start+at, until the plan ends or ctx does; infrastructure
// faults run beside the kills, which keep their times. It returns when every fault has
// finished, its recovery included.
func (c *controller) run(ctx context.Context, start time.Time, plan []fault) {
	for _, f := range plan {
		if harness.Sleep(ctx, time.Until(start.Add(f.at))) != nil {
			break
		}
		c.wg.Add(1)
		switch f.kind {
		case faultBroker, faultPostgres:
			go func() { defer c.wg.Done(); c.infraFault(ctx, f.kind) }()
		default:
			c.kill(ctx, f.kind)
		}
	}
	c.wg.Wait()
}

// kill SIGKILLs a replica of kind (for cdc, the active one) and, beside, waits for it to be
// ready again.
func (c *controller) kill(ctx context.Context, kind string) {
	in, active := c.cluster.pick(c.rng, kind), false
	if kind == "cdc" {
		if a := c.activeCDC(ctx); a != nil {
			in, active = a, true
		}
	}
	rec := faultRecord{kind: kind, target: in.id, active: active, at: time.Now()}
	if err := in.kill(); err != nil {
		rec.err = err.Error()
	}
	c.log("killed %s%s", in.id, map[bool]string{true: " (the active cdc)"}[active])
	go func() {
		defer c.wg.Done()
		if active {
			rec.takeover = c.waitActiveCDC(ctx, rec.at, time.Minute)
		}
		rec.back = -1
		if in.waitReady(ctx, 2*time.Minute) == nil {
			rec.back = time.Since(rec.at)
		}
		c.add(rec)
	}()
}

// infraFault kills the broker or shuts PostgreSQL down immediately, and starts it again after
// infraDown.
func (c *controller) infraFault(ctx context.Context, kind string) {
	rec := faultRecord{kind: kind, target: kind, at: time.Now(), back: -1}
	stop, start := c.inf.killBroker, c.inf.startBroker
	if kind == faultPostgres {
		stop, start = func() error { return c.inf.crashPostgres(ctx) }, c.inf.startPostgres
	}
	err := stop()
	c.log("%s down (%v)", kind, err)
	if harness.Sleep(ctx, infraDown) == nil {
		if err2 := start(context.WithoutCancel(ctx)); err2 != nil {
			err = fmt.Errorf("%v; restart: %w", err, err2)
		} else {
			rec.back = time.Since(rec.at)
		}
	}
	if err != nil {
		rec.err = err.Error()
	}
	c.log("%s back after %s", kind, rec.back.Round(100*time.Millisecond))
	c.add(rec)
}

func (c *controller) add(r faultRecord) {
	c.mu.Lock()
	c.records = append(c.records, r)
	c.mu.Unlock()
}

// done returns the records of every fault, in time order.
func (c *controller) done() []faultRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.records)
	slices.SortFunc(out, func(a, b faultRecord) int { return a.at.Compare(b.at) })
	return out
}

// activeCDC returns the cdc replica that holds the slot (hookstream_cdc_active 1), waiting up
// to 5 s for one during a failover; nil when none is found.
func (c *controller) activeCDC(ctx context.Context) *instance {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, in := range c.cluster.ofKind("cdc") {
			if gauge(in.probe+"/metrics", "hookstream_cdc_active") == 1 {
				return in
			}
		}
		if harness.Sleep(ctx, 200*time.Millisecond) != nil {
			return nil
		}
	}
	return nil
}

// waitActiveCDC polls until a cdc replica streams again and returns how long after since that
// was; negative when none did within timeout.
func (c *controller) waitActiveCDC(ctx context.Context, since time.Time, timeout time.Duration) time.Duration {
	for time.Since(since) < timeout {
		for _, in := range c.cluster.ofKind("cdc") {
			if gauge(in.probe+"/metrics", "hookstream_cdc_active") == 1 {
				return time.Since(since)
			}
		}
		if harness.Sleep(ctx, 50*time.Millisecond) != nil {
			break
		}
	}
	return -1
}

// gauge reads an unlabelled metric from a /metrics page; -1 when it cannot.
func gauge(url, name string) float64 {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	return -1
}

// downWindow closes ep's listener at from (an offset from start) for d, then opens it again.
func downWindow(ctx context.Context, ep *endpoint, start time.Time, from, d time.Duration, log func(string, ...any)) error {
	if harness.Sleep(ctx, time.Until(start.Add(from))) != nil {
		return nil
	}
	ep.rx.Down()
	log("receiver of %s down for %s", ep, d)
	_ = harness.Sleep(ctx, d)
	err := ep.rx.ComeBack(context.WithoutCancel(ctx))
	log("receiver of %s back (%v)", ep, err)
	return err
}
