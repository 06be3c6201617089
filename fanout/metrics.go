package fanout

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
)

type fanoutMetrics struct {
	events     prometheus.Counter
	passed     prometheus.Counter
	deliveries *prometheus.CounterVec
	unmatched  prometheus.Counter
	filtered   prometheus.Counter
	invalid    prometheus.Counter
	txns       prometheus.Counter
	commit     prometheus.Histogram
	restarts   prometheus.Counter
	viewSize   prometheus.GaugeFunc
	catchUp    prometheus.Histogram
}

// newFanoutMetrics makes fanout's metrics; view is the endpoint view whose size it exports.
func newFanoutMetrics(reg prometheus.Registerer, view EndpointView) (*fanoutMetrics, error) {
	set := &metrics.Set{Registerer: reg, Subsystem: "fanout"}
	m := &fanoutMetrics{
		events: set.Counter("events_consumed_total", "Events consumed from the events topic."),
		passed: set.Counter("events_passed_total",
			"Events consumed whose deliveries cdc made itself (the fanned_out header): passed by, their offsets committed at most every second."),
		deliveries: set.CounterVec("deliveries_produced_total", "Delivery records produced, by trigger.", "trigger"),
		unmatched:  set.Counter("unmatched_events_total", "Events no endpoint receives."),
		filtered: set.Counter("filtered_deliveries_total",
			"Deliveries not made because the endpoint's payload filter is false for the event: one per (event, endpoint)."),
		invalid: set.Counter("invalid_events_total", "Event records that could not be read; sent to the dlq."),
		txns: set.Counter("kafka_transactions_total",
			"Kafka transactions committed (each carries a batch of events' deliveries and its offsets)."),
		commit: set.Histogram("kafka_commit_seconds",
			"Time to commit one Kafka transaction: its deliveries flushed, the events' offsets committed, the group heartbeat, the transaction ended (a round trip to the broker each).",
			metrics.CommitBuckets),
		restarts: set.Counter("session_restarts_total",
			"Consumer-producer sessions that failed (broker outage, failed commit) and were started again."),
		viewSize: set.GaugeFunc("endpoint_view_size", "Endpoints in the fanout's endpoint view.",
			func() float64 { return float64(view.Len()) }),
		catchUp: set.Histogram("endpoint_view_catch_up_seconds",
			"Time the endpoint view took to reach the endpoints topic's last stable offset before a batch (view lag).",
			prometheus.ExponentialBuckets(0.001, 4, 8)),
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("fanout: metrics: %w", err)
	}
	return m, nil
}
