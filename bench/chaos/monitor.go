package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// Metrics the monitor follows.
const (
	mFanoutMade = "hookstream_fanout_deliveries_produced_total"
	mCDCMade    = "hookstream_cdc_deliveries_produced_total"
	mAttempts   = "hookstream_sender_attempts_total"
	mDeferrals  = "hookstream_sender_deferrals_total"
	mInFlight   = "hookstream_sender_requests_in_flight"
	mCircuits   = "hookstream_sender_circuits_open"
	mHeld       = "hookstream_retry_held_records"
	mReleased   = "hookstream_retry_released_total"
	mRecorded   = "hookstream_recorder_attempts_recorded_total"
)

// monitor logs every interval what the pipeline did since the last line, until ctx ends, and
// keeps the last sums. Counters restart with their process, so a line after a kill can
// undercount; the figures are for reading a run, not for judging it.
type monitor struct {
	cluster *cluster
	log     func(string, ...any)
	last    harness.Sums
}

func (m *monitor) run(ctx context.Context, every time.Duration) {
	at := time.Now()
	for harness.Sleep(ctx, every) == nil {
		sums, missed := harness.ScrapeSums(ctx, m.cluster.metricsURLs(), "hookstream_")
		now := time.Now()
		m.log("pipeline: %s (%d processes did not answer)", m.line(sums, now.Sub(at)), missed)
		m.last, at = sums, now
	}
}

// line describes sums against the previous scrape, elapsed ago: rates per second, and gauges.
func (m *monitor) line(now harness.Sums, elapsed time.Duration) string {
	rate := func(k string) float64 {
		if m.last == nil {
			return 0
		}
		return (now[k] - m.last[k]) / elapsed.Seconds()
	}
	outcomes := func(metric, label string) string {
		var parts []string
		byLabel := now.ByLabel(metric, label)
		for _, v := range slices.Sorted(maps.Keys(byLabel)) {
			parts = append(parts, fmt.Sprintf("%s %.0f/s", v, rate(fmt.Sprintf("%s{%s=%s}", metric, label, v))))
		}
		return strings.Join(parts, " ")
	}
	return fmt.Sprintf("deliveries made by cdc %.0f/s, fanout %.0f/s · attempts %s · deferrals %s · in flight %.0f, open circuits %.0f · retry held %.0f, released %.0f/s · recorded %.0f/s",
		rate(mCDCMade), rate(mFanoutMade), outcomes(mAttempts, "outcome"), outcomes(mDeferrals, "reason"), now[mInFlight], now[mCircuits],
		now[mHeld], rate(mReleased), rate(mRecorded))
}
