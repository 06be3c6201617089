package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// partner is the one partner every workload's events belong to.
const partner = "bench"

// session is one workload running in its environment: what the workload functions share.
type session struct {
	o     options
	env   *env
	rx    *harness.Receiver
	lim   limits
	gen   *harness.Generator
	meter *cpuMeter
	res   *result
	log   io.Writer

	cpuBefore     cpuUse
	metricsBefore harness.Sums
	// attemptsBefore is how many attempts the history held when the load began.
	attemptsBefore int
}

// logf prints a progress line of the workload.
func (s *session) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "  [%s] %s\n", s.env.name, fmt.Sprintf(format, args...))
}

// addEndpoints creates n endpoints of the partner through the admin API, each with its own
// receiver path and the secret the API returned, subscribed to api_key.*.
func (s *session) addEndpoints(ctx context.Context, n int) ([]int, error) {
	eps, _, err := s.addEndpointsFor(ctx, partner, n, "")
	return eps, err
}

// addEndpointsFor is addEndpoints for partner p, each endpoint with the payload filter flt ("":
// none); it returns their receiver indexes and ids.
func (s *session) addEndpointsFor(ctx context.Context, p string, n int, flt string) ([]int, []string, error) {
	var (
		eps []int
		ids []string
	)
	for range n {
		idx, url := s.rx.AddEndpoint()
		id, secret, err := s.env.admin.CreateFilteredEndpoint(ctx, p, url, []string{"api_key.*"}, flt)
		if err != nil {
			return nil, nil, err
		}
		if err := s.rx.Endpoint(idx).SetSecret(secret); err != nil {
			return nil, nil, err
		}
		eps, ids = append(eps, idx), append(ids, id)
	}
	return eps, ids, nil
}

// begin takes the CPU times and metrics the workload's figures are increases of.
func (s *session) begin(ctx context.Context) error {
	m, err := harness.ScrapeAllSums(ctx, s.env.metricsURLs, metricPrefix, "")
	if err != nil {
		return err
	}
	if s.attemptsBefore, err = s.attempts(ctx); err != nil {
		return err
	}
	s.metricsBefore, s.cpuBefore = m, s.meter.sample(ctx)
	return nil
}

// attempts counts the attempts in the environment's history.
func (s *session) attempts(ctx context.Context) (int, error) {
	var n int
	if err := s.env.pool.QueryRow(ctx, `SELECT count(*) FROM delivery_attempt`).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the history's attempts: %w", err)
	}
	return n, nil
}

// waitHistory waits until the history holds an attempt for each of the load's deliveries (the
// recorder's work is part of the chain: its CPU counts, and a recorder that falls behind is
// not a faster chain) and returns when it did, to the tenth of a second. A history still short after timeout fails the
// workload.
func (s *session) waitHistory(ctx context.Context, deliveries int, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		n, err := s.attempts(ctx)
		if err != nil {
			return time.Time{}, err
		}
		if n-s.attemptsBefore >= deliveries {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			s.res.failures = append(s.res.failures, fmt.Sprintf("the history holds %d of %d attempts %s after the last receipt",
				n-s.attemptsBefore, deliveries, timeout))
			return time.Now(), nil
		}
		// Each count reads the whole table (50,000 rows after b), on the CPU the figures count:
		// polled every 20 ms it added to PostgreSQL's share of the burst's CPU per delivery.
		if err := harness.Sleep(ctx, 100*time.Millisecond); err != nil {
			return time.Time{}, err
		}
	}
}

// end records the CPU per delivery and the sender's deferrals and failed attempts since begin.
func (s *session) end(ctx context.Context, deliveries int) error {
	cpu := s.meter.sample(ctx).minus(s.cpuBefore)
	after, err := harness.ScrapeAllSums(ctx, s.env.metricsURLs, metricPrefix, s.env.logDir())
	if err != nil {
		return err
	}
	inc := after.Minus(s.metricsBefore)
	perDelivery := func(d time.Duration) float64 {
		if d < 0 || deliveries == 0 {
			return math.NaN()
		}
		return ms(d) / float64(deliveries)
	}
	f := s.res.fig
	f[figCPUHookstream], f[figCPUBroker] = perDelivery(cpu.hookstream), perDelivery(cpu.broker)
	f[figCPUPostgres], f[figCPUBench] = perDelivery(cpu.postgres), perDelivery(cpu.bench)
	f[figCPUTotal] = f[figCPUHookstream] + f[figCPUBench] + nanAsZero(f[figCPUBroker]) + nanAsZero(f[figCPUPostgres])
	for _, k := range cpuKinds {
		f[figCPUKind+k] = math.NaN()
		if v, ok := cpu.byKind[k]; ok {
			f[figCPUKind+k] = perDelivery(v)
		}
	}
	for _, reason := range deferralReasons {
		f[figDeferrals+reason] = 0
	}
	for reason, v := range inc.ByLabel(metricDeferrals, "reason") {
		if !slices.Contains(deferralReasons, reason) {
			reason = "other"
		}
		f[figDeferrals+reason] += v
	}
	attempts := inc.ByLabel(metricAttempts, "outcome")
	f[figFailedAttempts] = inc[metricAttempts] - attempts["delivered"]
	changes := inc.ByLabel(metricLimitChanges, "change")
	for _, c := range []string{"raised", "slowed", "failed"} {
		f[figLimitChanges+c] = changes[c]
	}
	return nil
}

func nanAsZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// waitReceived waits until every event of commits has reached every endpoint of eps, or
// timeout passes (what is missing then is the tally's to report); it says every 10 s how far
// it is.
func (s *session) waitReceived(ctx context.Context, eps []int, commits *harness.CommitLog, timeout time.Duration) error {
	want := len(commits.ByID) * len(eps)
	deadline := time.Now().Add(timeout)
	nextNote := time.Now().Add(10 * time.Second)
	for {
		got := 0
		for _, ep := range eps {
			got += s.rx.Endpoint(ep).Distinct()
		}
		if got >= want && s.tally(commits, eps).missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			s.logf("gave up waiting after %s: %d of %d deliveries received", timeout, got, want)
			return nil
		}
		if time.Now().After(nextNote) {
			s.logf("%d of %d deliveries received", got, want)
			nextNote = time.Now().Add(10 * time.Second)
		}
		if err := harness.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// tally is what the receiver got for a set of endpoints, against what was committed.
type tally struct {
	expected, received, missing, duplicates, bad, unknown int
	last                                                  time.Time   // the last first-receipt
	receipts                                              []time.Time // first receipts, in no order
	latencies                                             []float64   // commit→receipt ms of each received delivery
	points                                                []point     // (commit time since the first commit s, latency ms)
	example                                               string      // a missing delivery, for the failure message
}

// point is one delivery on the latency plot.
type point struct{ x, y float64 }

func (s *session) tally(commits *harness.CommitLog, eps []int) tally {
	var t tally
	for _, n := range eps {
		got, bad := s.rx.Endpoint(n).Snapshot()
		t.bad += bad
		for id, c := range commits.ByID {
			t.expected++
			r, ok := got[id]
			if !ok {
				t.missing++
				t.example = fmt.Sprintf("%s at /ep/%d", id, n)
				continue
			}
			t.received++
			t.duplicates += r.Count - 1
			t.receipts = append(t.receipts, r.First)
			if r.First.After(t.last) {
				t.last = r.First
			}
			lat := ms(r.First.Sub(c.End))
			t.latencies = append(t.latencies, lat)
			t.points = append(t.points, point{c.End.Sub(commits.First).Seconds(), lat})
		}
		for id := range got {
			if _, ok := commits.ByID[id]; !ok {
				t.unknown++
			}
		}
	}
	return t
}

// account adds a tally's counts to the result, keeps its latencies for the plot under series
// (the legend), and records a failure for what is missing or badly signed.
func (s *session) account(t tally, series string, waited time.Duration) {
	f := s.res.fig
	f[figDeliveries] += float64(t.expected)
	f[figMissing] += float64(t.missing)
	f[figDuplicates] += float64(t.duplicates)
	f[figBadSignatures] += float64(t.bad)
	f[figUnknown] += float64(t.unknown)
	s.res.points[series] = t.points
	if t.missing > 0 {
		s.res.failures = append(s.res.failures, fmt.Sprintf("%s: %d of %d deliveries missing %s after the load ended (e.g. %s)",
			series, t.missing, t.expected, waited.Round(time.Second), t.example))
	}
	if t.bad > 0 {
		s.res.failures = append(s.res.failures, fmt.Sprintf("%s: %d requests with bad signatures", series, t.bad))
	}
}

// rateAndLatency sets the workload's headline figures from a tally: deliveries/s counted from
// since to the last receipt, and the commit→receipt percentiles.
func (s *session) rateAndLatency(t tally, since time.Time) {
	f := s.res.fig
	f[figRate] = math.NaN()
	if t.received > 0 {
		f[figRate] = float64(t.received) / t.last.Sub(since).Seconds()
	}
	slices.Sort(t.latencies)
	f[figP50], f[figP95], f[figP99] = percentile(t.latencies, 50), percentile(t.latencies, 95), percentile(t.latencies, 99)
	f[figMax] = percentile(t.latencies, 100)
}

// accountCommits puts the commit side's figures into the result.
func (s *session) accountCommits(commits *harness.CommitLog, perTx int) {
	s.res.fig[figCommitRate] = commits.Rate()
	s.res.fig[figPGRatio] = commits.Rate() / s.lim.pgRate[perTx]
	s.res.fig[figBareRatio] = s.res.fig[figRate] / s.lim.bareRPS
}

// accountHops reads the run's Kafka timestamps and splits commit→receipt into its hops.
func (s *session) accountHops(ctx context.Context, commits *harness.CommitLog, ep int) error {
	h, err := readHopTimes(ctx, s.env.brokers, s.env.prefix, commits.ByID, 2*time.Minute)
	if err != nil {
		return err
	}
	got, _ := s.rx.Endpoint(ep).Snapshot()
	cdc, fanout, send := h.hops(commits.ByID, got)
	if err := h.writeTimeline(filepath.Join(s.env.logDir(), "timeline.csv"), commits, got); err != nil {
		return err
	}
	if err := h.writeEvents(filepath.Join(s.env.logDir(), "events.csv"), commits, got); err != nil {
		return err
	}
	if len(cdc) < len(commits.ByID) {
		s.res.notes = append(s.res.notes, fmt.Sprintf("hops: Kafka timestamps found for %d of %d events", len(cdc), len(commits.ByID)))
	}
	for _, hop := range []struct {
		name string
		v    []float64
	}{{figHopCDC, cdc}, {figHopFanout, fanout}, {figHopSender, send}} {
		slices.Sort(hop.v)
		s.res.fig[hop.name+"p50"], s.res.fig[hop.name+"p99"] = percentile(hop.v, 50), percentile(hop.v, 99)
	}
	return nil
}

// percentile of sorted values by nearest rank; NaN when there are none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// checkProcesses records a failure when a process of the environment exited during the
// workload.
func (s *session) checkProcesses() {
	if err := processErrors(s.env); err != nil {
		s.res.failures = append(s.res.failures, "processes died during the workload: "+err.Error())
	}
}
