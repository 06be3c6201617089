package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics the benchmark reads from the components (sender/metrics.go, streams/fanout.go).
const (
	metricDeferrals  = "hookstream_sender_deferrals_total"
	metricAttempts   = "hookstream_sender_attempts_total"
	metricFanoutMade = "hookstream_fanout_deliveries_produced_total"
)

// seriesKey names a sum of a counter's samples: over every sample whose label has value, or
// over all of them when label is empty.
type seriesKey struct{ metric, label, value string }

// series are counter sums over every process.
type series map[seriesKey]float64

// scrapeAll reads every URL's /metrics and sums the series of the metrics above.
func scrapeAll(ctx context.Context, urls []string) (series, error) {
	out := series{}
	for _, u := range urls {
		if err := scrape(ctx, u, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func scrape(ctx context.Context, url string, into series) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("scrape %s: status %d", url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return fmt.Errorf("scrape %s: %w", url, err)
	}
	for _, name := range []string{metricDeferrals, metricAttempts, metricFanoutMade} {
		for _, m := range families[name].GetMetric() {
			v := m.GetCounter().GetValue()
			into[seriesKey{metric: name}] += v
			for _, l := range m.GetLabel() {
				into[seriesKey{name, l.GetName(), l.GetValue()}] += v
			}
		}
	}
	return nil
}

// increase is after − before for every series of after.
func (after series) increase(before series) series {
	out := series{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}

// byLabel is metric's sums by the values of label: deferrals by reason.
func (s series) byLabel(metric, label string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s {
		if k.metric == metric && k.label == label {
			out[k.value] = v
		}
	}
	return out
}

// total is metric summed over all its samples.
func (s series) total(metric string) float64 { return s[seriesKey{metric: metric}] }
