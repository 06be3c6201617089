package main

// Metrics the benchmark reads from the components (sender/metrics.go, fanout/fanout.go).
const (
	metricPrefix    = "hookstream_"
	metricDeferrals = "hookstream_sender_deferrals_total"
	metricAttempts  = "hookstream_sender_attempts_total"
	// metricLimitChanges counts the changes of endpoints' adaptive concurrency, by change.
	metricLimitChanges = "hookstream_sender_concurrency_changes_total"
	// The initial deliveries are made by cdc (the events few endpoints receive) and by fanout
	// (the others): each counts its own (initialMade).
	metricFanoutMade = "hookstream_fanout_deliveries_produced_total"
	metricCDCMade    = "hookstream_cdc_deliveries_produced_total"
	// metricFanoutEvents counts the events fanout consumed (those cdc fanned out included),
	// metricFanoutFiltered and metricCDCFiltered the (event, endpoint) pairs a payload filter
	// refused: one evaluation each.
	metricFanoutEvents   = "hookstream_fanout_events_consumed_total"
	metricFanoutFiltered = "hookstream_fanout_filtered_deliveries_total"
	metricCDCFiltered    = "hookstream_cdc_filtered_deliveries_total"
	// metricCDCEndpointRecords counts the endpoint records cdc committed.
	metricCDCEndpointRecords = "hookstream_cdc_endpoint_records_published_total"
)

// initialMade is the initial deliveries cdc and fanout made, of the sums m.
func initialMade(m map[string]float64) float64 { return m[metricFanoutMade] + m[metricCDCMade] }

// filterEvaluations is the payload filter evaluations that refused a delivery, of the sums m.
func filterEvaluations(m map[string]float64) float64 {
	return m[metricFanoutFiltered] + m[metricCDCFiltered]
}
