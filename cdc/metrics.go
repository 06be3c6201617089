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
	endpointChanges prometheus.Counter
	transactions    prometheus.Counter
	deadLetters     *prometheus.CounterVec
	checkpointLSN   prometheus.Gauge
	partitions      *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*cdcMetrics, error) {
	ns, sub := metrics.Namespace, "cdc"
	m := &cdcMetrics{
		active: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "active",
			Help: "1 while this process is the active slot reader, 0 while it waits."}),
		sessionFailures: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "session_failures_total",
			Help: "Sessions that ended in an error and restarted from the last checkpoint (lost connection, broker restart, fenced producer)."}),
		replicationLag: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "replication_lag_bytes",
			Help: "Server WAL end minus the position confirmed to the slot."}),
		outboxAge: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "outbox_age_seconds",
			Help:    "Time from an event's PostgreSQL commit to the commit of the Kafka transaction holding it.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "events_published_total",
			Help: "Events committed to the events topic."}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "event_bytes_published_total",
			Help: "Envelope bytes committed to the events topic."}),
		endpointChanges: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "endpoint_records_published_total",
			Help: "Endpoint records (including tombstones) committed to the endpoints topic."}),
		transactions: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "kafka_transactions_total",
			Help: "Kafka transactions committed."}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "dead_letters_total",
			Help: "Outbox rows refused (not published) and sent to the dlq topic and outbox_dead_letter, by reason: malformed, too_large, unknown_type, schema_version, invalid_data."},
			[]string{"reason"}),
		checkpointLSN: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "checkpoint_lsn",
			Help: "Commit LSN of the last checkpoint committed to Kafka."}),
		partitions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "outbox_partitions_total",
			Help: "Outbox day partitions created and dropped."}, []string{"action"}),
	}
	for _, r := range Reasons() {
		m.deadLetters.WithLabelValues(r) // every reason is a series from the start, so increase() sees the first one
	}
	if err := metrics.Register(reg, m.active, m.sessionFailures, m.replicationLag, m.outboxAge, m.events, m.bytes,
		m.endpointChanges, m.transactions, m.deadLetters, m.checkpointLSN, m.partitions); err != nil {
		return nil, fmt.Errorf("cdc: register metrics: %w", err)
	}
	return m, nil
}
