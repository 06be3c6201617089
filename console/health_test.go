package console

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
)

func TestHealthFromHistory(t *testing.T) {
	now := time.Date(2026, 12, 1, 22, 30, 0, 0, time.UTC)
	us := func(n int) *int { return &n }
	d := func(ago time.Duration, state adminclient.DeliveryState, latency *int) adminclient.Delivery {
		ms := latency
		if latency != nil {
			ms = us(*latency / 1000)
		}
		return adminclient.Delivery{CreatedAt: now.Add(-ago), State: state, LastLatencyUs: latency, LastLatencyMs: ms}
	}
	// Recorded before the API kept microseconds: milliseconds only, read as ms*1000.
	old := d(4*time.Hour+10*time.Minute, adminclient.DeliveryStateSucceeded, nil)
	old.LastLatencyMs = us(7)
	h := computeHealth([]adminclient.Delivery{
		d(10*time.Minute, adminclient.DeliveryStateSucceeded, us(10_400)),
		d(20*time.Minute, adminclient.DeliveryStateSucceeded, us(30_900)),
		d(25*time.Minute, adminclient.DeliveryStateRetrying, us(500_000)),
		d(3*time.Hour, adminclient.DeliveryStateFailed, nil),
		d(2*time.Hour, adminclient.DeliveryStatePending, nil),
		d(1*time.Hour+5*time.Minute, adminclient.DeliveryStateSucceeded, us(850)), // a local receiver
		old,
		d(30*time.Hour, adminclient.DeliveryStateFailed, us(1)), // outside the window
	}, now, false)

	if h.Succeeded != 4 || h.Failed != 2 || h.Pending != 1 {
		t.Fatalf("counts: %d succeeded, %d failed, %d pending", h.Succeeded, h.Failed, h.Pending)
	}
	if got := h.Rate(); got != "66.7 %" {
		t.Fatalf("rate %q", got)
	}
	last := h.Buckets[healthBuckets-1]
	if !last.Start.Equal(time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)) || last.Succeeded != 2 || last.Failed != 1 || last.P50 != 30_900 {
		t.Fatalf("the current hour: %+v", last)
	}
	if p := h.Buckets[healthBuckets-2].P50; p != 850 {
		t.Fatalf("the hour before: median %d µs, want 850", p)
	}
	if p := h.Buckets[healthBuckets-5].P50; p != 7000 {
		t.Fatalf("the hour recorded in milliseconds: median %d µs, want 7000", p)
	}
	// The medians of the hours: 850 µs, 7 ms, 30.9 ms; their median is 7 ms.
	if got := h.MedianLatency(); got != "7 ms" {
		t.Fatalf("median latency %q", got)
	}
	latency := string(h.LatencyChart(240, 40))
	for _, want := range []string{"21:00: median 850 µs", "22:00: median 30 ms", "18:00: median 7 ms", "last 24 hours: 7 ms"} {
		if !strings.Contains(latency, want) {
			t.Errorf("latency chart lacks %q:\n%s", want, latency)
		}
	}
	chart := string(h.RateChart(240, 40))
	for _, want := range []string{"22:00: 2 of 3 succeeded", "19:00: 0 of 1 succeeded", "20:00: no deliveries", `fill="#e03131"`} {
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

// A latency is shown in the unit that fits, from the API's microseconds; history with only
// milliseconds shows what it has.
func TestLatencyInTheUnitThatFits(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, c := range []struct {
		us, ms *int
		want   string
	}{
		{n(850), n(0), "850 µs"},
		{n(0), n(0), "0 µs"}, // an attempt not sent
		{n(999), n(0), "999 µs"},
		{n(1000), n(1), "1 ms"},
		{n(12_999), n(12), "12 ms"},
		{n(999_999), n(999), "999 ms"},
		{n(1_000_000), n(1000), "1 s"},
		{n(1_250_000), n(1250), "1.25 s"},
		{n(1_204_000), n(1204), "1.2 s"},
		{n(9_999_999), n(9999), "10 s"},
		{n(30_000_000), n(30_000), "30 s"},
		{n(-1), nil, "—"},
		{nil, n(0), "under 1 ms"}, // recorded in milliseconds only
		{nil, n(240), "240 ms"},
		{nil, n(1250), "1.25 s"},
		{nil, nil, "—"},
	} {
		if got := formatLatency(c.us, c.ms); got != c.want {
			t.Errorf("latency %s µs, %s ms: %q, want %q", show(c.us), show(c.ms), got, c.want)
		}
	}
}

func show(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}
