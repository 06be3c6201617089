package inbox

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	hsmetrics "github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/webhook"
)

// metrics are the inbox's Prometheus metrics, registered on Config.Registerer when it is set
// (watch verification failures, timestamps outside the window, duplicates and rows
// stuck in received apart). They exist either way, so the code never asks.
type metrics struct {
	verificationFailures *prometheus.CounterVec   // source, reason
	outsideTolerance     *prometheus.CounterVec   // source, direction
	clockSkew            *prometheus.HistogramVec // source
	received             *prometheus.CounterVec   // source
	duplicates           *prometheus.CounterVec   // source
	bodyMismatches       *prometheus.CounterVec   // source
	refused              *prometheus.CounterVec   // source
	processing           *prometheus.HistogramVec // source, outcome
	purged               prometheus.Counter
	unknownSources       prometheus.Counter
}

// Processing outcomes, the outcome label of hookstream_inbox_processing_seconds.
const (
	outcomeProcessed = "processed"
	outcomeFailed    = "failed" // will be retried
	outcomeDead      = "dead"
	outcomeRefused   = "refused"
)

func newMetrics(i *Inbox, reg prometheus.Registerer) (*metrics, error) {
	set := &hsmetrics.Set{Registerer: reg, Subsystem: "inbox"}
	m := &metrics{
		verificationFailures: set.CounterVec("verification_failures_total",
			"Requests refused with 401 because their signature did not verify, by source and reason (missing_header, malformed_header, invalid_timestamp, timestamp_too_old, timestamp_too_new, no_matching_signature).",
			"source", "reason"),
		outsideTolerance: set.CounterVec("timestamp_outside_tolerance_total",
			"Requests refused because their signed timestamp was outside the tolerance: direction past (stale, a replay or a queue that held it) or future (a clock ahead).",
			"source", "direction"),
		clockSkew: set.HistogramVec("clock_skew_seconds",
			"The receiver's clock minus the signed timestamp of verified requests: positive when the request is older than now, negative when the sender's clock is ahead.",
			[]float64{-300, -60, -10, -1, 0, 1, 10, 60, 300}, "source"),
		received: set.CounterVec("received_total", "Events stored for the first time, by source.", "source"),
		duplicates: set.CounterVec("duplicates_total",
			"Verified copies of events already stored, with the same body: acknowledged and not processed again.", "source"),
		bodyMismatches: set.CounterVec("body_mismatches_total",
			"Verified requests carrying the id of a stored event with a different body: refused with 409, never processed.", "source"),
		refused: set.CounterVec("refused_total",
			"Events refused for good by the authorization hook or the processor (ErrRefused).", "source"),
		processing: set.HistogramVec("processing_seconds",
			"Time of one attempt (authorization and ProcessFunc), by source and outcome (processed, failed, dead, refused).",
			prometheus.ExponentialBuckets(0.001, 4, 10), "source", "outcome"),
		purged: set.Counter("purged_total", "Finished rows deleted after the retention."),
		unknownSources: set.Counter("unknown_source_requests_total",
			"Requests answered 404 because their path names no source this inbox receives (Inbox.UnknownSource, or ServeHTTP of an inbox made with Open): a sender with a wrong URL, a source not set up, or a scanner."),
	}
	set.Collector(rowsCollector{i})
	if i.verifier != nil {
		m.addSource(HookstreamSource)
	}
	if err := set.Err(); err != nil {
		return nil, errors.Join(errors.New("inbox: register metrics"), err)
	}
	return m, nil
}

// addSource makes a source's counters exist at zero, so alerts on their increase work from
// the first event.
func (m *metrics) addSource(source string) {
	for _, c := range []*prometheus.CounterVec{m.received, m.duplicates, m.bodyMismatches, m.refused} {
		c.WithLabelValues(source)
	}
	for _, d := range []string{directionPast, directionFuture} {
		m.outsideTolerance.WithLabelValues(source, d)
	}
}

// Directions of a timestamp outside the tolerance, the label of timestamp_outside_tolerance_total.
const (
	directionPast   = "past"
	directionFuture = "future"
)

// verificationFailed counts a request whose signature did not verify.
func (m *metrics) verificationFailed(source string, err error) {
	reason := "other"
	switch {
	case errors.Is(err, webhook.ErrMissingHeader):
		reason = "missing_header"
	case errors.Is(err, webhook.ErrMalformedHeader):
		reason = "malformed_header"
	case errors.Is(err, webhook.ErrTimestampTooOld):
		reason = "timestamp_too_old"
		m.outsideTolerance.WithLabelValues(source, directionPast).Inc()
	case errors.Is(err, webhook.ErrTimestampTooNew):
		reason = "timestamp_too_new"
		m.outsideTolerance.WithLabelValues(source, directionFuture).Inc()
	case errors.Is(err, webhook.ErrInvalidTimestamp):
		reason = "invalid_timestamp"
	case errors.Is(err, webhook.ErrNoMatchingSignature):
		reason = "no_matching_signature"
	}
	m.verificationFailures.WithLabelValues(source, reason).Inc()
}

// observeSkew records the skew of a verified webhook-timestamp header.
func (m *metrics) observeSkew(source, timestamp string) {
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return // verified, so it parses; kept for safety
	}
	m.clockSkew.WithLabelValues(source).Observe(time.Since(time.Unix(sec, 0)).Seconds())
}

// rowsCollector reads the rows by state at scrape time: every state but processed, whose rows
// are the bulk of the table and counted by hookstream_inbox_processing_seconds instead.
type rowsCollector struct{ i *Inbox }

var (
	rowsDesc = prometheus.NewDesc("hookstream_inbox_rows",
		"Rows of the inbox table by source and state (received, retrying, dead, refused; processed rows are not counted).",
		[]string{"source", "state"}, nil)
	oldestDesc = prometheus.NewDesc("hookstream_inbox_oldest_row_age_seconds",
		"Age of the oldest row by source and state since it was received: for received, how long an event has waited unprocessed.",
		[]string{"source", "state"}, nil)
)

// collectTimeout bounds the scrape-time query; a slow database must not hang /metrics.
const collectTimeout = 5 * time.Second

func (c rowsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- rowsDesc
	ch <- oldestDesc
}

func (c rowsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	rows, err := c.i.pool.Query(ctx, c.i.sql.rows)
	if err == nil {
		var (
			source, state string
			n             int64
			age           float64
		)
		_, err = pgx.ForEachRow(rows, []any{&source, &state, &n, &age}, func() error {
			ch <- prometheus.MustNewConstMetric(rowsDesc, prometheus.GaugeValue, float64(n), source, state)
			ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, max(age, 0), source, state)
			return nil
		})
	}
	if err != nil {
		// Leave the gauges out rather than fail the whole scrape of the partner's service.
		c.i.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "inbox: metrics: count rows", slog.Any("err", err))
	}
}
