package sender

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
)

type senderMetrics struct {
	attempts     *prometheus.CounterVec
	latency      prometheus.Histogram
	inFlight     prometheus.Gauge
	circuitsOpen prometheus.Gauge
	deferrals    *prometheus.CounterVec
	badRecords   prometheus.Counter
	buffered     prometheus.Gauge
	paused       prometheus.Gauge
	commitErrors prometheus.Counter
	partitions   prometheus.Gauge
	// tokenRequests counts OAuth token requests.
	tokenRequests prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *senderMetrics {
	ns, sub := metrics.Namespace, "sender"
	m := &senderMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "attempts_total",
			Help: "Attempts reported to the attempts topic, by outcome and error category (none when delivered)."},
			[]string{"outcome", "category"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "request_duration_seconds",
			Help:    "Time from sending a request to the end of its response (body read up to the limit), or to its failure.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 30}}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "requests_in_flight",
			Help: "HTTP requests in flight."}),
		circuitsOpen: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "circuits_open",
			Help: "Endpoints whose circuit breaker is open or half-open."}),
		deferrals: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "deferrals_total",
			Help: "Deliveries handed to a retry tier without an attempt, by reason (circuit_open, queue_full, not_due, stale_view)."},
			[]string{"reason"}),
		badRecords: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "bad_records_total",
			Help: "Delivery records that could not be understood and went to the dlq topic."}),
		buffered: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "buffered_records",
			Help: "Delivery records taken from Kafka and not finished."}),
		paused: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "fetch_paused",
			Help: "1 while intake waits because the buffered records or bytes reached their cap."}),
		commitErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "commit_errors_total",
			Help: "Offset commits that failed (retried at the next interval)."}),
		partitions: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "partitions_assigned",
			Help: "Deliveries partitions this sender owns."}),
		tokenRequests: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "oauth_token_requests_total",
			Help: "Token requests made for endpoints that authenticate with OAuth 2.0 client credentials (a cached token is not counted)."}),
	}
	// A sender built again in the same process (a restart inside `hookstream dev`, a test)
	// keeps counting in the same series.
	m.attempts = metrics.Adopt(reg, m.attempts)
	m.latency = metrics.Adopt(reg, m.latency)
	m.inFlight = metrics.Adopt(reg, m.inFlight)
	m.circuitsOpen = metrics.Adopt(reg, m.circuitsOpen)
	m.deferrals = metrics.Adopt(reg, m.deferrals)
	m.badRecords = metrics.Adopt(reg, m.badRecords)
	m.buffered = metrics.Adopt(reg, m.buffered)
	m.paused = metrics.Adopt(reg, m.paused)
	m.commitErrors = metrics.Adopt(reg, m.commitErrors)
	m.partitions = metrics.Adopt(reg, m.partitions)
	m.tokenRequests = metrics.Adopt(reg, m.tokenRequests)
	return m
}
