package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/migrations"
	"github.com/hookstream/hookstream/internal/quotas"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, args, &out)
	return out.String(), err
}

func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	for i := 0; i < 2; i++ {
		if _, err := runCLI(t, "migrate", "--database-url", db.URL, "--log-format", "text"); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	all, _ := migrations.All()
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM schema_migration`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(all) {
		t.Fatalf("%d migrations recorded, want %d", n, len(all))
	}
	var today bool
	if err := db.Pool.QueryRow(context.Background(),
		`SELECT to_regclass('outbox_event_' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')) IS NOT NULL`).Scan(&today); err != nil || !today {
		t.Fatalf("today's outbox partition exists = %v (%v)", today, err)
	}
}

func TestTopicsCreateTwiceAndDescribe(t *testing.T) {
	t.Parallel()
	k := testenv.NewKafka(t)
	flags := []string{"--kafka-brokers", strings.Join(k.Brokers, ","), "--topic-prefix", k.Prefix, "--topic-partitions", "2"}
	out, err := runCLI(t, append([]string{"topics", "create"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, k.Prefix+".events") || !strings.Contains(out, "created") {
		t.Fatalf("first create printed:\n%s", out)
	}
	out, err = runCLI(t, append([]string{"topics", "create"}, flags...)...)
	if err != nil {
		t.Fatalf("second create: %v", err)
	}
	if strings.Contains(out, "created") {
		t.Fatalf("second create created topics again:\n%s", out)
	}
	out, err = runCLI(t, append([]string{"topics", "describe"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{k.Prefix + ".events  ", "compact,delete", k.Prefix + ".endpoints  "} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 3 && fields[0] == k.Prefix+".endpoints" && fields[2] != "compact" {
			t.Errorf("endpoints topic: %s", line)
		}
	}
}

func TestBadSettingsAreRefused(t *testing.T) {
	cases := [][]string{
		{"migrate", "--log-format", "xml"},
		{"topics", "create", "--topic-partitions", "many"},
		{"sender", "--allow-http=maybe"},
		{"sender", "--allow-http", "true"},
		{"topics", "frobnicate"},
		{"nonsense"},
	}
	for _, args := range cases {
		if _, err := runCLI(t, args...); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}

// TestLimitSettings checks the quota variables reach the admin configuration: defaults, the
// environment, and the flag winning over it.
func TestLimitSettings(t *testing.T) {
	withoutSettingsEnv(t)
	s, err := parseSettings("admin", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.Limits != quotas.Defaults() {
		t.Errorf("default limits %+v, want %+v", s.Limits, quotas.Defaults())
	}
	t.Setenv("HOOKSTREAM_LIMIT_ENDPOINTS", "7")
	t.Setenv("HOOKSTREAM_LIMIT_REPLAY_JOBS", "3")
	t.Setenv("HOOKSTREAM_LIMIT_TEST_EVENTS_PER_MINUTE", "5")
	t.Setenv("HOOKSTREAM_LIMIT_REPLAYS_PER_MINUTE", "6")
	t.Setenv("HOOKSTREAM_LIMIT_REPLAY_DELIVERIES", "2000")
	t.Setenv("HOOKSTREAM_LIMIT_DELIVERIES_IN_FLIGHT", "40")
	t.Setenv("HOOKSTREAM_LIMIT_DELIVERIES_PER_SEC", "250")
	t.Setenv("HOOKSTREAM_LIMIT_REPLAY_DELIVERIES_PER_SEC", "500")
	s, err = parseSettings("admin", []string{"--limit-replay-jobs", "4"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := quotas.Limits{Endpoints: 7, ReplayJobs: 4, TestEventsPerMinute: 5, ReplaysPerMinute: 6, ReplayDeliveries: 2000,
		DeliveriesInFlight: 40, DeliveriesPerSec: 250, ReplayDeliveriesPerSec: 500}
	if s.Limits != want {
		t.Errorf("limits %+v, want %+v", s.Limits, want)
	}
	// The sender enforces the partner's share of deliveries (design.md section 7); admin states it.
	s, err = parseSettings("sender", []string{"--limit-deliveries-per-sec", "300"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.Limits.DeliveriesInFlight != 40 || s.Limits.DeliveriesPerSec != 300 {
		t.Errorf("sender's partner limits %+v, want 40 in flight and 300 a second", s.Limits)
	}
	if _, err := parseSettings("admin", []string{"--limit-endpoints", "many"}, io.Discard); err == nil {
		t.Error("a limit that is not an integer was accepted")
	}
}
