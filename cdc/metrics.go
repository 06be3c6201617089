package cdc

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
)

type cdcMetrics struct {
	active          prometheus.Gauge
	sessionFailures prometheus.Counter
	replicationLag  prometheus.Gauge
	outboxAge       prometheus.Histogram
	events          prometheus.Counter
	bytes           prometheus.Counter
	fannedOut       prometheus.Counter
	deliveries      prometheus.Counter
	filtered        prometheus.Counter
	unmatched       prometheus.Counter
	endpointChanges prometheus.Counter
	transactions    prometheus.Counter
	commitSeconds   prometheus.Histogram
	deadLetters     *prometheus.CounterVec
	checkpointLSN   prometheus.Gauge
	partitions      *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*cdcMetrics, error) {
	set := &metrics.Set{Registerer: reg, Subsystem: "cdc"}
	m := &cdcMetrics{
		active: set.Gauge("active", "1 while this process is the active slot reader, 0 while it waits."),
		sessionFailures: set.Counter("session_failures_total",
			"Sessions that ended in an error and restarted from the last checkpoint (lost connection, broker restart, fenced producer)."),
		replicationLag: set.Gauge("replication_lag_bytes", "Server WAL end minus the position confirmed to the slot."),
		outboxAge: set.Histogram("outbox_age_seconds",
			"Time from an event's PostgreSQL commit to the commit of the Kafka transaction holding it.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}),
		events: set.Counter("events_published_total", "Events committed to the events topic."),
		bytes:  set.Counter("event_bytes_published_total", "Envelope bytes committed to the events topic."),
		fannedOut: set.Counter("fanned_out_events_total",
			"Events whose deliveries cdc made itself, in the Kafka transaction of the event (at most HOOKSTREAM_CDC_FANOUT_MAX endpoints receive them); fanout makes the others'."),
		deliveries: set.Counter("deliveries_produced_total", "Delivery records committed by cdc for the events it fanned out."),
		filtered: set.Counter("filtered_deliveries_total",
			"Deliveries cdc did not make because the endpoint's payload filter is false for the event: one per (event, endpoint)."),
		unmatched: set.Counter("unmatched_events_total", "Events cdc fanned out that no endpoint receives."),
		endpointChanges: set.Counter("endpoint_records_published_total",
			"Endpoint records (including tombstones) committed to the endpoints topic."),
		transactions: set.Counter("kafka_transactions_total", "Kafka transactions committed."),
		commitSeconds: set.Histogram("kafka_commit_seconds",
			"Time to commit one Kafka transaction: its events flushed, its checkpoint written, the transaction ended (a round trip to the broker each).",
			metrics.CommitBuckets),
		deadLetters: set.CounterVec("dead_letters_total",
			"Outbox rows refused (not published) and sent to the dlq topic and outbox_dead_letter, by reason: malformed, too_large, unknown_type, schema_version, invalid_data.",
			"reason"),
		checkpointLSN: set.Gauge("checkpoint_lsn", "Commit LSN of the last checkpoint committed to Kafka."),
		partitions:    set.CounterVec("outbox_partitions_total", "Outbox day partitions created and dropped.", "action"),
	}
	for _, r := range Reasons() {
		m.deadLetters.WithLabelValues(r) // every reason is a series from the start, so increase() sees the first one
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("cdc: register metrics: %w", err)
	}
	return m, nil
}
