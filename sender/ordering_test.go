package sender_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// Design section 7, strict order: an ordered strict endpoint failing for longer than the
// bounded mode's maximum hold keeps its head, retried by its schedule, and receives every
// event in commit order once it recovers; the hold shows in the gauges and in the attempts.
func TestStrictOrderOutlastsTheMaximumHold(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_strict", "p_a", func(ep *records.Endpoint) { ep.Ordered, ep.StrictOrder = true, true })
	ds := deliveries(6, "p_a", "ep_strict", "customer.created")
	var (
		mu        sync.Mutex
		downUntil time.Time
	)
	const outage = 1500 * time.Millisecond
	e.rcv.handle("ep_strict", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		mu.Lock()
		defer mu.Unlock()
		if downUntil.IsZero() {
			downUntil = time.Now().Add(outage)
		}
		if time.Now().Before(downUntil) {
			w.WriteHeader(503)
		}
	})
	e.retrier.delay = 100 * time.Millisecond // the compressed schedule: a wait of 100 ms, never exhausted
	cfg, reg := e.meteredConfig()
	cfg.OrderedBackoff, cfg.OrderedMaxBackoff = 50*time.Millisecond, 50*time.Millisecond
	cfg.OrderedMaxHold = 300 * time.Millisecond // the outage lasts five times as long
	e.start(cfg)
	e.deliver(0, ds...)

	waitFor(t, 10*time.Second, "the held head in the gauges", func() bool {
		return testenv.Value(t, reg, "hookstream_sender_ordered_heads_held") == 1 &&
			testenv.Value(t, reg, "hookstream_sender_ordered_records_held") == 5 &&
			testenv.Value(t, reg, "hookstream_sender_ordered_oldest_head_age_seconds") > 0.3
	})
	waitFor(t, 30*time.Second, "every event delivered", func() bool {
		return e.attempts.count(func(a records.Attempt) bool {
			return a.EndpointID == "ep_strict" && a.Outcome == records.OutcomeDelivered
		}) == len(ds)
	})
	var delivered []string
	for _, id := range e.rcv.eventIDs("ep_strict") {
		if len(delivered) == 0 || delivered[len(delivered)-1] != id {
			delivered = append(delivered, id)
		}
	}
	want := make([]string, len(ds))
	for i, d := range ds {
		want[i] = d.EventID
	}
	if !slices.Equal(delivered, want) {
		t.Fatalf("strict endpoint received, repeats folded,\n%v\nwant commit order\n%v", delivered, want)
	}
	if n := len(e.retrier.scheduled("ep_strict")) + len(e.retrier.deferred("ep_strict")); n != 0 {
		t.Fatalf("the strict endpoint's head left the lane %d times", n)
	}
	as := e.attempts.of(ds[0].DeliveryID)
	if len(as) < 10 {
		t.Fatalf("the head was attempted %d times in a %s outage at 100 ms waits", len(as), outage)
	}
	first, last := as[0], as[len(as)-1]
	if first.Order == nil || first.Order.HeadSince == nil || first.Outcome != records.OutcomeRetrying {
		t.Fatalf("the head's first failed attempt states the hold %+v (outcome %s), want a head held", first.Order, first.Outcome)
	}
	// The first attempt may run before the five behind it reach the lane; once they have, every
	// failed attempt states all five, held since the head's first failure.
	var full *records.Attempt
	for i := range as[:len(as)-1] {
		if a := as[i]; a.Order != nil && a.Order.Held == 5 {
			full = &as[i]
			break
		}
	}
	if full == nil || full.Order.HeadSince == nil || !full.Order.HeadSince.Equal(*first.Order.HeadSince) || full.Outcome != records.OutcomeRetrying {
		t.Fatalf("no failed attempt of the head states 5 held since its first failure %v: %+v", *first.Order.HeadSince, full)
	}
	if last.Outcome != records.OutcomeDelivered || last.Order == nil || last.Order.HeadSince != nil || last.OrderBroken {
		t.Fatalf("the head's delivery states %+v (outcome %s, broken %t), want no head held", last.Order, last.Outcome, last.OrderBroken)
	}
	waitFor(t, 10*time.Second, "the gauges back at zero", func() bool {
		return testenv.Value(t, reg, "hookstream_sender_ordered_heads_held") == 0 &&
			testenv.Value(t, reg, "hookstream_sender_ordered_oldest_head_age_seconds") == 0
	})
	if v := testenv.Value(t, reg, "hookstream_sender_order_breaks_total", "reason", "max_hold"); v != 0 {
		t.Fatalf("order_breaks_total{max_hold} = %v for a strict endpoint", v)
	}
}

// Design section 7: the bounded mode, beside it, gives way after its maximum hold: the head goes
// to the retry tiers and the later events overtake it, as documented.
func TestBoundedOrderGivesWayAfterTheMaximumHold(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_bounded", "p_a", func(ep *records.Endpoint) { ep.Ordered = true })
	ds := deliveries(3, "p_a", "ep_bounded", "customer.created")
	e.rcv.handle("ep_bounded", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Header.Get("webhook-id") == ds[0].EventID {
			w.WriteHeader(503)
		}
	})
	cfg, reg := e.meteredConfig()
	cfg.OrderedBackoff, cfg.OrderedMaxBackoff = 50*time.Millisecond, 50*time.Millisecond
	cfg.OrderedMaxHold = 300 * time.Millisecond
	e.start(cfg)
	e.deliver(0, ds...)
	e.waitDelivered(ds[1:]...)
	if n := len(e.retrier.scheduled("ep_bounded")); n != 1 {
		t.Fatalf("the bounded head went to the retry tiers %d times, want once", n)
	}
	if v := testenv.Value(t, reg, "hookstream_sender_order_breaks_total", "reason", "max_hold"); v != 1 {
		t.Fatalf("order_breaks_total{max_hold} = %v, want 1", v)
	}
}

// Design section 7: when a strict endpoint's head is exhausted by its schedule it is
// dead-lettered and the order gives way, visibly: that attempt says order_broken, the metric
// counts it, and the records held behind it go on in order.
func TestStrictOrderBreaksVisiblyWhenTheHeadIsDeadLettered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_strict", "p_a", func(ep *records.Endpoint) { ep.Ordered, ep.StrictOrder = true, true })
	ds := deliveries(4, "p_a", "ep_strict", "customer.created")
	e.rcv.handle("ep_strict", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Header.Get("webhook-id") == ds[0].EventID {
			w.WriteHeader(503)
		}
	})
	// The schedule allows three attempts, 50 ms apart.
	e.retrier.delay = 50 * time.Millisecond
	e.retrier.isFinal = func(d records.Delivery) bool { return d.AttemptNo >= 3 }
	cfg, reg := e.meteredConfig()
	e.start(cfg)
	e.deliver(0, ds...)
	e.waitDelivered(ds[1:]...)

	as := e.attempts.of(ds[0].DeliveryID)
	if len(as) != 3 {
		t.Fatalf("the head was attempted %d times, want the schedule's 3: %+v", len(as), as)
	}
	for _, a := range as[:2] {
		if a.Outcome != records.OutcomeRetrying || a.OrderBroken {
			t.Fatalf("attempt %d of the head: outcome %s, order_broken %t", a.AttemptNo, a.Outcome, a.OrderBroken)
		}
	}
	final := as[2]
	if final.AttemptNo != 3 || final.Outcome != records.OutcomeFailed || !final.OrderBroken || final.Order == nil || final.Order.HeadSince != nil {
		t.Fatalf("the final attempt of the head: %+v (order %+v), want failed with order_broken and no head held", final, final.Order)
	}
	sch := e.retrier.scheduled("ep_strict")
	if len(sch) != 1 || sch[0].d.DeliveryID != ds[0].DeliveryID || sch[0].d.AttemptNo != 3 {
		t.Fatalf("the retrier was handed %+v, want the head's last attempt once (its dead letter)", sch)
	}
	want := []string{ds[0].EventID, ds[0].EventID, ds[0].EventID, ds[1].EventID, ds[2].EventID, ds[3].EventID}
	if got := e.rcv.eventIDs("ep_strict"); !slices.Equal(got, want) {
		t.Fatalf("strict endpoint received\n%v\nwant\n%v", got, want)
	}
	if v := testenv.Value(t, reg, "hookstream_sender_order_breaks_total", "reason", "final_failure"); v != 1 {
		t.Fatalf("order_breaks_total{final_failure} = %v, want 1", v)
	}
	for _, d := range ds[1:] {
		if a := e.waitAttempt(d); a.OrderBroken {
			t.Fatalf("a later delivery says order_broken: %+v", a)
		}
	}
}
