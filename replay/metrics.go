package replay

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/internal/records"
)

// engineMetrics keep the names they had when the engine was part of the admin API (subsystem
// admin): the engine runs in the admin process, and the dashboards and alerts know them so.
type engineMetrics struct {
	jobs     *prometheus.GaugeVec   // open jobs by state (queued, running), from PostgreSQL
	jobsDone *prometheus.CounterVec // jobs this process finished, by state
	produced *prometheus.CounterVec // delivery records produced, by trigger
}

func newMetrics(reg prometheus.Registerer) (*engineMetrics, error) {
	set := &metrics.Set{Registerer: reg, Subsystem: "admin"}
	m := &engineMetrics{
		jobs: set.GaugeVec("replay_jobs",
			"Replay jobs not finished yet, by state (queued, running), as last read from PostgreSQL.", "state"),
		jobsDone: set.CounterVec("replay_jobs_finished_total",
			"Replay jobs finished by this process, by final state (succeeded, failed, canceled).", "state"),
		produced: set.CounterVec("deliveries_produced_total",
			"Delivery records the API produced to the deliveries topic, by trigger (replay, test).", "trigger"),
	}
	for _, s := range []string{JobQueued, JobRunning} {
		m.jobs.WithLabelValues(s)
	}
	for _, s := range finalStates {
		m.jobsDone.WithLabelValues(s)
	}
	for _, t := range []string{records.TriggerReplay, records.TriggerTest} {
		m.produced.WithLabelValues(t)
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("replay: metrics: %w", err)
	}
	return m, nil
}
