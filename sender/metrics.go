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
	// A sender built again in the same process (a restart inside `hookstream dev`, a test)
	// keeps counting in the same series.
	set := &metrics.Set{Registerer: reg, Subsystem: "sender", Shared: true}
	return &senderMetrics{
		attempts: set.CounterVec("attempts_total",
			"Attempts reported to the attempts topic, by outcome and error category (none when delivered).", "outcome", "category"),
		latency: set.Histogram("request_duration_seconds",
			"Time from sending a request to the end of its response (body read up to the limit), or to its failure.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 30}),
		inFlight:     set.Gauge("requests_in_flight", "HTTP requests in flight."),
		circuitsOpen: set.Gauge("circuits_open", "Endpoints whose circuit breaker is open or half-open."),
		deferrals: set.CounterVec("deferrals_total",
			"Deliveries handed to a retry tier without an attempt, by reason (circuit_open, queue_full, not_due, stale_view).", "reason"),
		badRecords:   set.Counter("bad_records_total", "Delivery records that could not be understood and went to the dlq topic."),
		buffered:     set.Gauge("buffered_records", "Delivery records taken from Kafka and not finished."),
		paused:       set.Gauge("fetch_paused", "1 while intake waits because the buffered records or bytes reached their cap."),
		commitErrors: set.Counter("commit_errors_total", "Offset commits that failed (retried at the next interval)."),
		partitions:   set.Gauge("partitions_assigned", "Deliveries partitions this sender owns."),
		tokenRequests: set.Counter("oauth_token_requests_total",
			"Token requests made for endpoints that authenticate with OAuth 2.0 client credentials (a cached token is not counted)."),
	}
}
