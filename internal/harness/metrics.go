package harness

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sums are the counters and gauges of processes summed: by metric name, and by name and the
// value of each of its labels ("hookstream_sender_deferrals_total{reason=queue_full}").
type Sums map[string]float64

// ScrapeSums reads every URL's /metrics and sums the metrics whose names start with prefix.
// A process that does not answer (killed, restarting) is skipped and counted in missed.
func ScrapeSums(ctx context.Context, urls []string, prefix string) (sums Sums, missed int) {
	sums = Sums{}
	client := &http.Client{Timeout: 2 * time.Second}
	for _, u := range urls {
		if err := scrapeInto(ctx, client, u, prefix, sums); err != nil {
			missed++
		}
	}
	return sums, missed
}

func scrapeInto(ctx context.Context, client *http.Client, url, prefix string, into Sums) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
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
	for name, f := range families {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
			into[name] += v
			for _, l := range m.GetLabel() {
				into[fmt.Sprintf("%s{%s=%s}", name, l.GetName(), l.GetValue())] += v
			}
		}
	}
	return nil
}

// ByLabel returns the sums of metric by the values of label.
func (s Sums) ByLabel(metric, label string) map[string]float64 {
	out := map[string]float64{}
	pre := metric + "{" + label + "="
	for k, v := range s {
		if rest, ok := strings.CutPrefix(k, pre); ok {
			out[strings.TrimSuffix(rest, "}")] = v
		}
	}
	return out
}
