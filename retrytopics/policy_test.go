package retrytopics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
)

// R22: one endpoint's policy gives two event types their own schedules. Each
// delivery, failing every attempt, is scheduled by its type's delays (within the jitter, from
// the attempt's start), released by the shared tiers no earlier than due, and dead-lettered
// after its type's attempt count; a type the policy does not name follows the endpoint's own
// rule, and without a policy the configured schedule.
func TestPolicyGivesEachEventTypeItsSchedule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t) // configured schedule: 100 ms, 200 ms, 500 ms, 1 s (5 attempts)
	cfg.Bounds = retrypolicy.Bounds{MinDelay: 50 * time.Millisecond, MaxDelay: 10 * time.Second, MaxAttempts: 8}
	sched := newScheduler(t, cfg)
	runTiers(t, cfg)
	out := e.read(t, e.names.Deliveries)
	dlq := e.read(t, e.names.DLQ)

	var policy retrypolicy.Policy
	if err := json.Unmarshal([]byte(`{"attempts": 2, "event_types": {
		"balance.*": {"delays_seconds": [0.3, 0.6, 0.3]},
		"usage.finalized": {"delays_seconds": [1.5]}}}`), &policy); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		typ    string
		policy *retrypolicy.Policy
		delays []time.Duration // the expected waits, before jitter
	}{
		{"balance.low", &policy, []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, 300 * time.Millisecond}},
		{"usage.finalized", &policy, []time.Duration{1500 * time.Millisecond}},
		{"customer.created", &policy, []time.Duration{100 * time.Millisecond}}, // the endpoint's attempts: 2, the configured delays
		{"customer.updated", nil, cfg.Schedule.Delays},
	}
	ctx := context.Background()
	released := 0
	for i, c := range cases {
		d := delivery(100 + i)
		d.EventType = c.typ
		attempts := 1
		for {
			start := time.Now()
			next, final, err := sched.Schedule(ctx, d, failedAttempt(d, start), 0, c.policy)
			if err != nil {
				t.Fatal(err)
			}
			if final {
				break
			}
			if attempts > len(c.delays) {
				t.Fatalf("%s: attempt %d scheduled; its policy allows %d", c.typ, attempts+1, len(c.delays)+1)
			}
			want := c.delays[attempts-1]
			if wait := next.Sub(start); wait < time.Duration(float64(want)*(1-cfg.Schedule.Jitter)) || wait > time.Duration(float64(want)*(1+cfg.Schedule.Jitter)) {
				t.Fatalf("%s: attempt %d due %s after the failed one started, want %s ±%v", c.typ, attempts+1, wait, want, cfg.Schedule.Jitter)
			}
			released++
			rs := decodeReleases(t, out.waitFor(t, released, 30*time.Second))
			r := rs[len(rs)-1]
			if r.d.DeliveryID != d.DeliveryID || r.d.AttemptNo != attempts+1 || r.releasedAt.Before(next) {
				t.Fatalf("%s: released attempt %d of %s at %s, want attempt %d of %s not before %s",
					c.typ, r.d.AttemptNo, r.d.DeliveryID, r.releasedAt, attempts+1, d.DeliveryID, next)
			}
			d = r.d
			attempts++
		}
		if attempts != len(c.delays)+1 {
			t.Fatalf("%s: %d attempts, want %d", c.typ, attempts, len(c.delays)+1)
		}
		var letter records.DeadLetter
		if err := json.Unmarshal(dlq.waitFor(t, i+1, 30*time.Second)[i].rec.Value, &letter); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("exhausted after %d attempts", attempts); letter.EventID != d.EventID || letter.Reason != want {
			t.Fatalf("%s: dead letter %+v, want %q", c.typ, letter, want)
		}
	}
}
