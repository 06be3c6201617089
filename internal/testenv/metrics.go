package testenv

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Counter sums the counter name in g over its series whose labels hold every pair of labels
// ("reason", "unknown_type", ...); no pairs sums every series.
func Counter(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	if len(labels)%2 != 0 {
		t.Fatalf("Counter %s: labels %v are not name/value pairs", name, labels)
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
			v += m.GetCounter().GetValue()
		}
	}
	return v
}
