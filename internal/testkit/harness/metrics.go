package harness

import (
	"bytes"
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
// an error. With saveDir set it also writes each URL's /metrics text, as served, to
// saveDir/metrics-<i>.prom: the whole state of every process at that moment, for reading after
// the processes are gone.
func ScrapeAllSums(ctx context.Context, urls []string, prefix, saveDir string) (Sums, error) {
	sums := Sums{}
	client := &http.Client{Timeout: 10 * time.Second}
	for i, u := range urls {
		text, err := fetchMetrics(ctx, client, u)
		if err == nil {
			err = sumInto(text, prefix, sums)
		}
		if err != nil {
			return nil, fmt.Errorf("scrape %s: %w", u, err)
		}
		if saveDir != "" {
			name := filepath.Join(saveDir, fmt.Sprintf("metrics-%d.prom", i))
			if err := os.WriteFile(name, append([]byte("# scraped from "+u+"\n"), text...), 0o644); err != nil {
				return nil, err
			}
		}
	}
	return sums, nil
}

func scrapeInto(ctx context.Context, client *http.Client, url, prefix string, into Sums) error {
	text, err := fetchMetrics(ctx, client, url)
	if err != nil {
		return err
	}
	return sumInto(text, prefix, into)
}

// fetchMetrics returns the text a /metrics URL serves.
func fetchMetrics(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	return io.ReadAll(resp.Body)
}

// sumInto adds the metrics of a /metrics text whose names start with prefix to into.
func sumInto(text []byte, prefix string, into Sums) error {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
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
