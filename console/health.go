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
	P50       int // ms; -1 with no latency in the bucket
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
		if d.LastLatencyMs != nil {
			b.latencies = append(b.latencies, *d.LastLatencyMs)
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

// MedianLatency is the median of the hourly medians with data, as "12 ms" (formatLatency), or
// "no data".
func (h health) MedianLatency() string {
	var ms []int
	for _, b := range h.Buckets {
		if b.P50 >= 0 {
			ms = append(ms, b.P50)
		}
	}
	if len(ms) == 0 {
		return "no data"
	}
	sort.Ints(ms)
	return formatLatency(ms[(len(ms)-1)/2])
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
			x, y, bk.Start.UTC().Format("15:04"), formatLatency(bk.P50))
	}
	if len(pts) > 1 {
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#1971c2" stroke-width="1.5"/>`, strings.Join(pts, " "))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// formatLatency shows a latency in milliseconds (as the API records it: whole milliseconds) in
// the unit that fits: "under 1 ms" for 0 (a local receiver answers in microseconds, which the
// record rounds down to 0), "240 ms", "1.25 s". nil is "—".
func formatLatency(v any) string {
	var ms int
	switch x := v.(type) {
	case int:
		ms = x
	case *int:
		if x == nil {
			return "—"
		}
		ms = *x
	case int32:
		ms = int(x)
	default:
		return "—"
	}
	switch {
	case ms < 0:
		return "—"
	case ms == 0:
		return "under 1 ms"
	case ms < 1000:
		return fmt.Sprintf("%d ms", ms)
	case ms < 10000:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", float64(ms)/1000), "0"), ".") + " s"
	}
	return fmt.Sprintf("%.0f s", float64(ms)/1000)
}
