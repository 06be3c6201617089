package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// cli runs a command line as main does and returns its exit status, stdout and stderr.
func cli(t *testing.T, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = exitStatus(run(context.Background(), args, &out), &errOut)
	return status, out.String(), errOut.String()
}

func TestExitStatus(t *testing.T) {
	cases := []struct {
		args      []string
		status    int
		stdout    string // a part of what the command prints on stdout
		stderr    string // and on stderr
		noneOnOut bool
	}{
		{args: nil, status: 2, stderr: "usage: hookstream <command>", noneOnOut: true},
		{args: []string{"nonsense"}, status: 2, stderr: `unknown command "nonsense"`, noneOnOut: true},
		{args: []string{"-x"}, status: 2, stderr: `unknown command "-x"`, noneOnOut: true},
		{args: []string{"sender", "--database-url", "postgres://x"}, status: 2, stderr: "-database-url", noneOnOut: true},
		{args: []string{"help"}, status: 0, stdout: "commands:"},
		{args: []string{"-h"}, status: 0, stdout: "commands:"},
		{args: []string{"--help"}, status: 0, stdout: "commands:"},
		{args: []string{"help", "sender"}, status: 0, stdout: "usage: hookstream sender"},
		{args: []string{"help", "nonsense"}, status: 2, stderr: `unknown command "nonsense"`},
		{args: []string{"sender", "-h"}, status: 0, stdout: "usage: hookstream sender"},
		{args: []string{"topics", "-h"}, status: 0, stdout: "usage: hookstream topics create|describe"},
		{args: []string{"topics"}, status: 2, stderr: "want create or describe"},
		{args: []string{"version", "extra"}, status: 2, stderr: `unexpected argument "extra"`},
		{args: []string{"trigger"}, status: 2, stderr: "want an event type", noneOnOut: true},
		{args: []string{"endpoints"}, status: 2, stderr: "want a subcommand: list, create, get", noneOnOut: true},
		{args: []string{"endpoints", "get"}, status: 2, stderr: "want <endpoint-id>", noneOnOut: true},
		{args: []string{"replay", "--endpoint", "ep_x"}, status: 2, stderr: "want --endpoint and --since", noneOnOut: true},
		{args: []string{"replay", "--endpoint", "ep_x", "--since", "yesterday"}, status: 2, stderr: "--since: \"yesterday\" is neither", noneOnOut: true},
		{args: []string{"endpoints", "create", "-h"}, status: 0, stdout: "-events list"},
		{args: []string{"deliveries", "purge"}, status: 2, stderr: `unknown subcommand "purge", want list, get, replay`},
		{args: []string{"deliveries", "get", "dlv_a", "dlv_b"}, status: 2, stderr: `unexpected argument "dlv_b"`},
		{args: []string{"trigger", "-h"}, status: 0, stdout: "usage: hookstream trigger <event-type> [flags]"},
		{args: []string{"trigger", "nope"}, status: 2, stderr: "  usage.finalized ", noneOnOut: true},
		{args: []string{"trigger", "--partner", "acme", "nope"}, status: 2, stderr: `unknown event type "nope"`},
		{args: []string{"trigger", "customer.created", "extra"}, status: 2, stderr: `unexpected argument "extra"`},
		{args: []string{"receive"}, status: 2, stderr: "want --secret", noneOnOut: true},
		{args: []string{"receive", "--secret", "whsec_…"}, status: 2, stderr: "in place of whsec_…", noneOnOut: true},
		{args: []string{"receive", "--secret", "whsec_not-base64"}, status: 2, stderr: "--secret: secret 0: webhook: invalid secret", noneOnOut: true},
		{args: []string{"receive", "--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "--port", "70000"}, status: 2, stderr: "--port 70000", noneOnOut: true},
	}
	for _, c := range cases {
		status, stdout, stderr := cli(t, c.args...)
		if status != c.status || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) || (c.noneOnOut && stdout != "") {
			t.Errorf("hookstream %s: status %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(c.args, " "), status, c.status, stdout, stderr)
		}
	}
}

func TestBoolFlagNeedsNoValue(t *testing.T) {
	s, err := parseSettings("sender", []string{"-allow-http"}, io.Discard)
	if err != nil || !s.AllowHTTP {
		t.Fatalf("-allow-http: AllowHTTP %v, err %v", s.AllowHTTP, err)
	}
	t.Setenv("HOOKSTREAM_ALLOW_HTTP", "true")
	if s, err := parseSettings("sender", []string{"--allow-http=false"}, io.Discard); err != nil || s.AllowHTTP {
		t.Fatalf("--allow-http=false over HOOKSTREAM_ALLOW_HTTP=true: AllowHTTP %v, err %v", s.AllowHTTP, err)
	}
	// The value after a space is not the flag's: say how to give one.
	status, _, stderr := cli(t, "sender", "--allow-http", "false")
	if status != 2 || !strings.Contains(stderr, "--allow-http=false") {
		t.Fatalf("--allow-http false: status %d, stderr:\n%s", status, stderr)
	}
}

func TestVariableIsTheDefaultAndTheFlagWins(t *testing.T) {
	t.Setenv("HOOKSTREAM_TOPIC_PREFIX", "from-env")
	t.Setenv("HOOKSTREAM_RETRY_SCHEDULE", "1s, 2s")
	t.Setenv("HOOKSTREAM_FAILING_WARN_AFTER", "90m")
	t.Setenv("HOOKSTREAM_KAFKA_BROKERS", "a:9092,b:9092")
	s, err := parseSettings("retry", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.TopicPrefix != "from-env" || !slices.Equal(s.RetrySchedule, []time.Duration{time.Second, 2 * time.Second}) ||
		s.FailingWarnAfter != 90*time.Minute || !slices.Equal(s.KafkaBrokers, []string{"a:9092", "b:9092"}) {
		t.Errorf("from the environment: %q %v %v %v", s.TopicPrefix, s.RetrySchedule, s.FailingWarnAfter, s.KafkaBrokers)
	}
	if s.FailingDisable != 120*time.Hour {
		t.Errorf("unset variable: FailingDisable %v, want the built-in 120h", s.FailingDisable)
	}
	s, err = parseSettings("retry", []string{"-topic-prefix", "from-flag", "-retry-schedule", "3s", "-failing-warn-after=2h",
		"--kafka-brokers", "c:9092"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.TopicPrefix != "from-flag" || !slices.Equal(s.RetrySchedule, []time.Duration{3 * time.Second}) ||
		s.FailingWarnAfter != 2*time.Hour || !slices.Equal(s.KafkaBrokers, []string{"c:9092"}) {
		t.Errorf("flags given: %q %v %v %v", s.TopicPrefix, s.RetrySchedule, s.FailingWarnAfter, s.KafkaBrokers)
	}

	// A variable's bad value is an error naming it, unless the flag replaces it.
	t.Setenv("HOOKSTREAM_TOPIC_PARTITIONS", "many")
	if _, err := parseSettings("topics", nil, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "HOOKSTREAM_TOPIC_PARTITIONS") || !strings.Contains(err.Error(), "integer") {
		t.Errorf("HOOKSTREAM_TOPIC_PARTITIONS=many: %v", err)
	}
	if s, err := parseSettings("topics", []string{"--topic-partitions", "3"}, io.Discard); err != nil || s.TopicPartitions != 3 {
		t.Errorf("--topic-partitions 3 over HOOKSTREAM_TOPIC_PARTITIONS=many: %d, %v", s.TopicPartitions, err)
	}
}

func TestBadValueNamesTheFlagAndWhatItWants(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"topics", "create", "--topic-partitions", "many"}, []string{"-topic-partitions", `"many"`, "integer"}},
		{[]string{"admin", "--limit-endpoints=lots"}, []string{"-limit-endpoints", "integer"}},
		{[]string{"retry", "--failing-warn-after", "soon"}, []string{"-failing-warn-after", "duration"}},
		{[]string{"retry", "--failing-warn-after", "0s"}, []string{"-failing-warn-after", "positive duration"}},
		{[]string{"admin", "--feed-retention", "10"}, []string{"-feed-retention", "duration"}},
		{[]string{"sender", "--retry-schedule", "1s,never"}, []string{"-retry-schedule", `"never"`, "positive duration"}},
		{[]string{"sender", "--egress-allow-ports", "https"}, []string{"-egress-allow-ports", "port"}},
		{[]string{"sender", "--allow-http=maybe"}, []string{"-allow-http", "true or false"}},
		{[]string{"migrate", "--log-format", "xml"}, []string{"-log-format", "json or text"}},
		{[]string{"sender", "--log-level", "loud"}, []string{"-log-level", "debug, info, warn or error"}},
	}
	for _, c := range cases {
		status, _, stderr := cli(t, c.args...)
		if status != 2 {
			t.Errorf("%v: status %d, want 2", c.args, status)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, stderr)
			}
		}
	}
}

// helpFlags are the flags a command's -h lists.
func helpFlags(t *testing.T, args ...string) (help string, flags []string) {
	t.Helper()
	status, stdout, stderr := cli(t, args...)
	if status != 0 {
		t.Fatalf("%v: status %d\n%s", args, status, stderr)
	}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(stdout, -1) {
		flags = append(flags, m[1])
	}
	return stdout, flags
}

// withoutSettingsEnv unsets every HOOKSTREAM_* setting for the test (restored after it), so the
// built-in defaults are what the test sees whatever the shell, the Makefile or CI export.
func withoutSettingsEnv(t *testing.T) {
	t.Helper()
	for _, v := range variables {
		t.Setenv(v.env, "")
		os.Unsetenv(v.env)
	}
}

func TestHelpListsTheCommandsOwnFlags(t *testing.T) {
	withoutSettingsEnv(t)
	for _, c := range commands() {
		help, flags := helpFlags(t, c.name, "-h")
		for _, v := range variables {
			listed := slices.Contains(flags, v.flag)
			if reads := slices.Contains(c.reads, v.flag); listed != reads {
				t.Errorf("%s -h lists -%s: %v; the command reads it: %v", c.name, v.flag, listed, reads)
			}
			if listed && !regexp.MustCompile(`(?m)^  -`+v.flag+`\b.*\n.*\n\s+\(`+v.env+`; default `).MatchString(help) {
				t.Errorf("%s -h: -%s does not name %s and its default:\n%s", c.name, v.flag, v.env, help)
			}
		}
	}
	_, sender := helpFlags(t, "sender", "-h")
	if slices.Contains(sender, "database-url") || !slices.Contains(sender, "allow-http") {
		t.Errorf("sender -h lists %v", sender)
	}
	_, dev := helpFlags(t, "dev", "-h")
	if slices.Contains(dev, "kafka-brokers") || slices.Contains(dev, "metrics-addr") || !slices.Contains(dev, "data-dir") ||
		slices.Contains(dev, "admin-url") || slices.Contains(dev, "api-key") {
		t.Errorf("dev -h lists %v", dev)
	}
	help, _ := helpFlags(t, "dev", "-h")
	if !strings.Contains(help, "-data-dir string\n") || !strings.Contains(help, "(HOOKSTREAM_ALLOW_HTTP; default true)") {
		t.Errorf("dev -h renders -data-dir or dev's own default wrongly:\n%s", help)
	}
}

// A back-quoted word in a flag's help is taken for its value's name by package flag.
func TestNoBackQuoteInFlagHelp(t *testing.T) {
	for _, v := range variables {
		if strings.Contains(v.help, "`") {
			t.Errorf("help of -%s has a back quote: %s", v.flag, v.help)
		}
	}
}

// Every built-in default, dev's own included, is a value its flag accepts; every setting a
// command reads has a variable.
func TestDefaultsParse(t *testing.T) {
	withoutSettingsEnv(t)
	for _, c := range commands() {
		if err := newCommandFlags(c.name, "", c.reads, c.defaults).err; err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	s, err := parseSettings("dev", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !s.AllowHTTP || s.LogFormat != "text" || len(s.EgressAllowCIDRs) != 2 || s.TopicPartitions != 12 {
		t.Errorf("dev defaults: %+v", s)
	}
}

func TestVersionPrintsTheBuild(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/hookstream/hookstream", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "4f1c2a9e"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
			{Key: "vcs.modified", Value: "true"}}}
	var out bytes.Buffer
	buildOf(info, "").print(&out)
	for _, want := range []string{"hookstream v1.2.3\n", "revision:    4f1c2a9e\n", "commit time: 2026-01-02T03:04:05Z\n", "modified:    true\n", "go:          go1.99.1 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, out.String())
		}
	}
	info.Main.Version = "(devel)"
	if v := buildOf(info, "v9.9.9").Version; v != "v9.9.9" {
		t.Errorf("a (devel) build with -X main.version=v9.9.9 is %q", v)
	}
	if v := buildOf(nil, "").Version; v != "(devel)" {
		t.Errorf("no build info: %q", v)
	}
	for _, arg := range []string{"version", "--version", "-version"} {
		status, stdout, _ := cli(t, arg)
		if status != 0 || !strings.HasPrefix(stdout, "hookstream ") || !strings.Contains(stdout, "\n  revision:") {
			t.Errorf("hookstream %s: status %d\n%s", arg, status, stdout)
		}
	}
}

func TestBuildInfoMetric(t *testing.T) {
	b := thisBuild()
	if v := testenv.Gauge(t, newRegistry(), "hookstream_build_info",
		"version", b.Version, "revision", b.Revision, "goversion", b.GoVersion); v != 1 {
		t.Fatalf("hookstream_build_info{version=%q,revision=%q,goversion=%q} = %v, want 1", b.Version, b.Revision, b.GoVersion, v)
	}
}

// TestDocsConfigurationTable holds the configuration table of docs/configuration.md to the
// variables: the same variables, flag names, and defaults (where the table names a value), dev's
// own included.
func TestDocsConfigurationTable(t *testing.T) {
	section := docsSection(t, "docs/configuration.md", "Settings")
	rows := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `HOOKSTREAM_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			t.Errorf("docs/configuration.md: a row has %d cells, not variable | flag | default | what: %s", len(cells), line)
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		env := strings.Trim(cells[0], "`")
		if _, dup := rows[env]; dup {
			t.Errorf("docs/configuration.md lists %s twice", env)
		}
		rows[env] = cells
	}
	for _, v := range variables {
		cells, ok := rows[v.env]
		if !ok {
			t.Errorf("docs/configuration.md's table lacks %s", v.env)
			continue
		}
		delete(rows, v.env)
		if cells[1] != "`--"+v.flag+"`" {
			t.Errorf("docs/configuration.md: %s has flag %s, the binary --%s", v.env, cells[1], v.flag)
		}
		def := cells[2]
		switch {
		case v.def != "" && !strings.HasPrefix(def, "`"+v.def+"`"):
			t.Errorf("docs/configuration.md: %s defaults to %s, the binary to `%s`", v.env, def, v.def)
		case v.def == "" && strings.HasPrefix(def, "`"):
			t.Errorf("docs/configuration.md: %s defaults to %s, the binary has none: say what empty means in words", v.env, def)
		}
		if d, ok := devDefaults[v.env]; ok && !strings.Contains(def, "`"+d+"` in `dev`") {
			t.Errorf("docs/configuration.md: %s's default %s does not say dev's own: `%s` in `dev`", v.env, def, d)
		}
	}
	for env := range rows {
		t.Errorf("docs/configuration.md lists %s, which the binary does not read", env)
	}
}

// TestDocsCommandsTable holds the table of commands of docs/cli.md to the binary's: every
// command (one row, or one per subcommand as for topics), and none the binary lacks.
func TestDocsCommandsTable(t *testing.T) {
	section := docsSection(t, "docs/cli.md", "Commands")
	listed := map[string]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)[^`]*` \\|").FindAllStringSubmatch(section, -1) {
		listed[m[1]]++
	}
	for _, c := range commands() {
		if listed[c.name] == 0 {
			t.Errorf("docs/cli.md's commands table lacks %s", c.name)
		}
		delete(listed, c.name)
	}
	for name := range listed {
		t.Errorf("docs/cli.md's commands table lists %s, which the binary lacks", name)
	}
}

// cdc's commit and write intervals reach its configuration (dev's too) and refuse what is not
// a positive duration.
func TestCDCCommitAndWriteIntervalsReachCDC(t *testing.T) {
	for _, v := range []struct {
		name string
		def  time.Duration
		get  func(cdc.Config) time.Duration
	}{
		{"HOOKSTREAM_CDC_COMMIT_INTERVAL", 100 * time.Millisecond, func(c cdc.Config) time.Duration { return c.CommitInterval }},
		{"HOOKSTREAM_CDC_WRITE_INTERVAL", 25 * time.Millisecond, func(c cdc.Config) time.Duration { return c.WriteInterval }},
	} {
		for _, cmd := range []string{"cdc", "dev"} {
			s, err := parseSettings(cmd, nil, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.get(s.cdcConfig(nil, nil)); got != v.def {
				t.Errorf("%s: %s defaults to %v, want %v", cmd, v.name, got, v.def)
			}
			t.Setenv(v.name, "50ms")
			if s, err = parseSettings(cmd, nil, io.Discard); err != nil || v.get(s.cdcConfig(nil, nil)) != 50*time.Millisecond {
				t.Errorf("%s: %s=50ms: %v, %v", cmd, v.name, v.get(s.cdcConfig(nil, nil)), err)
			}
			t.Setenv(v.name, "0s")
			if _, err := parseSettings(cmd, nil, io.Discard); err == nil || !strings.Contains(err.Error(), v.name) {
				t.Errorf("%s: %s=0s: %v, want an error naming it", cmd, v.name, err)
			}
			os.Unsetenv(v.name)
		}
	}
}

// cdc's read interval reaches its configuration (dev's too); cdc refuses a negative one.
func TestCDCReadIntervalReachesCDC(t *testing.T) {
	for _, cmd := range []string{"cdc", "dev"} {
		s, err := parseSettings(cmd, nil, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.cdcConfig(nil, nil).ReadInterval; got != 20*time.Millisecond {
			t.Errorf("%s: default read interval %v, want 20ms", cmd, got)
		}
		for _, v := range []string{"0s", "2ms"} {
			t.Setenv("HOOKSTREAM_CDC_READ_INTERVAL", v)
			want, _ := time.ParseDuration(v)
			if s, err = parseSettings(cmd, nil, io.Discard); err != nil || s.cdcConfig(nil, nil).ReadInterval != want {
				t.Errorf("%s: HOOKSTREAM_CDC_READ_INTERVAL=%s: %v, %v", cmd, v, s.cdcConfig(nil, nil).ReadInterval, err)
			}
		}
		t.Setenv("HOOKSTREAM_CDC_READ_INTERVAL", "soon")
		if _, err := parseSettings(cmd, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "HOOKSTREAM_CDC_READ_INTERVAL") {
			t.Errorf("%s: HOOKSTREAM_CDC_READ_INTERVAL=soon: %v, want an error naming it", cmd, err)
		}
		t.Setenv("HOOKSTREAM_CDC_READ_INTERVAL", "-1ms")
		if s, err = parseSettings(cmd, nil, io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := s.cdcConfig(nil, nil).Validate(); err == nil || !strings.Contains(err.Error(), "read interval -1ms is negative") {
			t.Errorf("%s: a negative read interval: %v, want it refused", cmd, err)
		}
		os.Unsetenv("HOOKSTREAM_CDC_READ_INTERVAL")
	}
}

// cdc's fan-out maximum reaches its configuration (dev's too); anything but a whole number of
// zero or more is refused, naming the variable.
func TestCDCFanoutMaxReachesCDC(t *testing.T) {
	for _, cmd := range []string{"cdc", "dev"} {
		s, err := parseSettings(cmd, nil, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.cdcConfig(nil, nil).FanoutMax; got != 4 {
			t.Errorf("%s: default fan-out maximum %d, want 4", cmd, got)
		}
		for v, want := range map[string]int{"0": 0, "10": 10} {
			t.Setenv("HOOKSTREAM_CDC_FANOUT_MAX", v)
			if s, err = parseSettings(cmd, nil, io.Discard); err != nil || s.cdcConfig(nil, nil).FanoutMax != want {
				t.Errorf("%s: HOOKSTREAM_CDC_FANOUT_MAX=%s: %v, %v", cmd, v, s.cdcConfig(nil, nil).FanoutMax, err)
			}
		}
		for _, v := range []string{"-1", "few"} {
			t.Setenv("HOOKSTREAM_CDC_FANOUT_MAX", v)
			if _, err := parseSettings(cmd, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "HOOKSTREAM_CDC_FANOUT_MAX") {
				t.Errorf("%s: HOOKSTREAM_CDC_FANOUT_MAX=%s: %v, want an error naming it", cmd, v, err)
			}
		}
		os.Unsetenv("HOOKSTREAM_CDC_FANOUT_MAX")
	}
}
