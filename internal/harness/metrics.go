package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
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

// ScrapeAllSums is ScrapeSums for callers that need every process: one that does not answer is
// an error.
func ScrapeAllSums(ctx context.Context, urls []string, prefix string) (Sums, error) {
	sums := Sums{}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, u := range urls {
		if err := scrapeInto(ctx, client, u, prefix, sums); err != nil {
			return nil, fmt.Errorf("scrape %s: %w", u, err)
		}
	}
	return sums, nil
}

// SaveMetrics writes each URL's /metrics text, as served, to dir/metrics-<i>.prom: the whole
// state of every process at one moment, for reading after the processes are gone.
func SaveMetrics(ctx context.Context, urls []string, dir string) error {
	client := &http.Client{Timeout: 10 * time.Second}
	for i, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("save metrics of %s: %w", u, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("save metrics of %s: %w", u, err)
		}
		name := filepath.Join(dir, fmt.Sprintf("metrics-%d.prom", i))
		if err := os.WriteFile(name, append([]byte("# scraped from "+u+"\n"), b...), 0o644); err != nil {
			return err
		}
	}
	return nil
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
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return err
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

// Minus is s − before for every sum of s: the increase of counters between two scrapes.
func (s Sums) Minus(before Sums) Sums {
	out := Sums{}
	for k, v := range s {
		out[k] = v - before[k]
	}
	return out
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
