package sender

import (
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
)

// The adaptive concurrency of one endpoint (R21): it rises one request per round while the
// endpoint answers at its baseline and work waits, never above max_in_flight; it halves once
// per round on failures, and falls when latency rises; it never goes below one.
func TestConcurrencyAdapts(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	changes := map[string]int{} // what the ends of rounds reported (the sender counts them)
	rounds := func(c *concurrency, n int, latency time.Duration, failed, saturated bool) {
		for r := 0; r < n; r++ {
			for i, k := 0, c.current(); i < k; i++ {
				now = now.Add(time.Millisecond)
				if ch := c.observe(latency, failed, saturated, now); ch != "" {
					changes[ch]++
				}
			}
		}
	}
	expect := func(when string, want map[string]int) {
		t.Helper()
		for _, ch := range concurrencyChanges {
			if changes[ch] != want[ch] {
				t.Fatalf("%s: changes %v, want %v", when, changes, want)
			}
		}
		clear(changes)
	}
	var c concurrency
	c.reset(8, 64)
	if c.current() != 8 {
		t.Fatalf("starts at %d, want 8", c.current())
	}

	rounds(&c, 10, time.Millisecond, false, false)
	if c.current() != 8 {
		t.Fatalf("rose to %d with no work waiting", c.current())
	}
	expect("10 fast rounds, nothing waiting", nil)
	rounds(&c, 10, time.Millisecond, false, true)
	if c.current() != 18 {
		t.Fatalf("after 10 fast saturated rounds: %d, want 18", c.current())
	}
	expect("10 fast saturated rounds", map[string]int{changeRaised: 10})
	rounds(&c, 100, time.Millisecond, false, true)
	if c.current() != 64 {
		t.Fatalf("capped at %d, want the ceiling 64", c.current())
	}
	expect("100 more, up to the ceiling", map[string]int{changeRaised: 64 - 18})

	// A round of failures (timeouts in flight): one halving for the round, not one per failure.
	rounds(&c, 1, 15*time.Second, true, true)
	if c.current() != 32 {
		t.Fatalf("after a round of failures: %d, want 32", c.current())
	}
	expect("a round of failures", map[string]int{changeFailed: 1})
	// One request in ten failing, a timeout among fast answers, does not cut it.
	for i := 0; i < 320; i++ {
		if i%10 == 9 {
			c.observe(15*time.Second, true, true, now)
		} else {
			c.observe(time.Millisecond, false, true, now)
		}
	}
	if c.current() < 32 {
		t.Fatalf("10 %% failures among fast answers cut the limit to %d", c.current())
	}
	c.newRound() // the failing rounds below start on a round boundary
	halvings := 0
	for l := c.limit; l > 1; l = max(1, l*failedFactor) {
		halvings++
	}
	rounds(&c, 20, 15*time.Second, true, true)
	if c.current() != 1 {
		t.Fatalf("failing for 20 rounds: %d, want the floor 1", c.current())
	}
	expect("20 rounds failing: halved down to the floor, then unchanged", map[string]int{changeFailed: halvings})

	// Latency well above the baseline makes it fall although nothing fails.
	c.reset(8, 64)
	rounds(&c, 5, time.Millisecond, false, true) // baseline 1 ms, limit 13
	before := c.current()
	clear(changes)
	rounds(&c, 5, 50*time.Millisecond, false, true)
	if c.current() >= before {
		t.Fatalf("latency 50x the baseline: %d, was %d", c.current(), before)
	}
	expect("5 rounds at 50x the baseline", map[string]int{changeSlowed: 5})
	if c.current() != 8 {
		t.Fatalf("latency alone cut the limit to %d, below the starting 8", c.current())
	}
	rounds(&c, 20, 50*time.Millisecond, false, true)
	if c.current() != 8 {
		t.Fatalf("20 more slow rounds: %d, want the starting 8 (a busy host's stalls slow a fast receiver too)", c.current())
	}
	expect("20 more slow rounds, at the starting limit", nil)
	rounds(&c, 1, 15*time.Second, true, true)
	if c.current() != 4 {
		t.Fatalf("a round of failures at the starting limit: %d, want 4", c.current())
	}
	expect("failures go below the starting limit", map[string]int{changeFailed: 1})

	// A lower max_in_flight caps what was learned.
	c.setCeiling(3)
	if c.current() > 3 {
		t.Fatalf("ceiling 3, limit %d", c.current())
	}
	if c.reset(8, 2); c.current() != 2 {
		t.Fatalf("starts at %d with max_in_flight 2", c.current())
	}
}

// Latency alone never cuts below what carries the endpoint's demand at the latency a round may
// have before it counts as slowed: 2,000 records a second at a 1 ms baseline need 24 in flight
// at 12 ms; once the demand falls to 100 a second, the cuts go on down to the starting limit.
func TestConcurrencyKeepsWhatTheDemandNeeds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	offer := func(c *concurrency, perSec int, d time.Duration) {
		step := time.Second / time.Duration(perSec)
		for end := now.Add(d); now.Before(end); now = now.Add(step) {
			c.offer(now)
		}
	}
	rounds := func(c *concurrency, n int, latency time.Duration) {
		for r := 0; r < n; r++ {
			for i, k := 0, c.current(); i < k; i++ {
				c.observe(latency, false, true, now)
			}
		}
	}
	var c concurrency
	c.reset(8, 64)
	rounds(&c, 40, time.Millisecond) // baseline 1 ms; raised to 48
	offer(&c, 2000, 2*time.Second)
	if c.demand < 1900 || c.demand > 2100 {
		t.Fatalf("demand %.0f a second, want about 2,000", c.demand)
	}
	rounds(&c, 30, 50*time.Millisecond)
	if got := c.current(); got != 24 {
		t.Fatalf("slow rounds at 2,000 a second cut the limit to %d, want 24 (2,000/s × 12 ms)", got)
	}
	offer(&c, 100, 2*time.Second)
	rounds(&c, 30, 50*time.Millisecond)
	if got := c.current(); got != 8 {
		t.Fatalf("slow rounds at 100 a second: %d, want the starting 8", got)
	}
	// The demand's floor never passes the ceiling.
	c.setCeiling(16)
	offer(&c, 5000, 2*time.Second)
	if f := c.demandFloor(); f != 16 {
		t.Fatalf("floor at 5,000 a second under a ceiling of 16: %.0f", f)
	}
}

// A lane is judged by how often a slot frees while work waits, not by its request time alone:
// 64 requests of 50 ms each in flight keep up; 8 requests of 1 s do not; a rate limit of 10/s
// does not; before any measure, the request time over the concurrency decides.
func TestLaneSlow(t *testing.T) {
	const maxSlotWait, stall = 20 * time.Millisecond, 250 * time.Millisecond
	var now0 time.Time // set by busyLane: the time of the last request end
	busyLane := func(limit int, latency time.Duration, n int) *lane {
		l := &lane{}
		l.conc.reset(limit, limit)
		l.queue = make([]*work, 1) // work waits at every request end
		now := time.Unix(1_700_000_000, 0)
		for i := 0; i < n; i++ {
			now = now.Add(latency / time.Duration(limit))
			l.observe(latency, false, now)
		}
		now0 = now
		return l
	}
	if l := busyLane(64, 50*time.Millisecond, 200); l.slowBecause(now0, maxSlotWait, stall) != "" {
		t.Fatalf("64 in flight at 50 ms (a slot every %v) judged slow", l.gap)
	}
	if l := busyLane(8, time.Second, 50); l.slowBecause(now0, maxSlotWait, stall) != slowService {
		t.Fatalf("8 in flight at 1 s (a slot every %v) judged fast", l.gap)
	}
	unmeasured := &lane{ewma: time.Second}
	unmeasured.conc.reset(8, 8)
	if unmeasured.slowBecause(now0, maxSlotWait, stall) != slowService {
		t.Fatal("1 s requests, 8 in flight, no measure yet: judged fast")
	}
	limited := busyLane(8, time.Millisecond, 50)
	rate := 10.0
	limited.configure(&records.Endpoint{MaxInFlight: 8, RateLimitPerSec: &rate}, 8)
	if limited.slowBecause(now0, maxSlotWait, stall) != slowRateLimited {
		t.Fatal("a rate limit of 10/s judged fast")
	}
	deferring := busyLane(8, time.Millisecond, 50)
	deferring.deferring = true
	if deferring.slowBecause(now0, maxSlotWait, stall) != slowDeferring {
		t.Fatal("a lane deferring its overflow judged fast")
	}
	// Requests out and none ended for longer than the stall bound: hanging, whatever the past.
	hanging := busyLane(8, time.Millisecond, 50)
	hanging.busy = 8
	if hanging.slowBecause(now0.Add(100*time.Millisecond), maxSlotWait, stall) != "" {
		t.Fatal("a fast lane judged stalled 100 ms after its last request ended")
	}
	if hanging.slowBecause(now0.Add(time.Second), maxSlotWait, stall) != slowStalled {
		t.Fatal("a lane with requests out and none ended for 1 s judged fast")
	}
}

// A request hanging until the timeout does not hold a slot of a fast endpoint's limit for the
// whole timeout: past max(stragglerFloor, stragglerFactor × baseline) another request may start
// in its place, never above max_in_flight. An endpoint slow for every request keeps its limit.
func TestStragglersFreeTheirSlot(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	newLane := func(baseline time.Duration, ceiling int) *lane {
		l := &lane{clock: func() time.Time { return now }}
		l.conc.reset(8, ceiling)
		l.conc.baseline, l.conc.baselineAt = baseline, now
		return l
	}
	fast := newLane(2*time.Millisecond, 64)
	var hung []*work
	for i := 0; i < 6; i++ {
		w := &work{}
		hung = append(hung, w)
		fast.sent(w, now)
	}
	if got := fast.limit(); got != 8 {
		t.Fatalf("limit %d with requests just sent, want 8", got)
	}
	now = now.Add(stragglerFloor + time.Millisecond)
	fresh := &work{}
	fast.sent(fresh, now)
	if got := fast.limit(); got != 14 {
		t.Fatalf("limit %d with 6 stragglers, want 8+6", got)
	}
	fast.done(hung[0])
	fast.done(fresh)
	if got := fast.limit(); got != 13 {
		t.Fatalf("limit %d after one straggler ended, want 13", got)
	}

	capped := newLane(2*time.Millisecond, 10)
	slow := newLane(500*time.Millisecond, 64) // stragglers only after 10 s
	for _, l := range []*lane{capped, slow} {
		for i := 0; i < 6; i++ {
			l.sent(&work{}, now)
		}
	}
	now = now.Add(5 * time.Second)
	if got := capped.limit(); got != 10 {
		t.Errorf("limit %d above max_in_flight 10", got)
	}
	if got := slow.limit(); got != 8 {
		t.Errorf("slow endpoint: limit %d, want 8 (its requests are not stragglers)", got)
	}
	capped.ordered = true
	if got := capped.limit(); got != 1 {
		t.Errorf("ordered endpoint: limit %d, want 1", got)
	}
}
