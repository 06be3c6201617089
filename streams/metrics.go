package streams

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/metrics"
)

type fanoutMetrics struct {
	events     prometheus.Counter
	deliveries *prometheus.CounterVec
	unmatched  prometheus.Counter
	filtered   prometheus.Counter
	invalid    prometheus.Counter
	txns       prometheus.Counter
	restarts   prometheus.Counter
	viewSize   prometheus.GaugeFunc
	catchUp    prometheus.Histogram
}

// newFanoutMetrics makes fanout's metrics; view is the endpoint view whose size it exports.
func newFanoutMetrics(reg prometheus.Registerer, view *endpoints.View) (*fanoutMetrics, error) {
	set := &metrics.Set{Registerer: reg, Subsystem: "fanout"}
	m := &fanoutMetrics{
		events:     set.Counter("events_consumed_total", "Events consumed from the events topic."),
		deliveries: set.CounterVec("deliveries_produced_total", "Delivery records produced, by trigger.", "trigger"),
		unmatched:  set.Counter("unmatched_events_total", "Events no endpoint receives."),
		filtered: set.Counter("filtered_deliveries_total",
			"Deliveries not made because the endpoint's payload filter is false for the event: one per (event, endpoint)."),
		invalid: set.Counter("invalid_events_total", "Event records that could not be read; sent to the dlq."),
		txns: set.Counter("kafka_transactions_total",
			"Kafka transactions committed (each carries a batch of events' deliveries and its offsets)."),
		restarts: set.Counter("session_restarts_total",
			"Consumer-producer sessions that failed (broker outage, failed commit) and were started again."),
		viewSize: set.GaugeFunc("endpoint_view_size", "Endpoints in the fanout's endpoint view.",
			func() float64 { return float64(view.Len()) }),
		catchUp: set.Histogram("endpoint_view_catch_up_seconds",
			"Time the endpoint view took to reach the endpoints topic's last stable offset before a batch (view lag).",
			prometheus.ExponentialBuckets(0.001, 4, 8)),
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("streams: fanout metrics: %w", err)
	}
	return m, nil
}

type recorderMetrics struct {
	recorded      prometheus.Counter
	refused       *prometheus.CounterVec
	disabled      prometheus.Counter
	expired       prometheus.Counter
	expiryErr     prometheus.Counter
	writeFailures prometheus.Counter
	batchSize     prometheus.Histogram
	latency       prometheus.Histogram

	pendingRows    prometheus.Counter
	pendingSkipped *prometheus.CounterVec
}

// Reasons the recorder refuses an attempt record for, the label of attempts_refused_total.
const (
	refusedInvalid         = "invalid"
	refusedUnknownEndpoint = "unknown_endpoint"
	refusedTenantMismatch  = "tenant_mismatch"
	refusedUnstorable      = "unstorable"
)

// newRecorderMetrics makes the recorder's metrics.
func newRecorderMetrics(reg prometheus.Registerer) (*recorderMetrics, error) {
	set := &metrics.Set{Registerer: reg, Subsystem: "recorder"}
	m := &recorderMetrics{
		recorded: set.Counter("attempts_recorded_total", "Attempt records written to PostgreSQL (replays included)."),
		refused:  set.CounterVec("attempts_refused_total", "Attempt records refused and sent to the dlq, by reason.", "reason"),
		disabled: set.Counter("endpoints_disabled_total", "Endpoints disabled because the receiver answered 410 Gone."),
		expired: set.Counter("deliveries_expired_total",
			"Finished deliveries deleted, with their attempts, after the history retention."),
		expiryErr: set.Counter("history_expiry_failures_total",
			"History sweeps that failed; each is tried again at the next sweep interval."),
		writeFailures: set.Counter("batch_write_failures_total",
			"Tries to store a batch that failed (PostgreSQL or Kafka unreachable); the batch is tried again."),
		batchSize: set.Histogram("batch_size", "Attempts per PostgreSQL transaction.", prometheus.ExponentialBuckets(1, 4, 6)),
		latency:   set.Histogram("batch_seconds", "Time to write one batch to PostgreSQL.", prometheus.ExponentialBuckets(0.001, 4, 8)),
		pendingRows: set.Counter("pending_rows_total",
			"Pending history rows written for deliveries not attempted within the pending delay."),
		pendingSkipped: set.CounterVec("pending_skipped_total",
			"Deliveries records given no pending row, by reason (invalid, stale, unstorable).", "reason"),
	}
	// At 0 from the start, so HookstreamTenantMismatch and HookstreamRecorderRefusals see the first.
	for _, reason := range []string{refusedInvalid, refusedUnknownEndpoint, refusedTenantMismatch, refusedUnstorable} {
		m.refused.WithLabelValues(reason)
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("streams: recorder metrics: %w", err)
	}
	return m, nil
}
