package retrytopics_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/retrytopics"
)

// env is one test's Kafka and topics.
type env struct {
	kafka *testenv.Kafka
	names topics.Names
	reg   *prometheus.Registry
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{kafka: testenv.NewKafka(t), reg: prometheus.NewRegistry()}
	e.names = e.kafka.CreateTopics(t)
	return e
}

// compressedTiers are the tiers of the tests: 100 ms to 2 s instead of 5 s to 3 h.
var compressedTiers = map[string]time.Duration{
	"5s":  100 * time.Millisecond,
	"1m":  200 * time.Millisecond,
	"10m": 500 * time.Millisecond,
	"1h":  time.Second,
	"3h":  2 * time.Second,
}

// config returns a configuration on the test's Kafka with compressed tiers and schedule.
func (e *env) config(t *testing.T) retrytopics.Config {
	cfg := retrytopics.DefaultConfig()
	cfg.Base = e.kafka.Base(t, e.reg)
	cfg.TierDelays = compressedTiers
	cfg.Schedule = retrytopics.Schedule{
		Delays:        []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second},
		Jitter:        0.2,
		MaxRetryAfter: 24 * time.Hour,
	}
	cfg.MaxPollWait = 200 * time.Millisecond
	cfg.FetchMaxWait = 100 * time.Millisecond
	cfg.StatsInterval = 200 * time.Millisecond
	cfg.RetryInterval = 200 * time.Millisecond
	cfg.TransactionTimeout = 10 * time.Second
	return cfg
}

func newScheduler(t *testing.T, cfg retrytopics.Config) *retrytopics.Scheduler {
	t.Helper()
	s, err := retrytopics.NewScheduler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// running is a set of tier consumers running in the background.
type running struct {
	tiers *retrytopics.Tiers
	stop  func()
}

// runTiers starts the tier consumers of cfg until the test ends or stop is called.
func runTiers(t *testing.T, cfg retrytopics.Config) *running {
	t.Helper()
	ts, err := retrytopics.NewTiers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stop := testenv.Go(t, "Tiers.Run", ts.Run)
	return &running{tiers: ts, stop: stop}
}

// waitAssigned waits until the tiers own every partition of their topics.
func (r *running) waitAssigned(t *testing.T, partitions int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		all := true
		for _, s := range r.tiers.Stats() {
			all = all && s.Assigned == partitions
		}
		if all {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("tiers not assigned after 60s: %+v", r.tiers.Stats())
}

// observed is a record a test reader saw, and when.
type observed struct {
	rec *kgo.Record
	at  time.Time
}

// reader reads a topic from the start, committed records only, in the background.
type reader struct {
	mu  sync.Mutex
	got []observed
}

func (e *env) read(t *testing.T, topic string) *reader {
	t.Helper()
	r := &reader{}
	e.kafka.Follow(t, topic, func(fs kgo.Fetches) {
		at := time.Now()
		r.mu.Lock()
		fs.EachRecord(func(rec *kgo.Record) { r.got = append(r.got, observed{rec, at}) })
		r.mu.Unlock()
	}, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	return r
}

func (r *reader) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func (r *reader) all() []observed {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// waitFor waits until n records were read.
func (r *reader) waitFor(t *testing.T, n int, timeout time.Duration) []observed {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for r.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d records after %s, want %d", r.count(), timeout, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r.all()
}

// settle waits for n records, then a little longer to catch duplicates arriving late.
func (r *reader) settle(t *testing.T, n int, timeout time.Duration) []observed {
	t.Helper()
	r.waitFor(t, n, timeout)
	time.Sleep(2 * time.Second)
	return r.all()
}

// release is a record the tiers released to the deliveries topic.
type release struct {
	d          records.Delivery
	releasedAt time.Time
	observedAt time.Time
}

func decodeReleases(t *testing.T, obs []observed) []release {
	t.Helper()
	out := make([]release, 0, len(obs))
	for _, o := range obs {
		var d records.Delivery
		if err := json.Unmarshal(o.rec.Value, &d); err != nil {
			t.Fatalf("deliveries record at %d/%d: %v", o.rec.Partition, o.rec.Offset, err)
		}
		if string(o.rec.Key) != d.EndpointID {
			t.Fatalf("deliveries record keyed %q, endpoint %q", o.rec.Key, d.EndpointID)
		}
		var at time.Time
		for _, h := range o.rec.Headers {
			if h.Key == retrytopics.HeaderReleasedAt {
				var err error
				if at, err = time.Parse(time.RFC3339Nano, string(h.Value)); err != nil {
					t.Fatalf("released_at %q: %v", h.Value, err)
				}
			}
		}
		if at.IsZero() {
			t.Fatalf("deliveries record %s without %s", d.DeliveryID, retrytopics.HeaderReleasedAt)
		}
		out = append(out, release{d: d, releasedAt: at, observedAt: o.at})
	}
	return out
}

// checkOnceNeverEarly asserts every expected delivery was released exactly once, never before its
// due time, and returns the lateness (released_at − due_at) of each.
func checkOnceNeverEarly(t *testing.T, rs []release, want map[string]records.Delivery) []time.Duration {
	t.Helper()
	seen := map[string]int{}
	var lateness []time.Duration
	early := 0
	for _, r := range rs {
		seen[r.d.DeliveryID]++
		w, ok := want[r.d.DeliveryID]
		if !ok {
			t.Errorf("released %s, which was never scheduled", r.d.DeliveryID)
			continue
		}
		if r.d.AttemptNo != w.AttemptNo || r.d.Deferrals != w.Deferrals || r.d.EventID != w.EventID || r.d.Trigger != w.Trigger {
			t.Errorf("released %s as attempt %d (deferrals %d, trigger %s, event %s), want attempt %d (deferrals %d, trigger %s, event %s)",
				r.d.DeliveryID, r.d.AttemptNo, r.d.Deferrals, r.d.Trigger, r.d.EventID, w.AttemptNo, w.Deferrals, w.Trigger, w.EventID)
		}
		// The releaser's own clock, and this test's: a record is visible only once its
		// transaction committed, so seeing it before its due time means it was released early.
		if r.releasedAt.Before(r.d.DueAt) || r.observedAt.Before(r.d.DueAt) {
			early++
			if early <= 5 {
				t.Errorf("%s released at %s (seen at %s), due at %s: early", r.d.DeliveryID,
					r.releasedAt.Format(time.RFC3339Nano), r.observedAt.Format(time.RFC3339Nano), r.d.DueAt.Format(time.RFC3339Nano))
			}
		}
		lateness = append(lateness, r.releasedAt.Sub(r.d.DueAt))
	}
	if early > 0 {
		t.Errorf("%d of %d releases early", early, len(rs))
	}
	lost, dups := 0, 0
	for id := range want {
		switch n := seen[id]; {
		case n == 0:
			lost++
		case n > 1:
			dups += n - 1
		}
	}
	if lost > 0 || dups > 0 {
		t.Errorf("%d of %d deliveries never released, %d duplicate releases", lost, len(want), dups)
	}
	return lateness
}

// percentile returns the p-th percentile (0..100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

// delivery makes the first attempt of a delivery of event i to one of 37 endpoints.
func delivery(i int) records.Delivery {
	ev := fmt.Sprintf("evt_%026d", i)
	ep := fmt.Sprintf("ep_%02d", i%37)
	return records.Delivery{
		V:          records.DeliveryVersion,
		DeliveryID: records.DeliveryID(ev, ep),
		EventID:    ev,
		EndpointID: ep,
		PartnerID:  "partner_1",
		EventType:  "customer.created",
		AttemptNo:  1,
		Trigger:    records.TriggerInitial,
		Body:       []byte(fmt.Sprintf(`{"event_id":%q,"n":%d}`, ev, i)),
		CreatedAt:  time.Now().UTC(),
	}
}

// failedAttempt is the evidence of a failed attempt of d that started at start.
func failedAttempt(d records.Delivery, start time.Time) records.Attempt {
	return records.Attempt{
		V: records.AttemptVersion, DeliveryID: d.DeliveryID, EventID: d.EventID, EndpointID: d.EndpointID,
		PartnerID: d.PartnerID, EventType: d.EventType, AttemptNo: d.AttemptNo, Trigger: d.Trigger,
		StartedAt: start, Status: 503, LatencyMS: 12, Outcome: records.OutcomeRetrying,
		ErrorCategory: records.CategoryHTTPStatus,
	}
}

// parallel runs fn(i) for i in [0, n) on workers goroutines and fails the test on any error.
func parallel(t *testing.T, n, workers int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
