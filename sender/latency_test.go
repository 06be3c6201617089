package sender_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// hookstream_delivery_latency_seconds counts every delivery its endpoint accepted (2xx), once,
// under the record's trigger, from the event's commit time (or, without one, the delivery's
// creation) to the response; a failed attempt is not observed.
func TestDeliveryLatencyCountsAcceptedDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_ok", "p_a")
	e.endpoint("ep_down", "p_a")
	e.rcv.handle("ep_down", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	cfg, reg := e.meteredConfig()
	e.start(cfg)

	const name = "hookstream_delivery_latency_seconds"
	for _, tr := range records.Triggers {
		if n := testenv.HistogramCount(t, reg, name, "trigger", tr); n != 0 {
			t.Fatalf("%s{trigger=%q} count %d before any delivery", name, tr, n)
		}
	}

	now := time.Now().UTC()
	initial := deliveries(5, "p_a", "ep_ok", "customer.created")
	for i := range initial {
		initial[i].CommitTime = now.Add(-2 * time.Second) // committed 2 s ago: 2-5 s bucket
	}
	retries := deliveries(2, "p_a", "ep_ok", "customer.created")
	for i := range retries {
		retries[i].Trigger, retries[i].AttemptNo = records.TriggerRetry, 2
		retries[i].CommitTime = now.Add(-10 * time.Minute) // 300-900 s bucket
	}
	replay := delivery("p_a", "ep_ok", "customer.created")
	replay.Trigger = records.TriggerReplay
	replay.CreatedAt = now.Add(-2 * time.Hour) // no commit time: counted from its creation
	failing := deliveries(3, "p_a", "ep_down", "customer.created")
	e.deliver(0, append(append(append(initial, retries...), replay), failing...)...)
	e.waitDelivered(append(append(initial, retries...), replay)...)
	for _, d := range failing {
		if a := e.waitAttempt(d); a.Outcome == records.OutcomeDelivered {
			t.Fatalf("failing delivery: %+v", a)
		}
	}

	if got := len(e.rcv.got("ep_ok")); got != 8 {
		t.Fatalf("ep_ok received %d requests, want 8", got)
	}
	for _, c := range []struct {
		trigger       string
		count         uint64
		above, within float64 // every observation lies in (above, within]
	}{
		{records.TriggerInitial, 5, 2, 5},
		{records.TriggerRetry, 2, 600, 900},
		{records.TriggerReplay, 1, 7200, 10800},
		{records.TriggerTest, 0, 0, 0},
	} {
		h := histogram(t, reg, name, c.trigger)
		if h.GetSampleCount() != c.count {
			t.Errorf("%s{trigger=%q} count %d, want %d (the deliveries accepted)", name, c.trigger, h.GetSampleCount(), c.count)
		}
		for _, b := range h.GetBucket() {
			var want uint64
			if b.GetUpperBound() >= c.within {
				want = c.count
			}
			if b.GetUpperBound() < c.within && b.GetUpperBound() > c.above {
				continue // the bucket the observations fall in may or may not be this one
			}
			if b.GetCumulativeCount() != want {
				t.Errorf("%s{trigger=%q,le=%v} = %d, want %d", name, c.trigger, b.GetUpperBound(), b.GetCumulativeCount(), want)
			}
		}
	}
}

// histogram is the series of the histogram name with the given trigger.
func histogram(t *testing.T, g prometheus.Gatherer, name, trigger string) *dto.Histogram {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "trigger" && l.GetValue() == trigger {
					return m.GetHistogram()
				}
			}
		}
	}
	t.Fatalf("%s{trigger=%q} is not exported", name, trigger)
	return nil
}
