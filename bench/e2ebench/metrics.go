package main

// Metrics the benchmark reads from the components (sender/metrics.go, fanout/fanout.go).
const (
	metricPrefix    = "hookstream_"
	metricDeferrals = "hookstream_sender_deferrals_total"
	metricAttempts  = "hookstream_sender_attempts_total"
	// metricLimitChanges counts the changes of endpoints' adaptive concurrency, by change.
	metricLimitChanges = "hookstream_sender_concurrency_changes_total"
	metricFanoutMade   = "hookstream_fanout_deliveries_produced_total"
	// metricFanoutEvents counts the events fanout consumed, metricFanoutFiltered the
	// (event, endpoint) pairs a payload filter refused: one evaluation each.
	metricFanoutEvents   = "hookstream_fanout_events_consumed_total"
	metricFanoutFiltered = "hookstream_fanout_filtered_deliveries_total"
	// metricCDCEndpointRecords counts the endpoint records cdc committed.
	metricCDCEndpointRecords = "hookstream_cdc_endpoint_records_published_total"
)
