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
	ns, sub := metrics.Namespace, "admin"
	m := &apiMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "requests_total",
			Help: "API requests by route pattern and status class (2xx, 4xx, 5xx)."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "request_seconds",
			Help: "API request latency by route pattern.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)}, []string{"route"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "event_streams",
			Help: "Event streams (GET …/events/stream) open now."}),
		feedReads: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "feed_pages_total",
			Help: "Pages of the event feed served."}),
		feedRecs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "feed_records_scanned_total",
			Help: "Events-topic records read to serve feed pages and lookups (other partners' included)."}),
		secretsOut: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "secrets_issued_total",
			Help: "Endpoint signing secrets generated (creations and rotations)."}),
		quotaRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "quota_refusals_total",
			Help: "Requests refused by a partner quota, by quota (endpoints, replay_jobs, test_events_per_minute, replay_deliveries)."}, []string{"quota"}),
	}
	for _, q := range []string{quotaEndpoints, quotaReplayJobs, quotaTestEvents, quotaReplayDeliveries} {
		m.quotaRefusals.WithLabelValues(q)
	}
	if err := metrics.Register(reg, m.requests, m.latency, m.feedReads, m.streams, m.feedRecs, m.secretsOut, m.quotaRefusals); err != nil {
		return nil, fmt.Errorf("admin: metrics: %w", err)
	}
	return m, nil
}

func codeClass(status int) string {
	return strconv.Itoa(status/100) + "xx"
}
