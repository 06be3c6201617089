package console

import (
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"

	"github.com/hookstream/hookstream/adminclient"
)

// healthWindow is the span of an endpoint's health charts, in hourly buckets.
const (
	healthWindow  = 24 * time.Hour
	healthBuckets = 24
)

// health is an endpoint's last 24 hours as its delivery history shows them: per hour, the
// deliveries created then that succeeded and that failed (failed or retrying), and the median
// latency of their newest attempts. The API has no per-hour aggregate, so it is computed here from
// up to one page of the history (Sampled is how many deliveries it read, Truncated whether the
// window held more).
type health struct {
	Buckets   [healthBuckets]bucket
	Succeeded int
	Failed    int
	Pending   int
	Sampled   int
	Truncated bool
	Since     time.Time
}

type bucket struct {
	Start     time.Time
	Succeeded int
	Failed    int
	latencies []int
	P50       int // µs; -1 with no latency in the bucket
}

func computeHealth(ds []adminclient.Delivery, now time.Time, truncated bool) health {
	h := health{Sampled: len(ds), Truncated: truncated}
	end := now.Truncate(time.Hour).Add(time.Hour)
	h.Since = end.Add(-healthWindow)
	for i := range h.Buckets {
		h.Buckets[i].Start = h.Since.Add(time.Duration(i) * time.Hour)
	}
	for _, d := range ds {
		i := int(d.CreatedAt.Sub(h.Since) / time.Hour)
		if i < 0 || i >= healthBuckets {
			continue
		}
		b := &h.Buckets[i]
		switch d.State {
		case adminclient.DeliveryStateSucceeded:
			b.Succeeded++
			h.Succeeded++
		case adminclient.DeliveryStateFailed, adminclient.DeliveryStateRetrying:
			b.Failed++
			h.Failed++
		default:
			h.Pending++
		}
		if us, ok := latencyMicros(d.LastLatencyUs, d.LastLatencyMs); ok {
			b.latencies = append(b.latencies, us)
		}
	}
	for i := range h.Buckets {
		b := &h.Buckets[i]
		b.P50 = -1
		if n := len(b.latencies); n > 0 {
			sort.Ints(b.latencies)
			b.P50 = b.latencies[(n-1)/2]
		}
	}
	return h
}

// Rate is the share of finished or retrying deliveries that succeeded, as "97.5 %", or "no data".
func (h health) Rate() string {
	n := h.Succeeded + h.Failed
	if n == 0 {
		return "no data"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(h.Succeeded)/float64(n))
}

// MedianLatency is the median of the hourly medians with data, as "12 ms" (formatMicros), or
// "no data".
func (h health) MedianLatency() string {
	var us []int
	for _, b := range h.Buckets {
		if b.P50 >= 0 {
			us = append(us, b.P50)
		}
	}
	if len(us) == 0 {
		return "no data"
	}
	sort.Ints(us)
	return formatMicros(us[(len(us)-1)/2])
}

// The charts are inline SVG drawn here (no script, no inline style: the CSP allows neither), so
// they show with JavaScript off. Only numbers and fixed words go into them.

// RateChart draws one stacked bar per hour with deliveries: green for the share that succeeded,
// red for the rest, so a bad hour shows as much as a good one; an hour without deliveries is a
// grey stub.
func (h health) RateChart(width, height int) template.HTML {
	var b strings.Builder
	bw := float64(width) / healthBuckets
	fmt.Fprintf(&b, `<svg class="chart" role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-label="success rate per hour, last 24 hours: %s">`,
		width, height, width, height, h.Rate())
	for i, bk := range h.Buckets {
		x := float64(i)*bw + 1
		hour := bk.Start.UTC().Format("15:04")
		n := bk.Succeeded + bk.Failed
		if n == 0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="2" fill="#d0d4da"><title>%s: no deliveries</title></rect>`,
				x, height-2, bw-2, hour)
			continue
		}
		ok := float64(bk.Succeeded) / float64(n) * float64(height)
		fmt.Fprintf(&b, `<g><title>%s: %d of %d succeeded</title>`, hour, bk.Succeeded, n)
		if bk.Failed > 0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="0" width="%.1f" height="%.1f" fill="#e03131"/>`, x, bw-2, float64(height)-ok)
		}
		if bk.Succeeded > 0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#2f9e44"/>`, x, float64(height)-ok, bw-2, ok)
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// LatencyChart draws the hourly median latency as a line over the hours with data, scaled to
// the window's highest median.
func (h health) LatencyChart(width, height int) template.HTML {
	var b strings.Builder
	max := 0
	for _, bk := range h.Buckets {
		if bk.P50 > max {
			max = bk.P50
		}
	}
	fmt.Fprintf(&b, `<svg class="chart" role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-label="median latency per hour, last 24 hours: %s">`,
		width, height, width, height, h.MedianLatency())
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#d0d4da" stroke-width="1"/>`, height-1, width, height-1)
	if max == 0 {
		max = 1
	}
	bw := float64(width) / healthBuckets
	var pts []string
	for i, bk := range h.Buckets {
		if bk.P50 < 0 {
			continue
		}
		x := float64(i)*bw + bw/2
		y := float64(height-3) - float64(bk.P50)/float64(max)*float64(height-6)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2" fill="#1971c2"><title>%s: median %s</title></circle>`,
			x, y, bk.Start.UTC().Format("15:04"), formatMicros(bk.P50))
	}
	if len(pts) > 1 {
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#1971c2" stroke-width="1.5"/>`, strings.Join(pts, " "))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// FormatLatency is formatLatency for other front ends (the CLI's `deliveries get`), so that a
// latency reads the same wherever hookstream shows it; "-" where the console shows "—".
func FormatLatency(us, ms *int) string {
	if v := formatLatency(us, ms); v != "—" {
		return v
	}
	return "-"
}

// formatLatency shows an attempt's latency from the API's pair (latency_us, latency_ms, or the
// delivery's last_latency_us, last_latency_ms) in the unit that fits (formatMicros): "850 µs",
// "240 ms", "1.25 s". History recorded before the API kept microseconds has only milliseconds,
// rounded down: its 0 is "under 1 ms", never a finer figure the API does not have. Neither is
// "—".
func formatLatency(us, ms *int) string {
	if us == nil && ms != nil && *ms == 0 {
		return "under 1 ms"
	}
	if v, ok := latencyMicros(us, ms); ok {
		return formatMicros(v)
	}
	return "—"
}

// latencyMicros is the latency in microseconds of the API's pair: us, or for history with
// milliseconds only, ms*1000 (as hookstream reads an attempt record without latency_us).
func latencyMicros(us, ms *int) (int, bool) {
	switch {
	case us != nil:
		return *us, true
	case ms != nil:
		return *ms * 1000, true
	}
	return 0, false
}

// formatMicros shows a latency of us microseconds in the unit that fits: "850 µs" under a
// millisecond, "240 ms" (whole, rounded down as the API's latency_ms) under a second, "1.25 s"
// under 10 s, "12 s" beyond. A negative latency, which no attempt has, is "—".
func formatMicros(us int) string {
	switch {
	case us < 0:
		return "—"
	case us < 1000:
		return fmt.Sprintf("%d µs", us)
	case us < 1_000_000:
		return fmt.Sprintf("%d ms", us/1000)
	case us < 10_000_000:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", float64(us)/1e6), "0"), ".") + " s"
	}
	return fmt.Sprintf("%.0f s", float64(us)/1e6)
}
