package retrytopics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
)

// Metrics (R35), all prefixed hookstream_retry_:
//
//	held_records{tier}                records waiting in the tier: in memory plus not yet read
//	buffered_records{tier}            records in the tier's look-ahead buffer (memory)
//	buffered_bytes{tier}              their bytes
//	release_lateness_seconds{tier}    release time minus due_at
//	released_total{tier}              records released to the deliveries topic
//	scheduled_total{tier}             retries written to the tier (an attempt failed)
//	deferred_total{tier}              deferrals written to the tier (no attempt made)
//	dead_letters_total{reason}        records written to the dlq: exhausted, unreadable, refused
//	aborted_releases_total{tier}      release transactions aborted (rebalance, error); re-read
//	session_restarts_total{tier}      Kafka sessions of a tier consumer restarted after an error
//
// Retry saturation, the fraction of deliveries currently waiting for a retry, is computed in the
// dashboard: sum(hookstream_retry_held_records) over that plus the sender's in-flight and queued
// deliveries. This package cannot see the sender's side of the ratio.
type retryMetrics struct {
	held          *prometheus.GaugeVec
	buffered      *prometheus.GaugeVec
	bufferedBytes *prometheus.GaugeVec
	lateness      *prometheus.HistogramVec
	released      *prometheus.CounterVec
	scheduled     *prometheus.CounterVec
	deferred      *prometheus.CounterVec
	deadLetters   *prometheus.CounterVec
	aborted       *prometheus.CounterVec
	restarts      *prometheus.CounterVec
}

// Dead-letter reasons (label values of dead_letters_total).
const (
	reasonExhausted  = "exhausted"
	reasonUnreadable = "unreadable"
	reasonRefused    = "refused"
)

// Every label value the code counts with is a series from the start, at 0: a series that appears
// at its first count hides that count from increase(), and HookstreamDeadLettersExhausted and
// HookstreamRetryDeadLetters would miss a single dead letter. The Scheduler (in the sender
// process) writes retries and deferrals to every tier and dead-letters exhausted deliveries; a
// tier consumer releases its tier and dead-letters the records it cannot read or release.

// forScheduler makes the Scheduler's series of routes exist.
func (m *retryMetrics) forScheduler(routes []tierRoute) *retryMetrics {
	for _, r := range routes {
		m.scheduled.WithLabelValues(r.name)
		m.deferred.WithLabelValues(r.name)
	}
	m.deadLetters.WithLabelValues(reasonExhausted)
	return m
}

// forTier makes the series of the consumer of tier r exist.
func (m *retryMetrics) forTier(r tierRoute) *retryMetrics {
	for _, c := range []*prometheus.CounterVec{m.released, m.aborted, m.restarts} {
		c.WithLabelValues(r.name)
	}
	m.lateness.WithLabelValues(r.name)
	for _, reason := range []string{reasonUnreadable, reasonRefused} {
		m.deadLetters.WithLabelValues(reason)
	}
	return m
}

// newMetrics creates the metrics and registers them with reg. A Scheduler and the tier consumers
// of one process share one registry (`hookstream dev`), so a collector registered already is
// reused rather than refused.
func newMetrics(reg prometheus.Registerer) *retryMetrics {
	set := &metrics.Set{Registerer: reg, Subsystem: "retry", Shared: true}
	tier := "tier"
	return &retryMetrics{
		held: set.GaugeVec("held_records",
			"Records waiting in a retry tier for their due time: in the look-ahead buffer plus not yet read.", tier),
		buffered:      set.GaugeVec("buffered_records", "Records of a retry tier held in memory, sorted by due time.", tier),
		bufferedBytes: set.GaugeVec("buffered_bytes", "Bytes of the records of a retry tier held in memory.", tier),
		lateness: set.HistogramVec("release_lateness_seconds", "Release time minus due time of records released from a retry tier.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}, tier),
		released:  set.CounterVec("released_total", "Records released from a retry tier to the deliveries topic.", tier),
		scheduled: set.CounterVec("scheduled_total", "Retries written to a retry tier after a failed attempt.", tier),
		deferred: set.CounterVec("deferred_total",
			"Deliveries deferred to a retry tier without an attempt (open circuit, full queue).", tier),
		deadLetters: set.CounterVec("dead_letters_total",
			"Records written to the dlq topic: exhausted deliveries, and tier records that could not be read or released.", "reason"),
		aborted: set.CounterVec("aborted_releases_total",
			"Release transactions aborted (rebalance or error); their records are read again.", tier),
		restarts: set.CounterVec("session_restarts_total", "Kafka sessions of a tier consumer restarted after an error.", tier),
	}
}
