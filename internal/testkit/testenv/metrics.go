package testenv

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Counter sums the counter name in g over its series whose labels hold every pair of labels
// ("reason", "unknown_type", ...); no pairs sums every series.
func Counter(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	return sum(t, g, name, labels, func(m *dto.Metric) float64 { return m.GetCounter().GetValue() })
}

// Gauge sums the gauge name in g over its series whose labels hold every pair of labels, as
// Counter does.
func Gauge(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	return sum(t, g, name, labels, func(m *dto.Metric) float64 { return m.GetGauge().GetValue() })
}

func sum(t testing.TB, g prometheus.Gatherer, name string, labels []string, value func(*dto.Metric) float64) float64 {
	t.Helper()
	if len(labels)%2 != 0 {
		t.Fatalf("%s: labels %v are not name/value pairs", name, labels)
	}
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for i := 0; i < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue series
				}
			}
			v += value(m)
		}
	}
	return v
}

// HistogramCount sums the sample counts of the histogram name in g over its series whose
// labels hold every pair of labels, as Counter does.
func HistogramCount(t testing.TB, g prometheus.Gatherer, name string, labels ...string) uint64 {
	t.Helper()
	return uint64(sum(t, g, name, labels, func(m *dto.Metric) float64 { return float64(m.GetHistogram().GetSampleCount()) }))
}

// Series counts the series of name in g.
func Series(t testing.TB, g prometheus.Gatherer, name string) int {
	t.Helper()
	return int(sum(t, g, name, nil, func(*dto.Metric) float64 { return 1 }))
}

// Value sums the metric name in g over its series whose labels hold every pair of labels, as
// Counter does, whatever its kind: the values of a counter or a gauge, the sample counts of a
// histogram or a summary.
func Value(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	return sum(t, g, name, labels, func(m *dto.Metric) float64 {
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		case m.Summary != nil:
			return float64(m.GetSummary().GetSampleCount())
		}
		return m.GetUntyped().GetValue()
	})
}

// WaitValue waits until Value of name in g is at least want, and fails t, with the value it
// got, once timeout has passed without.
func WaitValue(t testing.TB, g prometheus.Gatherer, name string, want float64, timeout time.Duration) {
	t.Helper()
	var got float64
	if !Poll(timeout, func() bool { got = Value(t, g, name); return got >= want }) {
		t.Fatalf("%s = %v after %s, want %v", name, got, timeout, want)
	}
}
