package sender

import (
	"testing"
	"time"
)

// The adaptive concurrency of one endpoint (R21): it rises one request per round while the
// endpoint answers at its baseline and work waits, never above max_in_flight; it halves once
// per round on failures, and falls when latency rises; it never goes below one.
func TestConcurrencyAdapts(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	rounds := func(c *concurrency, n int, latency time.Duration, failed, saturated bool) {
		for r := 0; r < n; r++ {
			for i, k := 0, c.current(); i < k; i++ {
				now = now.Add(time.Millisecond)
				c.observe(latency, failed, saturated, now)
			}
		}
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
	rounds(&c, 10, time.Millisecond, false, true)
	if c.current() != 18 {
		t.Fatalf("after 10 fast saturated rounds: %d, want 18", c.current())
	}
	rounds(&c, 100, time.Millisecond, false, true)
	if c.current() != 64 {
		t.Fatalf("capped at %d, want the ceiling 64", c.current())
	}

	// A burst of failures in flight: one halving for the round, not one per failure.
	for i := 0; i < 10; i++ {
		c.observe(15*time.Second, true, true, now)
	}
	if c.current() != 32 {
		t.Fatalf("after failures in one round: %d, want 32", c.current())
	}
	rounds(&c, 20, 15*time.Second, true, true)
	if c.current() != 1 {
		t.Fatalf("failing for 20 rounds: %d, want the floor 1", c.current())
	}

	// Latency well above the baseline makes it fall although nothing fails.
	c.reset(8, 64)
	rounds(&c, 5, time.Millisecond, false, true) // baseline 1 ms, limit 13
	before := c.current()
	rounds(&c, 5, 50*time.Millisecond, false, true)
	if c.current() >= before {
		t.Fatalf("latency 50x the baseline: %d, was %d", c.current(), before)
	}

	// A lower max_in_flight caps what was learned.
	c.setCeiling(3)
	if c.current() > 3 {
		t.Fatalf("ceiling 3, limit %d", c.current())
	}
	if c.reset(8, 2); c.current() != 2 {
		t.Fatalf("starts at %d with max_in_flight 2", c.current())
	}
}
