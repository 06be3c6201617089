package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/topics"
)

// The operator's alerts and dashboard (R35) live beside the code they watch; these tests keep
// them from naming metrics hookstream does not export, which would leave an alert silent forever.
var monitoringDir = filepath.Join("..", "..", "deploy", "monitoring")

// alertRules is the Prometheus rule-file shape; unknown keys are refused so that a misspelt
// `anotations:` cannot pass as an alert without annotations.
type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"` // a recording rule (the SLO's ratios)
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type dashboardPanel struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Datasource  *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr       string `json:"expr"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
	Panels []dashboardPanel `json:"panels"` // a collapsed row holds its panels
}

// dashboardVariable is a template variable: a drop-down at the top of the dashboard.
type dashboardVariable struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Query any    `json:"query"`
}

type dashboard struct {
	UID           string           `json:"uid"`
	Title         string           `json:"title"`
	SchemaVersion int              `json:"schemaVersion"`
	Panels        []dashboardPanel `json:"panels"`
	Templating    struct {
		List []dashboardVariable `json:"list"`
	} `json:"templating"`
}

func loadAlertRules(t *testing.T) alertRules {
	t.Helper()
	var rules alertRules
	readStrictYAML(t, filepath.Join(monitoringDir, "alerts.yml"), &rules)
	return rules
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(monitoringDir, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	return d
}

// allPanels flattens rows: the panels of a collapsed row are nested in it.
func allPanels(ps []dashboardPanel) []dashboardPanel {
	var out []dashboardPanel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

var (
	// PromQL string literals: a label value such as job=~"hookstream_x" names no metric.
	promString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	metricName = regexp.MustCompile(`\bhookstream_[a-zA-Z0-9_:]*`)
	// Recording rules' names: hookstream:<metric>:<operations>.
	recordName = regexp.MustCompile(`^hookstream:[a-z0-9_]+:[a-z0-9_]+$`)
	// Prometheus durations: 30s, 1h30m, 2d.
	promDuration = regexp.MustCompile(`^([0-9]+(ms|s|m|h|d|w|y))+$`)
)

// promSelector is a metric name with its label matchers, if any; a following ( makes it a
// function call instead (vector(0), rate(...)).
var promSelector = regexp.MustCompile(`\b([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?(\s*\()?`)

// unfilteredSelectors returns the metric selectors of a PromQL expression that lack the
// dashboard's instance matcher, so a panel that ignores the instance drop-down is caught.
func unfilteredSelectors(expr string) []string {
	// Mask string literals, keeping offsets: a label value names no metric.
	masked := promString.ReplaceAllStringFunc(expr, func(s string) string { return strings.Repeat("x", len(s)) })
	var out []string
	for _, m := range promSelector.FindAllStringSubmatchIndex(masked, -1) {
		name := masked[m[2]:m[3]]
		if m[6] >= 0 || !strings.Contains(name, "_") || strings.HasPrefix(name, "__") {
			continue // a function, a label name (by (instance), le), $__rate_interval
		}
		if m[4] < 0 || !strings.Contains(expr[m[4]:m[5]], `instance=~"$instance"`) {
			out = append(out, expr[m[0]:m[1]])
		}
	}
	return out
}

// metricsIn returns the hookstream_ names in a PromQL expression, outside string literals.
func metricsIn(expr string) []string {
	return metricName.FindAllString(promString.ReplaceAllString(expr, `""`), -1)
}

// referencedMetrics maps every hookstream_ name used by alerts.yml and dashboard.json, in
// expressions and in the prose that tells operators what to look at, to where it is used.
func referencedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	refs := map[string][]string{}
	add := func(where string, names []string) {
		for _, n := range names {
			if !slices.Contains(refs[n], where) {
				refs[n] = append(refs[n], where)
			}
		}
	}
	for _, g := range loadAlertRules(t).Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				add("recording rule "+r.Record, metricsIn(r.Expr))
				continue
			}
			add("alert "+r.Alert, metricsIn(r.Expr))
			for k, v := range r.Annotations {
				add("alert "+r.Alert+" "+k, metricName.FindAllString(v, -1))
			}
		}
	}
	for _, p := range allPanels(loadDashboard(t).Panels) {
		for _, tg := range p.Targets {
			add("panel "+p.Title, metricsIn(tg.Expr))
		}
		add("panel "+p.Title+" description", metricName.FindAllString(p.Description, -1))
	}
	return refs
}

// The rule file and the dashboard are well formed and say what an operator needs (R35).
func TestMonitoringAssetsWellFormed(t *testing.T) {
	rules := loadAlertRules(t)
	if len(rules.Groups) == 0 {
		t.Fatal("alerts.yml has no rule groups")
	}
	seen := map[string]bool{}
	for _, g := range rules.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q: a group needs a name and rules", g.Name)
		}
		for _, r := range g.Rules {
			if r.Record != "" {
				// level:metric:operations, so a recorded series is never taken for an exported one.
				if r.Alert != "" || !recordName.MatchString(r.Record) || seen[r.Record] || strings.TrimSpace(r.Expr) == "" ||
					r.For != "" || len(r.Annotations) > 0 {
					t.Errorf("group %s: recording rule %q: want a unique hookstream:<metric>:<operations> name, an expr, and no alert, for or annotations", g.Name, r.Record)
				}
				seen[r.Record] = true
				continue
			}
			switch {
			case r.Alert == "":
				t.Errorf("group %s: a rule with neither `alert:` nor `record:`", g.Name)
			case seen[r.Alert]:
				t.Errorf("alert %s is defined twice", r.Alert)
			}
			seen[r.Alert] = true
			if strings.TrimSpace(r.Expr) == "" {
				t.Errorf("alert %s has no expr", r.Alert)
			}
			if !promDuration.MatchString(r.For) {
				t.Errorf("alert %s: for %q, want a duration such as 5m (a blip must not page)", r.Alert, r.For)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("alert %s: severity %q, want warning or critical", r.Alert, s)
			}
			for _, k := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[k]) == "" {
					t.Errorf("alert %s has no %s annotation", r.Alert, k)
				}
			}
		}
	}

	d := loadDashboard(t)
	if !regexp.MustCompile(`^[a-zA-Z0-9_-]{1,40}$`).MatchString(d.UID) {
		t.Errorf("dashboard uid %q: a fixed uid of at most 40 letters, digits, - or _ keeps links and re-imports stable", d.UID)
	}
	if d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("dashboard title %q, schemaVersion %d", d.Title, d.SchemaVersion)
	}
	vars := map[string]dashboardVariable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if v := vars["datasource"]; v.Type != "datasource" || v.Query != "prometheus" {
		t.Errorf("dashboard: template variable datasource is %+v, want a Prometheus data source variable", v)
	}
	if v := vars["instance"]; v.Type != "query" {
		t.Errorf("dashboard: template variable instance is %+v, want a query variable", v)
	}
	ids := map[int]string{}
	panels := 0
	for _, p := range allPanels(d.Panels) {
		if p.Title == "" {
			t.Errorf("panel %d (%s) has no title", p.ID, p.Type)
		}
		if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			continue
		}
		panels++
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no target", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q has a target without expr", p.Title)
			}
			if tg.Datasource != nil && tg.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: a target's datasource is %q, not ${datasource}", p.Title, tg.Datasource.UID)
			}
			for _, sel := range unfilteredSelectors(tg.Expr) {
				t.Errorf("panel %q: %s does not follow the instance variable (instance=~\"$instance\")", p.Title, sel)
			}
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource is not ${datasource}; it would not follow the data source variable", p.Title)
		}
	}
	if panels == 0 {
		t.Error("dashboard has no panels")
	}
	if len(referencedMetrics(t)) == 0 {
		t.Error("alerts and dashboard name no hookstream_ metric")
	}
}

// Every hookstream_ metric the alerts and the dashboard name is exported by a running
// `hookstream dev`, which serves every component's metrics from one registry. Labelled families
// appear only once they have a series, so the test first makes each of them happen: a delivery,
// a failed attempt retried through a tier, an exhausted delivery, an open circuit, a refused
// attempt record, a bulk replay.
func TestMonitoringMetricsExportedByDev(t *testing.T) {
	t.Parallel()
	refs := referencedMetrics(t)
	db := testenv.NewEmptyDatabase(t)
	kafkaPort := testenv.FreePort(t)
	// One retry: a failing delivery is retried once through the 5s tier, then exhausted (R22).
	dev := startDev(t, db, "--retry-schedule", "1s", "--dev-kafka-port", fmt.Sprint(kafkaPort))

	var ok, failing, dead received
	okSrv := httptest.NewServer(ok.handler(func(int) int { return http.StatusOK }))
	defer okSrv.Close()
	failingSrv := httptest.NewServer(failing.handler(func(int) int { return http.StatusInternalServerError }))
	defer failingSrv.Close()
	deadSrv := httptest.NewServer(dead.handler(func(int) int { return http.StatusServiceUnavailable }))
	defer deadSrv.Close()

	okID, _ := dev.createEndpoint(t, "mon-ok", okSrv.URL+"/hooks", "customer.*")
	dev.createEndpoint(t, "mon-failing", failingSrv.URL+"/hooks", "customer.*")
	dev.createEndpoint(t, "mon-dead", deadSrv.URL+"/hooks", "customer.*")
	time.Sleep(500 * time.Millisecond) // the endpoint records reach the views before the events
	appendEvent(t, db, "mon-ok", "customer.created")
	appendEvent(t, db, "mon-failing", "customer.created") // fails, is retried, is exhausted
	for range 6 {
		// More consecutive failures than the breaker allows (5): its retries are deferred.
		appendEvent(t, db, "mon-dead", "customer.created")
	}

	// An attempt record the recorder cannot read: refused to the dlq topic.
	cl, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", kafkaPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = cl.ProduceSync(ctx, &kgo.Record{Topic: topics.For("hookstream").Attempts, Key: []byte("dlv_x"), Value: []byte("not an attempt")}).FirstErr()
	cancel()
	if err != nil {
		t.Fatal(err)
	}

	ok.waitFor(t, 1, 60*time.Second)
	// A bulk replay from the history, once the recorder has written the delivery (R24).
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM delivery WHERE endpoint_id = $1 AND state = 'succeeded'`, okID).Scan(&n)
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recorder did not write the delivery in 30s (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	job, err := dev.api.CreateReplayJobWithResponse(context.Background(), "mon-ok", okID,
		adminclient.ReplayJobRequest{Since: time.Now().Add(-10 * time.Minute)})
	must(t, "bulk replay", job, err)
	ok.waitFor(t, 2, 60*time.Second)

	// The rest (retry, exhaustion, deferrals, the refusal) happens within seconds; poll.
	var missing []string
	deadline = time.Now().Add(60 * time.Second)
	for {
		families := scrapeFamilies(t, dev.adminURL+"/metrics")
		missing = missing[:0]
		for name := range refs {
			if !exported(families, name) {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	slices.Sort(missing)
	var b strings.Builder
	for _, n := range missing {
		fmt.Fprintf(&b, "\n  %s  (used by %s)", n, strings.Join(refs[n], "; "))
	}
	t.Fatalf("%d metrics used in deploy/monitoring are not exported by `hookstream dev` (a labelled family "+
		"shows only after its first series: if the name is right, make the scenario above produce one):%s", len(missing), b.String())
}

// scrapeFamilies reads the families of a Prometheus text exposition: name → type.
func scrapeFamilies(t *testing.T, url string) map[string]string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	families := map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			families[f[2]] = f[3]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return families
}

// exported says whether name is a family, or a series of a histogram or summary family
// (x_bucket, x_sum, x_count). A counter's name with _count appended is not exported.
func exported(families map[string]string, name string) bool {
	if _, ok := families[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, found := strings.CutSuffix(name, suffix)
		if !found {
			continue
		}
		switch families[base] {
		case "histogram":
			return true
		case "summary":
			return suffix != "_bucket"
		}
	}
	return false
}

// A component command exports the consumer lag of its own groups, and of no other, on its
// metrics address (package kafkalag): fanout, the events topic in <prefix>.fanout.
func TestMonitoringComponentExportsConsumerLag(t *testing.T) {
	t.Parallel()
	k := testenv.NewKafka(t)
	names := k.CreateTopics(t)
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	stop := testenv.Go(t, "fanout", func(ctx context.Context) error {
		return run(ctx, []string{"fanout", "--kafka-brokers", strings.Join(k.Brokers, ","), "--topic-prefix", k.Prefix,
			"--metrics-addr", metricsAddr, "--log-format", "text"}, io.Discard)
	})
	defer stop()

	const name = "hookstream_kafka_consumer_lag_records"
	want := fmt.Sprintf(`%s{group="%s.fanout",topic="%s"}`, name, k.Prefix, names.Events)
	var series []string
	deadline := time.Now().Add(time.Minute)
	for {
		series = series[:0]
		if resp, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if line := sc.Text(); strings.HasPrefix(line, name+"{") {
					series = append(series, line)
				}
			}
			resp.Body.Close()
		}
		if len(series) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(series) != 1 || !strings.HasPrefix(series[0], want+" ") {
		t.Fatalf("fanout's /metrics has lag series %q, want exactly %s", series, want)
	}
}
