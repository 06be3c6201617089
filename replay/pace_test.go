package replay

import (
	"testing"
	"time"
)

// Design section 7, the partners' fair share: the bulk replays of one partner share its
// replay_deliveries_per_sec in a process, all its jobs together, while another partner's job
// is not held back by that partner's pace.
func TestBulkReplaysOfAPartnerSharePace(t *testing.T) {
	t.Parallel()
	const rate = 100
	e := newEnv(t, func(c *Config) { c.RatePerSec, c.Workers = rate, 3 })
	e.partner("acme")
	e.partner("other")
	ep1, ep2 := e.endpoint("acme", "customer.*"), e.endpoint("acme", "customer.*")
	ep3 := e.endpoint("other", "customer.*")
	_, _, base1 := e.seedHistory("acme", ep1, 400, 1)
	e.seedHistory("acme", ep2, 400, 1)
	e.seedHistory("other", ep3, 100, 1)
	run(t, e.eng)
	start := time.Now()
	f := Filter{Since: base1.Add(-time.Minute), Until: time.Now(), State: "failed"}
	jobs := []string{e.queue("acme", ep1, SourceHistory, f), e.queue("acme", ep2, SourceHistory, f)}
	other := e.queue("other", ep3, SourceHistory, f)

	o := e.waitJob("other", other, time.Minute, nil)
	otherTook := time.Since(start)
	for _, id := range jobs {
		if j := e.waitJob("acme", id, time.Minute, nil); j.State != JobSucceeded || j.Done != 400 {
			t.Fatalf("acme's job: %+v", j)
		}
	}
	acmeTook := time.Since(start)
	if o.State != JobSucceeded || o.Done != 100 {
		t.Fatalf("other's job: %+v", o)
	}
	// 800 deliveries at 100 a second, the first second's worth at once: at least 7 s.
	if least := time.Duration(800-rate) * time.Second / rate; acmeTook < least {
		t.Fatalf("acme's two jobs replayed 800 deliveries in %s, faster than its %d a second allows (at least %s)", acmeTook, rate, least)
	}
	if otherTook >= acmeTook {
		t.Fatalf("other's 100 deliveries took %s, no sooner than acme's paced 800 (%s): held back by acme's pace", otherTook, acmeTook)
	}
	if n := len(e.deliveries(900, time.Minute)); n != 900 {
		t.Fatalf("%d delivery records, want 900", n)
	}
}
