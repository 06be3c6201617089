package admin

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
)

// apiMetrics are the API's own. The replay engine counts its jobs and the delivery records it
// produces, test events' included, itself (package replay), also as hookstream_admin_….
type apiMetrics struct {
	requests   *prometheus.CounterVec   // route, code class
	latency    *prometheus.HistogramVec // route
	feedReads  prometheus.Counter
	streams    prometheus.Gauge
	feedRecs   prometheus.Counter
	secretsOut prometheus.Counter
	// quotaRefusals counts requests refused by a partner quota, by quota name (never by
	// partner: the label set stays small).
	quotaRefusals *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*apiMetrics, error) {
	set := &metrics.Set{Registerer: reg, Subsystem: "admin"}
	m := &apiMetrics{
		requests: set.CounterVec("requests_total", "API requests by route pattern and status class (2xx, 4xx, 5xx).", "route", "code"),
		latency: set.HistogramVec("request_seconds", "API request latency by route pattern.",
			prometheus.ExponentialBuckets(0.001, 4, 8), "route"),
		feedReads: set.Counter("feed_pages_total", "Pages of the event feed served."),
		streams:   set.Gauge("event_streams", "Event streams (GET …/events/stream) open now."),
		feedRecs: set.Counter("feed_records_scanned_total",
			"Events-topic records read to serve feed pages and lookups (other partners' included)."),
		secretsOut: set.Counter("secrets_issued_total", "Endpoint signing secrets generated (creations and rotations)."),
		quotaRefusals: set.CounterVec("quota_refusals_total",
			"Requests refused by a partner quota, by quota (endpoints, replay_jobs, test_events_per_minute, replay_deliveries).", "quota"),
	}
	for _, q := range []string{quotaEndpoints, quotaReplayJobs, quotaTestEvents, quotaReplayDeliveries} {
		m.quotaRefusals.WithLabelValues(q)
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("admin: metrics: %w", err)
	}
	return m, nil
}

func codeClass(status int) string {
	return strconv.Itoa(status/100) + "xx"
}
