package recorder

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
)

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
		return nil, fmt.Errorf("recorder: metrics: %w", err)
	}
	return m, nil
}
