package sender

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/internal/records"
)

type senderMetrics struct {
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
	// deliveryLatency is the time from the event's commit to the endpoint's 2xx, by trigger.
	deliveryLatency *prometheus.HistogramVec
	inFlight        prometheus.Gauge
	circuitsOpen    prometheus.Gauge
	deferrals       *prometheus.CounterVec
	badRecords      prometheus.Counter
	// abortedTaken and abortedCopies: records taken from transactions that aborted, and the
	// copies of them passed over (uncommitted.go).
	abortedTaken  prometheus.Counter
	abortedCopies prometheus.Counter
	buffered      prometheus.Gauge
	paused        prometheus.Gauge
	commitErrors  prometheus.Counter
	partitions    prometheus.Gauge
	// tokenRequests counts OAuth token requests.
	tokenRequests prometheus.Counter
	// Ordered endpoints' held heads (ordering.go).
	orderHeads   prometheus.Gauge
	orderHeld    prometheus.Gauge
	orderHeadAge prometheus.Gauge
	orderBreaks  *prometheus.CounterVec
	// concurrencyChanges counts the changes of endpoints' adaptive limits (concurrency.go).
	concurrencyChanges *prometheus.CounterVec
}

// deliveryLatencyBuckets span 10 ms (a delivery straight through) to a day (the last retry
// tiers): the SLO reads le="60", the dashboard le="30" too.
var deliveryLatencyBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 10800, 43200, 86400}

func newMetrics(reg prometheus.Registerer) *senderMetrics {
	// A sender built again in the same process (a restart inside `hookstream dev`, a test)
	// keeps counting in the same series.
	set := &metrics.Set{Registerer: reg, Subsystem: "sender", Shared: true}
	m := &senderMetrics{
		attempts: set.CounterVec("attempts_total",
			"Attempts reported to the attempts topic, by outcome and error category (none when delivered).", "outcome", "category"),
		latency: set.Histogram("request_duration_seconds",
			"Time from sending a request to the end of its response (body read up to the limit), or to its failure.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 30}),
		inFlight:     set.Gauge("requests_in_flight", "HTTP requests in flight."),
		circuitsOpen: set.Gauge("circuits_open", "Endpoints whose circuit breaker is open or half-open."),
		deferrals: set.CounterVec("deferrals_total",
			"Deliveries handed to a retry tier without an attempt, by reason (circuit_open, queue_full, not_due, stale_view).", "reason"),
		badRecords: set.Counter("bad_records_total", "Delivery records that could not be understood and went to the dlq topic."),
		abortedTaken: set.Counter("aborted_records_total",
			"Delivery records taken from a Kafka transaction (cdc's, fanout's, a retry tier's) that then aborted: each is written again by the transaction that replaces it."),
		abortedCopies: set.Counter("aborted_copies_skipped_total",
			"Copies of such records, written again by the replacing transaction, passed over because the aborted record was taken already."),
		buffered:     set.Gauge("buffered_records", "Delivery records taken from Kafka and not finished."),
		paused:       set.Gauge("fetch_paused", "1 while intake waits because the buffered records or bytes reached their cap."),
		commitErrors: set.Counter("commit_errors_total", "Offset commits that failed (retried at the next interval)."),
		partitions:   set.Gauge("partitions_assigned", "Deliveries partitions this sender owns."),
		tokenRequests: set.Counter("oauth_token_requests_total",
			"Token requests made for endpoints that authenticate with OAuth 2.0 client credentials (a cached token is not counted)."),
		orderHeads: set.Gauge("ordered_heads_held", "Heads of ordered endpoints held (failing, retried in process) with the endpoint's later records waiting behind them."),
		orderHeld:  set.Gauge("ordered_records_held", "Records of ordered endpoints waiting behind a held head, in all."),
		orderHeadAge: set.Gauge("ordered_oldest_head_age_seconds",
			"How long the oldest held head of an ordered endpoint has been held (0: none held)."),
		orderBreaks: set.CounterVec("order_breaks_total",
			"Times an ordered endpoint's order gave way, by reason: max_hold (bounded mode, held for the maximum hold), final_failure (strict mode, the head failed for good), overflow (a record beyond the endpoint's queue was deferred).", "reason"),
		concurrencyChanges: set.CounterVec("concurrency_changes_total",
			"Changes of endpoints' adaptive limits of requests in flight, by change: raised (a round answered at the endpoint's baseline latency with work waiting: +1), slowed (a round's mean latency above twice the baseline plus 10 ms: -10 %, not below the starting limit), failed (more than half of a round failed: halved).", "change"),
		// Subsystem delivery: the one metric that spans the pipeline, observed where it ends.
		deliveryLatency: (&metrics.Set{Registerer: reg, Subsystem: "delivery", Shared: true}).HistogramVec("latency_seconds",
			"Time from the event's PostgreSQL commit (for test events and records without it, the delivery's creation) to the endpoint's 2xx, by trigger (initial, retry, replay, test).",
			deliveryLatencyBuckets, "trigger"),
	}
	// Every label value the code counts with is a series from the start: a series that appears
	// at its first count hides that count from increase() and rate(), so an alert on it would
	// miss a single event (deploy/monitoring/README.md, "Series from the start").
	m.attempts.WithLabelValues(records.OutcomeDelivered, "none")
	for _, c := range records.ErrorCategories {
		m.attempts.WithLabelValues(records.OutcomeRetrying, c)
		m.attempts.WithLabelValues(records.OutcomeFailed, c)
	}
	for _, r := range deferReasons {
		m.deferrals.WithLabelValues(r)
	}
	for _, c := range concurrencyChanges {
		m.concurrencyChanges.WithLabelValues(c)
	}
	for _, r := range breakReasons {
		m.orderBreaks.WithLabelValues(r)
	}
	for _, t := range records.Triggers {
		m.deliveryLatency.WithLabelValues(t)
	}
	return m
}

// delivered observes the delivery latency of d, accepted by its endpoint at now: from the
// event's commit, or from the delivery's creation for records that do not carry it.
func (m *senderMetrics) delivered(d *records.Delivery, now time.Time) {
	start := d.CommitTime
	if start.IsZero() {
		start = d.CreatedAt
	}
	if start.IsZero() {
		return // a record without either time says nothing of its latency
	}
	m.deliveryLatency.WithLabelValues(d.Trigger).Observe(max(now.Sub(start).Seconds(), 0))
}
