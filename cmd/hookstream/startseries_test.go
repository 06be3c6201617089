package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// scrapeSeries reads a /metrics page: each series as name{label="value",...} (labels sorted, as
// the client library writes them) → its value (a histogram's sample count). ok is false while
// the address does not answer.
func scrapeSeries(t *testing.T, url string) (map[string]float64, bool) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out, true
}

// series names one series as scrapeSeries keys it; labels are name/value pairs in label order.
func series(name string, labels ...string) string {
	var ls []string
	for i := 0; i+1 < len(labels); i += 2 {
		ls = append(ls, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	slices.Sort(ls)
	return name + "{" + strings.Join(ls, ",") + "}"
}

// Every labelled counter an alert of deploy/monitoring/alerts.yml reads (and the delivery
// latency histogram the SLO reads) is exported at 0, for every label value the code counts
// with, by a process that has just started and done nothing: what a restarted process shows
// Prometheus. A series that appears only at its first count hides that count from increase(),
// so an alert on a single refused record, failed job or dead letter would stay silent
// (tests/alerts_test.yml shows it). Each component command is started as a deployment runs it,
// and its metrics address scraped; admin with HOOKSTREAM_METRICS_ADDR, which also takes
// /metrics off the API's address.
func TestMonitoringLabelledCountersAtZeroFromStart(t *testing.T) {
	t.Parallel()
	db := testenv.NewDatabase(t)
	k := testenv.NewKafka(t)
	k.CreateTopics(t)
	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	tiers := []string{"5s", "1m"}
	common := []string{"--kafka-brokers", strings.Join(k.Brokers, ","), "--topic-prefix", k.Prefix, "--log-format", "text"}
	retry := []string{"--retry-schedule", "5s,1m"}

	var (
		senderWant, retryWant, recorderWant, adminWant []string
	)
	for _, r := range []string{"circuit_open", "queue_full", "not_due", "stale_view", "partner_share"} {
		senderWant = append(senderWant, series("hookstream_sender_deferrals_total", "reason", r))
	}
	for _, c := range []string{"failed", "slowed", "raised"} {
		senderWant = append(senderWant, series("hookstream_sender_concurrency_changes_total", "change", c))
	}
	senderWant = append(senderWant, series("hookstream_sender_attempts_total", "category", "none", "outcome", records.OutcomeDelivered))
	for _, c := range records.ErrorCategories {
		senderWant = append(senderWant,
			series("hookstream_sender_attempts_total", "category", c, "outcome", records.OutcomeRetrying),
			series("hookstream_sender_attempts_total", "category", c, "outcome", records.OutcomeFailed))
	}
	for _, tr := range []string{"initial", "retry", "replay", "test"} {
		senderWant = append(senderWant, series("hookstream_delivery_latency_seconds", "trigger", tr))
	}
	senderWant = append(senderWant, series("hookstream_retry_dead_letters_total", "reason", "exhausted"))
	for _, tier := range tiers {
		senderWant = append(senderWant, series("hookstream_retry_scheduled_total", "tier", tier),
			series("hookstream_retry_deferred_total", "tier", tier))
		retryWant = append(retryWant, series("hookstream_retry_released_total", "tier", tier),
			series("hookstream_retry_aborted_releases_total", "tier", tier),
			series("hookstream_retry_session_restarts_total", "tier", tier),
			series("hookstream_retry_release_lateness_seconds", "tier", tier))
	}
	for _, r := range []string{"unreadable", "refused"} {
		retryWant = append(retryWant, series("hookstream_retry_dead_letters_total", "reason", r))
	}
	for _, r := range []string{"invalid", "unknown_endpoint", "tenant_mismatch", "unstorable"} {
		recorderWant = append(recorderWant, series("hookstream_recorder_attempts_refused_total", "reason", r))
	}
	for _, s := range []string{"succeeded", "failed", "canceled"} {
		adminWant = append(adminWant, series("hookstream_admin_replay_jobs_finished_total", "state", s))
	}
	for _, tr := range []string{"replay", "test"} {
		adminWant = append(adminWant, series("hookstream_admin_deliveries_produced_total", "trigger", tr))
	}

	adminAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	procs := []struct {
		name string
		args []string
		want []string
	}{
		{"sender", slices.Concat([]string{"sender", "--secret-key", key}, common, retry), senderWant},
		{"retry", slices.Concat([]string{"retry", "--database-url", db.URL}, common, retry), retryWant},
		{"recorder", slices.Concat([]string{"recorder", "--database-url", db.URL}, common), recorderWant},
		{"admin", slices.Concat([]string{"admin", "--database-url", db.URL, "--secret-key", key,
			"--admin-token", "an-operator-token-for-tests", "--admin-addr", adminAddr}, common, retry), adminWant},
	}
	for _, p := range procs {
		addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
		args := slices.Concat(p.args, []string{"--metrics-addr", addr})
		stop := testenv.Go(t, p.name, func(ctx context.Context) error { return run(ctx, args, io.Discard) })
		defer stop()

		// The address answers as soon as the process starts; the component registers its
		// metrics as it is built, a moment later.
		var missing []string
		deadline := time.Now().Add(time.Minute)
		for {
			got, ok := scrapeSeries(t, "http://"+addr+"/metrics")
			missing = missing[:0]
			for _, s := range p.want {
				v, found := got[s]
				switch {
				case !found:
					missing = append(missing, s)
				case v != 0:
					t.Errorf("%s: %s = %v right after start, want 0", p.name, s, v)
				}
			}
			if ok && len(missing) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		for _, s := range missing {
			t.Errorf("%s: %s is not exported after start", p.name, s)
		}
		if status, _ := readiness(t, addr); status != http.StatusOK && status != http.StatusServiceUnavailable {
			t.Errorf("%s: GET /readyz on its metrics address: %d", p.name, status)
		}
	}

	// admin with a metrics address: the partner-facing address keeps the probes, not /metrics.
	resp, err := http.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the admin API's address: %s, want 404 while HOOKSTREAM_METRICS_ADDR serves them", resp.Status)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + adminAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s on the admin API's address: %s, want 200", path, resp.Status)
		}
	}
}
