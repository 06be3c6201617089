package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The alerting rule files and their promtool unit tests (deploy/monitoring/tests, run by
// `make test-rules`).
var ruleFiles = map[string]string{
	"alerts.yml":          "alerts_test.yml",
	"receiver-alerts.yml": "receiver-alerts_test.yml",
}

// runbookBase is where every alert's runbook_url points: a section of deploy/README.md.
const runbookBase = "https://github.com/hookstream/hookstream/blob/main/deploy/README.md#"

// ruleAlerts returns the alerts of one rule file with their runbook_url.
func ruleAlerts(t *testing.T, file string) map[string]string {
	t.Helper()
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	raw, err := os.ReadFile(filepath.Join(monitoringDir, file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string]string{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" { // recording rules have no runbook
				out[r.Alert] = r.Annotations["runbook_url"]
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no alerts", file)
	}
	return out
}

// promtoolTests is the shape of a promtool rule test file; unknown keys are refused so that a
// misspelt key cannot pass as a test that checks nothing.
type promtoolTests struct {
	RuleFiles          []string `yaml:"rule_files"`
	EvaluationInterval string   `yaml:"evaluation_interval"`
	Tests              []struct {
		Interval    string `yaml:"interval"`
		InputSeries []struct {
			Series string `yaml:"series"`
			Values string `yaml:"values"`
		} `yaml:"input_series"`
		// PromqlExprTest checks the values of recording rules (and any expression).
		PromqlExprTest []struct {
			Expr       string `yaml:"expr"`
			EvalTime   string `yaml:"eval_time"`
			ExpSamples []struct {
				Labels string  `yaml:"labels"`
				Value  float64 `yaml:"value"`
			} `yaml:"exp_samples"`
		} `yaml:"promql_expr_test"`
		AlertRuleTest []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `yaml:"exp_labels"`
				ExpAnnotations map[string]string `yaml:"exp_annotations"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// Every alert has a promtool unit test that makes it fire and one evaluation where it stays
// silent (before its `for`, or on healthy series), so `promtool test rules` in make test proves
// each expression, not only its syntax.
func TestAlertRuleTests(t *testing.T) {
	for rules, tests := range ruleFiles {
		alerts := ruleAlerts(t, rules)
		var pt promtoolTests
		readStrictYAML(t, filepath.Join(monitoringDir, "tests", tests), &pt)
		if !slices.Equal(pt.RuleFiles, []string{"../" + rules}) {
			t.Errorf("%s tests rule files %v, want [../%s]", tests, pt.RuleFiles, rules)
		}
		fires, silent := map[string]bool{}, map[string]bool{}
		for _, tc := range pt.Tests {
			for _, a := range tc.AlertRuleTest {
				if _, ok := alerts[a.Alertname]; !ok {
					t.Errorf("%s tests %s, which %s does not have", tests, a.Alertname, rules)
				}
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					silent[a.Alertname] = true
				}
			}
		}
		for name := range alerts {
			if !fires[name] {
				t.Errorf("%s: no test in tests/%s expects %s to fire", rules, tests, name)
			}
			if !silent[name] {
				t.Errorf("%s: no test in tests/%s expects %s to stay silent", rules, tests, name)
			}
		}
	}
}

// githubAnchor is the anchor GitHub gives a Markdown heading: lower case, punctuation but - and
// _ dropped, spaces turned into -.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Every alert's runbook_url leads to a section of deploy/README.md that exists and is about it.
func TestAlertRunbooks(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]string{} // anchor → the section's text
	heading := regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	locs := heading.FindAllStringSubmatchIndex(string(raw), -1)
	for i, l := range locs {
		end := len(raw)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		anchors[githubAnchor(string(raw[l[2]:l[3]]))] = string(raw[l[1]:end])
	}
	for file := range ruleFiles {
		for name, url := range ruleAlerts(t, file) {
			anchor, ok := strings.CutPrefix(url, runbookBase)
			if !ok {
				t.Errorf("%s: runbook_url %q, want %s<anchor>", name, url, runbookBase)
				continue
			}
			section, ok := anchors[anchor]
			switch {
			case !ok:
				t.Errorf("%s: runbook_url anchor #%s is no heading of deploy/README.md", name, anchor)
			case anchor != strings.ToLower(name):
				t.Errorf("%s: runbook_url anchor #%s, want #%s (the section named after the alert)", name, anchor, strings.ToLower(name))
			case len(strings.Fields(section)) < 30:
				t.Errorf("%s: its runbook section says too little (%d words): what it means and what to do", name, len(strings.Fields(section)))
			}
		}
	}
}
