package console

import (
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
)

func TestHealthFromHistory(t *testing.T) {
	now := time.Date(2026, 12, 1, 22, 30, 0, 0, time.UTC)
	ms := func(n int) *int { return &n }
	d := func(ago time.Duration, state adminclient.DeliveryState, latency *int) adminclient.Delivery {
		return adminclient.Delivery{CreatedAt: now.Add(-ago), State: state, LastLatencyMs: latency}
	}
	h := computeHealth([]adminclient.Delivery{
		d(10*time.Minute, adminclient.DeliveryStateSucceeded, ms(10)),
		d(20*time.Minute, adminclient.DeliveryStateSucceeded, ms(30)),
		d(25*time.Minute, adminclient.DeliveryStateRetrying, ms(500)),
		d(3*time.Hour, adminclient.DeliveryStateFailed, nil),
		d(2*time.Hour, adminclient.DeliveryStatePending, nil),
		d(30*time.Hour, adminclient.DeliveryStateFailed, ms(1)), // outside the window
	}, now, false)

	if h.Succeeded != 2 || h.Failed != 2 || h.Pending != 1 {
		t.Fatalf("counts: %d succeeded, %d failed, %d pending", h.Succeeded, h.Failed, h.Pending)
	}
	if got := h.Rate(); got != "50.0 %" {
		t.Fatalf("rate %q", got)
	}
	last := h.Buckets[healthBuckets-1]
	if !last.Start.Equal(time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)) || last.Succeeded != 2 || last.Failed != 1 || last.P50 != 30 {
		t.Fatalf("the current hour: %+v", last)
	}
	if got := h.MedianLatency(); got != "30 ms" {
		t.Fatalf("median latency %q", got)
	}
	chart := string(h.RateChart(240, 40))
	for _, want := range []string{"22:00: 2 of 3 succeeded", "19:00: 0 of 1 succeeded", "21:00: no deliveries", `fill="#e03131"`} {
		if !strings.Contains(chart, want) {
			t.Errorf("rate chart lacks %q", want)
		}
	}
	if strings.Contains(chart, "style=") {
		t.Error("the chart has an inline style the CSP would block")
	}
	if got := computeHealth(nil, now, false); got.Rate() != "no data" || got.MedianLatency() != "no data" {
		t.Fatalf("empty history: %s, %s", got.Rate(), got.MedianLatency())
	}
}
