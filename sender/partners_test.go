package sender_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
)

// partnerLoad counts the requests a receiver has out at once for all the endpoints of one
// partner (and, when all is set, for every partner too), and its peak.
type partnerLoad struct {
	mu         sync.Mutex
	now, peak  int
	answerWith time.Duration
	all        *partnerLoad
}

func (p *partnerLoad) handler(w http.ResponseWriter, r *http.Request, body []byte) {
	p.mu.Lock()
	p.now++
	p.peak = max(p.peak, p.now)
	p.mu.Unlock()
	if p.all != nil {
		p.all.handler(w, r, body)
	} else {
		time.Sleep(p.answerWith)
	}
	p.mu.Lock()
	p.now--
	p.mu.Unlock()
}

func (p *partnerLoad) peakSeen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// A partner's cap (design.md section 7) binds all its endpoints together, whatever each allows:
// four endpoints of max_in_flight 16 get at most Config.PartnerMaxInFlight requests out at once
// between them, and no more than Config.PartnerRatePerSec a second. Another partner beside it
// has a cap of its own.
func TestPartnerCapHolds(t *testing.T) {
	t.Parallel()
	t.Run("concurrency", func(t *testing.T) {
		e := newEnv(t)
		all := &partnerLoad{answerWith: 100 * time.Millisecond}
		capped, other := &partnerLoad{all: all}, &partnerLoad{all: all}
		var ds []records.Delivery
		for _, id := range []string{"ep_a1", "ep_a2", "ep_a3", "ep_a4"} {
			e.endpoint(id, "p_a", func(ep *records.Endpoint) { ep.MaxInFlight = 16 })
			e.rcv.handle(id, capped.handler)
			ds = append(ds, deliveries(15, "p_a", id, "customer.created")...)
		}
		e.endpoint("ep_b", "p_b", func(ep *records.Endpoint) { ep.MaxInFlight = 16 })
		e.rcv.handle("ep_b", other.handler)
		ds = append(ds, deliveries(30, "p_b", "ep_b", "customer.created")...)
		cfg := e.config()
		cfg.PartnerMaxInFlight = 5
		e.start(cfg)
		e.deliver(0, ds...)
		waitFor(t, 60*time.Second, "every delivery", func() bool { return e.attempts.deliveredCount() == len(ds) })
		if peak := capped.peakSeen(); peak != 5 {
			t.Fatalf("partner p_a's four endpoints had %d requests out at once; want its cap of 5 reached and held", peak)
		}
		if peak := other.peakSeen(); peak != 5 {
			t.Fatalf("partner p_b's endpoint peaked at %d requests out; want its own cap of 5", peak)
		}
		if peak := all.peakSeen(); peak <= 5 {
			t.Fatalf("both partners together peaked at %d requests out; each has a cap of its own", peak)
		}
		if _, n := e.retrier.counts(); n != 0 {
			t.Fatalf("%d deliveries deferred; a capped partner's backlog waits in the sender", n)
		}
	})
	t.Run("rate", func(t *testing.T) {
		e := newEnv(t)
		const rate = 20.0
		var ds []records.Delivery
		ids := []string{"ep_a1", "ep_a2", "ep_a3", "ep_a4"}
		for _, id := range ids {
			e.endpoint(id, "p_a")
			ds = append(ds, deliveries(10, "p_a", id, "customer.created")...)
		}
		cfg := e.config()
		cfg.PartnerRatePerSec = rate
		e.start(cfg)
		e.deliver(0, ds...)
		waitFor(t, 60*time.Second, "every delivery", func() bool { return e.attempts.deliveredCount() == len(ds) })
		var at []time.Time
		for _, id := range ids {
			for _, r := range e.rcv.got(id) {
				at = append(at, r.at)
			}
		}
		slices.SortFunc(at, time.Time.Compare)
		if len(at) != len(ds) {
			t.Fatalf("%d requests, want %d", len(at), len(ds))
		}
		// 40 requests at 20/s with a burst of one span at least 39 intervals of 50 ms; four
		// endpoints without the partner's rate would take a few milliseconds.
		if span := at[len(at)-1].Sub(at[0]); span < 1800*time.Millisecond {
			t.Fatalf("40 requests took %s; the partner's rate of 20/s allows no less than 1.95s", span)
		}
		// The gate spaces the requests' starts; the receiver sees their arrivals, which the
		// scheduler (and the race detector) can shift by tens of milliseconds, so two requests
		// 50 ms apart may arrive closer. Any second of arrivals holds the rate, the burst of one
		// and two such shifted arrivals at most; without the gate it held all 40.
		for i := range at {
			n := 0
			for j := i; j < len(at) && at[j].Sub(at[i]) < time.Second; j++ {
				n++
			}
			if n > rate+3 {
				t.Fatalf("%d requests of the partner within one second; its rate is %v/s", n, rate)
			}
		}
	})
}

// design.md section 7: one partner's backlog never queues another partner's fresh events behind
// it. Partner p_a, capped at 50 requests a second, has 400 deliveries to four endpoints ahead of
// p_b's on the same partition; p_b's are delivered while p_a's backlog still waits, each
// within a second of being produced, and p_a's backlog waits in the sender rather than in a
// retry tier.
func TestPartnerBacklogDoesNotDelayAnother(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var backlog []records.Delivery
	for _, id := range []string{"ep_a1", "ep_a2", "ep_a3", "ep_a4"} {
		e.endpoint(id, "p_a")
		backlog = append(backlog, deliveries(100, "p_a", id, "customer.created")...)
	}
	e.endpoint("ep_b", "p_b")
	cfg := e.config()
	cfg.PartnerRatePerSec = 50
	cfg.QueueSize = 16
	e.start(cfg)
	e.deliver(0, backlog...)
	waitFor(t, 30*time.Second, "p_a's backlog to start", func() bool { return e.rcv.total() > 10 })

	for i := 0; i < 5; i++ {
		d := delivery("p_b", "ep_b", "customer.created")
		sent := time.Now()
		e.deliver(0, d)
		waitFor(t, 30*time.Second, "p_b's delivery", func() bool { return len(e.rcv.got("ep_b")) == i+1 })
		if took := time.Since(sent); took > time.Second {
			t.Fatalf("p_b's delivery %d took %s behind p_a's backlog; want under a second", i, took)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := e.rcv.total() - 5; n >= len(backlog) {
		t.Fatalf("p_a's backlog was all delivered (%d) before p_b's; the test proves nothing", n)
	}
	waitFor(t, 60*time.Second, "p_a's backlog", func() bool { return e.attempts.deliveredCount() == len(backlog)+5 })
	if _, n := e.retrier.counts(); n != 0 {
		t.Fatalf("%d deliveries deferred; a capped partner's backlog waits in the sender", n)
	}
}
