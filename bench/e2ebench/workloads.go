package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookstream/hookstream/internal/filter"
	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// compressedSchedule is workload d's retry schedule, so that a receiver that was down is
// retried within minutes instead of hours.
const compressedSchedule = "1s,2s,5s,10s,30s,1m,2m,5m,10m"

// workload is one measurement, run in an environment of its own.
type workload struct {
	name          string
	about         func(o options) string
	retrySchedule string // HOOKSTREAM_RETRY_SCHEDULE of its processes; empty: the default
	// steady: it commits at a steady rate (its latency is the figure), so the warm-up before
	// run 1 includes a steady load.
	steady bool
	// vars are further variables of its processes (nil: none), for a limit the workload needs
	// beyond the defaults.
	vars func(o options) map[string]string
	run  func(ctx context.Context, s *session) error
}

var allWorkloads = []workload{
	{name: "a1", about: func(o options) string {
		return fmt.Sprintf("%d events, one per transaction, one endpoint: deliveries/s", o.aEvents)
	}, run: func(ctx context.Context, s *session) error { return s.burst(ctx, s.o.aEvents, 1, 1, true) }},
	{name: "a100", about: func(o options) string {
		return fmt.Sprintf("%d events, 100 per transaction (one outbox.AppendAll), one endpoint: deliveries/s", o.aEvents)
	}, run: func(ctx context.Context, s *session) error { return s.burst(ctx, s.o.aEvents, 100, 1, true) }},
	{name: "b", about: func(o options) string {
		return fmt.Sprintf("%d events, 100 per transaction (one outbox.AppendAll), %d endpoints of one partner: deliveries/s", o.bEvents, o.bEndpoints)
	}, run: func(ctx context.Context, s *session) error {
		return s.burst(ctx, s.o.bEvents, 100, s.o.bEndpoints, true)
	}},
	{name: "c", steady: true, about: func(o options) string {
		return fmt.Sprintf("steady %d events/s for %s, one per transaction, one endpoint: commit-to-receipt latency", o.cRate, o.cDuration)
	}, run: func(ctx context.Context, s *session) error { return s.steadyLoad(ctx, s.o.cRate) }},
	{name: "c2", steady: true, about: func(o options) string {
		return fmt.Sprintf("as c at %d events/s: commit-to-receipt latency", o.c2Rate)
	}, run: func(ctx context.Context, s *session) error { return s.steadyLoad(ctx, s.o.c2Rate) }},
	{name: "c3", steady: true, about: func(o options) string {
		return fmt.Sprintf("as c at %d events/s: commit-to-receipt latency", o.c3Rate)
	}, run: func(ctx context.Context, s *session) error { return s.steadyLoad(ctx, s.o.c3Rate) }},
	{name: "d", about: func(o options) string {
		return fmt.Sprintf("drain: %d events (100 per transaction) committed and fanned out while the receiver is down, "+
			"then deliveries/s from its return; retry schedule compressed to %s", o.dEvents, compressedSchedule)
	}, retrySchedule: compressedSchedule, run: func(ctx context.Context, s *session) error { return s.drain(ctx) }},
	{name: "e", about: func(o options) string {
		return fmt.Sprintf("as a1 (%d events) with a second endpoint that hangs until the sender's timeout: "+
			"the hot endpoint's deliveries/s, and how long the hung one takes to catch up once it answers", o.aEvents)
	}, run: func(ctx context.Context, s *session) error { return s.hotAndHung(ctx) }},
	{name: "f", steady: true, about: func(o options) string {
		return fmt.Sprintf("fairness: partner B steady at %d events/s to one endpoint for %s alone, then again beside partner A's "+
			"replay of %d deliveries (a replay job from the event log for each of its %d endpoints, of events committed and "+
			"delivered before): B's commit-to-receipt p99 alone and beside, and A's replayed deliveries/s", o.fRate, o.fDuration, o.fDeliveries, o.fEndpoints)
	}, vars: func(o options) map[string]string {
		// A replays every endpoint at once: the operator raised the partner's limit of replay
		// jobs queued or running (default 2) to its endpoint count for it.
		return map[string]string{"HOOKSTREAM_LIMIT_REPLAY_JOBS": strconv.Itoa(max(2, o.fEndpoints))}
	}, run: func(ctx context.Context, s *session) error { return s.fairness(ctx) }},
	{name: "g", steady: true, about: func(o options) string {
		return fmt.Sprintf("filter isolation: partner B steady at %d events/s to one endpoint for %s alone, then beside "+
			"partner A's %d events/s to %d endpoints with a one-comparison filter each, then with the costliest payload filter "+
			"the API accepts each (no event of A matches either): B's commit-to-receipt p99 in each", o.fRate, o.fDuration, o.gRate, o.gEndpoints)
	}, run: func(ctx context.Context, s *session) error { return s.filterIsolation(ctx) }},
}

// costliestFilter is the most expensive payload filter the API accepts (internal/filter's
// MaxCost and MaxList): four lists of 64 numbers of extreme exponent against an integer field of
// every event of the load (harness.NewEvent's version), none of which it equals.
func costliestFilter() string {
	list := strings.TrimSuffix(strings.Repeat("1e-100,", filter.MaxList), ",")
	clauses := make([]string, 4)
	for i := range clauses {
		clauses[i] = "data.version in [" + list + "]"
	}
	return strings.Join(clauses, " or ")
}

// cheapFilter is a filter of one comparison that no event of the load matches: the baseline
// beside which costliestFilter's cost shows.
const cheapFilter = `type == "never.sent"`

// filterIsolation is workload g (design.md section 7: one partner's payload filters cannot slow
// another partner's deliveries): partner B's steady load alone, then beside partner A's steady
// load with a one-comparison filter on each of A's endpoints, then beside the same load of A with
// the costliest filter the API accepts on each. No event of A matches either filter, so A's load
// costs cdc and fanout the same in both; only the evaluations differ. B's p99 beside the
// costliest filters should stay near its p99 beside the cheap ones.
func (s *session) filterIsolation(ctx context.Context) error {
	genB, epsB, err := s.addPartnerB(ctx)
	if err != nil {
		return err
	}
	epsA, idsA, err := s.addEndpointsFor(ctx, partner, s.o.gEndpoints, cheapFilter)
	if err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	alone, _, err := s.steadyB(ctx, genB, epsB)
	if err != nil {
		return err
	}
	// beside runs B's load beside A's and returns B's commits, A's and the metrics once every
	// event of both is fanned out.
	all := &harness.CommitLog{ByID: maps.Clone(alone.ByID)}
	var loadsA []*harness.CommitLog
	beside := func(what string) (*harness.CommitLog, map[string]float64, map[string]float64, error) {
		before, err := harness.ScrapeAllSums(ctx, s.env.metricsURLs, metricPrefix, "")
		if err != nil {
			return nil, nil, nil, err
		}
		s.logf("B beside A's %d events/s, %d endpoints with %s", s.o.gRate, len(epsA), what)
		var (
			loadA *harness.CommitLog
			aErr  error
			done  = make(chan struct{})
		)
		go func() {
			defer close(done)
			loadA, aErr = s.gen.Steady(ctx, s.o.gRate, s.o.fDuration)
		}()
		b, err := genB.Steady(ctx, s.o.fRate, s.o.fDuration)
		<-done
		if err = errors.Join(err, aErr); err != nil {
			return nil, nil, nil, err
		}
		if err := s.waitReceived(ctx, epsB, b, s.o.tailTimeout); err != nil {
			return nil, nil, nil, err
		}
		maps.Copy(all.ByID, b.ByID)
		loadsA = append(loadsA, loadA)
		after, err := s.waitMetric(ctx, metricFanoutEvents, before[metricFanoutEvents]+float64(len(b.ByID)+len(loadA.ByID)))
		return b, before, after, err
	}
	cheap, _, _, err := beside("a one-comparison filter each")
	if err != nil {
		return err
	}
	changes, err := harness.ScrapeAllSums(ctx, s.env.metricsURLs, metricPrefix, "")
	if err != nil {
		return err
	}
	for _, id := range idsA {
		if err := s.env.admin.SetFilter(ctx, partner, id, costliestFilter()); err != nil {
			return err
		}
	}
	// cdc publishes each change of a filter in a Kafka transaction of its own, which the events
	// behind it wait for (about 20 ms each on the real broker): the costly phase starts once
	// they are all published, so that what it measures is the filters' cost, not their change.
	if _, err := s.waitMetric(ctx, metricCDCEndpointRecords, changes[metricCDCEndpointRecords]+float64(len(idsA))); err != nil {
		return err
	}
	costly, before, after, err := beside("the costliest filter each")
	if err != nil {
		return err
	}
	aloneT, cheapT, costlyT := s.tally(alone, epsB), s.tally(cheap, epsB), s.tally(costly, epsB)
	if err := s.end(ctx, aloneT.received+cheapT.received+costlyT.received); err != nil {
		return err
	}
	// Each tally sees the other loads' events at B's endpoint as unknown: counted once, against all.
	aloneT.unknown, cheapT.unknown, costlyT.unknown = s.tally(all, epsB).unknown, 0, 0
	s.account(aloneT, "B alone", 0)
	s.account(cheapT, "B beside A's cheap filters", 0)
	s.account(costlyT, "B beside A's costliest filters", 0)
	for _, loadA := range loadsA {
		if t := s.tally(loadA, epsA); t.received > 0 {
			s.res.failures = append(s.res.failures, fmt.Sprintf("%d of A's events reached an endpoint whose filter refuses them", t.received))
		}
	}
	s.rateAndLatency(costlyT, costly.First)
	f := s.res.fig
	for _, t := range []tally{aloneT, cheapT} {
		slices.Sort(t.latencies)
	}
	f[figFilterAloneP99] = percentile(aloneT.latencies, 99)
	f[figFilterCheapP99] = percentile(cheapT.latencies, 99)
	f[figFilterCostlyP99] = f[figP99]
	f[figFilterEvals] = filterEvaluations(after) - filterEvaluations(before)
	return s.accountHops(ctx, costly, epsB[0]) // B's hops beside the costliest filters
}

// lookupWorkload returns the workload called name.
// workloadNames are the names of every workload, in their order.
func workloadNames() []string {
	var out []string
	for _, w := range allWorkloads {
		out = append(out, w.name)
	}
	return out
}

func lookupWorkload(name string) (workload, bool) {
	i := slices.IndexFunc(allWorkloads, func(w workload) bool { return w.name == name })
	if i < 0 {
		return workload{}, false
	}
	return allWorkloads[i], true
}

// burst commits events in transactions of perTx for endpoints endpoints as fast as the clients
// can, and measures deliveries/s from the first commit's start to the last receipt.
func (s *session) burst(ctx context.Context, events, perTx, endpoints int, withHops bool) error {
	eps, err := s.addEndpoints(ctx, endpoints)
	if err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	commits, err := s.gen.Burst(ctx, events, perTx)
	if err != nil {
		return err
	}
	return s.finish(ctx, commits, perTx, eps, withHops)
}

// steadyLoad commits rate events a second (one per transaction) to one endpoint for -c-duration
// and measures the latency.
func (s *session) steadyLoad(ctx context.Context, rate int) error {
	eps, err := s.addEndpoints(ctx, 1)
	if err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	commits, err := s.gen.Steady(ctx, rate, s.o.cDuration)
	if err != nil {
		return err
	}
	return s.finish(ctx, commits, 1, eps, true)
}

// finish waits for the deliveries of a load and accounts for them.
func (s *session) finish(ctx context.Context, commits *harness.CommitLog, perTx int, eps []int, withHops bool) error {
	s.logf("committed %d events at %.0f/s; waiting for %d deliveries", len(commits.ByID), commits.Rate(), len(commits.ByID)*len(eps))
	loadEnd := time.Now()
	if err := s.waitReceived(ctx, eps, commits, s.o.tailTimeout); err != nil {
		return err
	}
	t := s.tally(commits, eps)
	recorded, err := s.waitHistory(ctx, t.received, s.o.tailTimeout)
	if err != nil {
		return err
	}
	s.res.fig[figHistoryLag] = recorded.Sub(t.last).Seconds()
	if err := s.end(ctx, t.received); err != nil {
		return err
	}
	s.account(t, "all endpoints", time.Since(loadEnd))
	s.rateAndLatency(t, commits.First)
	s.accountCommits(commits, perTx)
	if withHops {
		return s.accountHops(ctx, commits, eps[0])
	}
	return nil
}

// drain commits a backlog while the receiver is down (its listener closed: connection
// refused), waits until fanout has made every delivery, brings the receiver back and measures
// how fast the backlog drains from that moment.
func (s *session) drain(ctx context.Context) error {
	eps, err := s.addEndpoints(ctx, 1)
	if err != nil {
		return err
	}
	s.rx.Down()
	defer func() { _ = s.rx.EnsureUp() }()
	if err := s.begin(ctx); err != nil {
		return err
	}
	made := initialMade(s.metricsBefore)
	commits, err := s.gen.Burst(ctx, s.o.dEvents, 100)
	if err != nil {
		return err
	}
	s.logf("committed %d events at %.0f/s with the receiver down; waiting for their deliveries", len(commits.ByID), commits.Rate())
	if err := s.waitFanout(ctx, made+float64(len(commits.ByID))); err != nil {
		return err
	}
	if err := s.rx.ComeBack(ctx); err != nil {
		return err
	}
	back := time.Now()
	s.res.fig[figDownFor] = back.Sub(commits.First).Seconds()
	s.logf("receiver back after %.1f s; waiting for %d deliveries", s.res.fig[figDownFor], len(commits.ByID))
	if err := s.waitReceived(ctx, eps, commits, s.o.drainTimeout); err != nil {
		return err
	}
	t := s.tally(commits, eps)
	if err := s.end(ctx, t.received); err != nil {
		return err
	}
	s.account(t, "all endpoints", time.Since(back))
	s.rateAndLatency(t, back)
	s.accountCommits(commits, 100)
	slices.SortFunc(t.receipts, func(a, b time.Time) int { return a.Compare(b) })
	s.res.fig[figDrainFirst], s.res.fig[figDrain99], s.res.fig[figDrain100] = math.NaN(), math.NaN(), math.NaN()
	if len(t.receipts) > 0 {
		s.res.fig[figDrainFirst] = t.receipts[0].Sub(back).Seconds()
	}
	if n := int(math.Ceil(0.99 * float64(t.expected))); n <= len(t.receipts) {
		s.res.fig[figDrain99] = t.receipts[n-1].Sub(back).Seconds()
	}
	s.res.fig[figDrainFlowing] = math.NaN()
	if t.missing == 0 {
		s.res.fig[figDrain100] = t.last.Sub(back).Seconds()
		if len(t.receipts) > 0 {
			s.res.fig[figDrainFlowing] = float64(t.expected) / t.last.Sub(t.receipts[0]).Seconds()
		}
	}
	s.res.notes = append(s.res.notes, "retry schedule compressed to "+compressedSchedule)
	return nil
}

// waitFanout waits until cdc and fanout have produced want initial deliveries in all (their
// counters).
func (s *session) waitFanout(ctx context.Context, want float64) error {
	_, err := s.waitSum(ctx, "initial deliveries made", initialMade, want)
	return err
}

// waitMetric waits, up to the drain timeout, until the components' sum of the counter name
// reaches want, and returns the metrics then.
func (s *session) waitMetric(ctx context.Context, name string, want float64) (map[string]float64, error) {
	return s.waitSum(ctx, name, func(m map[string]float64) float64 { return m[name] }, want)
}

// waitSum is waitMetric for a figure of the counters' sums, named name.
func (s *session) waitSum(ctx context.Context, name string, of func(map[string]float64) float64, want float64) (map[string]float64, error) {
	deadline := time.Now().Add(s.o.drainTimeout)
	nextNote := time.Now().Add(10 * time.Second)
	for {
		m, err := harness.ScrapeAllSums(ctx, s.env.metricsURLs, metricPrefix, "")
		if err != nil {
			return nil, err
		}
		if of(m) >= want {
			return m, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is %.0f, not %.0f, after %s", name, of(m), want, s.o.drainTimeout)
		}
		if time.Now().After(nextNote) {
			s.logf("%s is %.0f of %.0f", name, of(m), want)
			nextNote = time.Now().Add(10 * time.Second)
		}
		if err := harness.Sleep(ctx, 250*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// hotAndHung is a1 with a second endpoint of the same partner whose path holds every request
// until the sender gives up: the hot endpoint must not notice. Once the hot burst is received
// the second path answers again, and the time until it has every event is measured.
func (s *session) hotAndHung(ctx context.Context) error {
	eps, err := s.addEndpoints(ctx, 2)
	if err != nil {
		return err
	}
	hot, hung := eps[:1], eps[1:]
	s.rx.Endpoint(hung[0]).SetHang(true)
	defer s.rx.Endpoint(hung[0]).SetHang(false)
	if err := s.begin(ctx); err != nil {
		return err
	}
	commits, err := s.gen.Burst(ctx, s.o.aEvents, 1)
	if err != nil {
		return err
	}
	s.logf("committed %d events at %.0f/s; waiting for the hot endpoint", len(commits.ByID), commits.Rate())
	loadEnd := time.Now()
	if err := s.waitReceived(ctx, hot, commits, s.o.tailTimeout); err != nil {
		return err
	}
	hotT := s.tally(commits, hot)
	s.rx.Endpoint(hung[0]).SetHang(false)
	released := time.Now()
	s.logf("hot endpoint done; the hung endpoint answers again, waiting up to %s for it", s.o.recoverTimeout)
	if err := s.waitReceived(ctx, hung, commits, s.o.recoverTimeout); err != nil {
		return err
	}
	hungT := s.tally(commits, hung)
	if err := s.end(ctx, hotT.received+hungT.received); err != nil {
		return err
	}
	s.account(hotT, "hot /ep/0", time.Since(loadEnd))
	s.account(hungT, "hung /ep/1", time.Since(released))
	s.rateAndLatency(hotT, commits.First)
	s.accountCommits(commits, 1)
	s.res.fig[figHungMissing] = float64(hungT.missing)
	s.res.fig[figHungRecovery] = math.NaN()
	if hungT.missing == 0 {
		s.res.fig[figHungRecovery] = hungT.last.Sub(released).Seconds()
	}
	// The hot endpoint's hops say where a hanging neighbour slows it, if it does.
	return s.accountHops(ctx, commits, hot[0])
}
