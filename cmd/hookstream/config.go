package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/admin"
	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/topics"
)

// settings is the process configuration: every HOOKSTREAM_* variable, each with a matching flag
// that wins over it. Only this package reads the environment (style.md).
type settings struct {
	DatabaseURL       string
	KafkaBrokers      []string
	TopicPrefix       string
	TopicPartitions   int
	ReplicationFactor int
	FeedRetention     time.Duration
	SecretKey         string
	AdminToken        string
	AdminAddr         string
	EgressAllowCIDRs  []string
	AllowHTTP         bool
	DataDir           string
	DevKafkaPort      int
	LogFormat         string
	CDCSlot           string
	OutboxRetention   time.Duration
	HistoryRetention  time.Duration
	MetricsAddr       string
	InstanceID        string
	EgressAllowPorts  []int
	RetrySchedule     []time.Duration
	FailingWarnAfter  time.Duration
	FailingDisable    time.Duration
	Limits            admin.Limits
}

// variable documents one setting; the README's configuration table lists the same.
type variable struct {
	env, flag, def, help string
}

var variables = []variable{
	{"HOOKSTREAM_DATABASE_URL", "database-url", "postgres://postgres@127.0.0.1:54329/hookstream?sslmode=disable", "PostgreSQL URL"},
	{"HOOKSTREAM_KAFKA_BROKERS", "kafka-brokers", "127.0.0.1:19092", "comma-separated Kafka seed brokers"},
	{"HOOKSTREAM_TOPIC_PREFIX", "topic-prefix", "hookstream", "prefix of every Kafka topic"},
	{"HOOKSTREAM_TOPIC_PARTITIONS", "topic-partitions", "12", "partitions of the partitioned topics (at creation)"},
	{"HOOKSTREAM_REPLICATION_FACTOR", "replication-factor", "-1", "replication factor of created topics; -1 is the broker default"},
	{"HOOKSTREAM_FEED_RETENTION", "feed-retention", "720h", "how long the events topic (the cursor feed) keeps events"},
	{"HOOKSTREAM_SECRET_KEY", "secret-key", "", "base64 of 32 bytes: the AES-256-GCM key for endpoint secrets"},
	{"HOOKSTREAM_ADMIN_TOKEN", "admin-token", "", "operator bearer token of the admin API"},
	{"HOOKSTREAM_ADMIN_ADDR", "admin-addr", "127.0.0.1:8080", "listen address of the admin API"},
	{"HOOKSTREAM_EGRESS_ALLOW_CIDRS", "egress-allow-cidrs", "", "comma-separated CIDRs the egress guard allows besides public addresses"},
	{"HOOKSTREAM_ALLOW_HTTP", "allow-http", "false", "allow plain-HTTP webhook URLs"},
	{"HOOKSTREAM_DATA_DIR", "data-dir", ".data", "where `hookstream dev` keeps its embedded Kafka data"},
	{"HOOKSTREAM_DEV_KAFKA_PORT", "dev-kafka-port", "19192", "port of the embedded Kafka of `hookstream dev` on 127.0.0.1"},
	{"HOOKSTREAM_LOG_FORMAT", "log-format", "json", "log format: json or text"},
	{"HOOKSTREAM_CDC_SLOT", "cdc-slot", "hookstream", "logical replication slot of cdc (one per hookstream database)"},
	{"HOOKSTREAM_OUTBOX_RETENTION", "outbox-retention", "168h", "how long outbox rows are kept before their day partition is dropped; 0 keeps them"},
	{"HOOKSTREAM_HISTORY_RETENTION", "history-retention", "720h", "how long finished deliveries and their attempts are kept before the recorder deletes them"},
	{"HOOKSTREAM_INSTANCE_ID", "instance-id", "", "name of this instance among several of one component (default: the host name); transactional ids and static group membership derive from it, so every replica running at once needs its own"},
	{"HOOKSTREAM_EGRESS_ALLOW_PORTS", "egress-allow-ports", "", "webhook destination ports, e.g. 443,8443,9000-9100; empty: 443 and 8443 (and 80 with plain HTTP)"},
	{"HOOKSTREAM_RETRY_SCHEDULE", "retry-schedule", "5s,1m,10m,1h,3h,6h,12h,24h,24h", "delays after each failed attempt; attempts = delays + 1"},
	{"HOOKSTREAM_FAILING_WARN_AFTER", "failing-warn-after", "24h", "an endpoint failing this long with no success gets an endpoint.failing event"},
	{"HOOKSTREAM_FAILING_DISABLE_AFTER", "failing-disable-after", "120h", "an endpoint failing this long with no success is disabled (endpoint.disabled)"},
	{"HOOKSTREAM_METRICS_ADDR", "metrics-addr", "127.0.0.1:9464", "probe and metrics address of a component command; empty disables"},
	{"HOOKSTREAM_LIMIT_ENDPOINTS", "limit-endpoints", strconv.Itoa(admin.DefaultLimits().Endpoints), "most endpoints one partner may have"},
	{"HOOKSTREAM_LIMIT_REPLAY_JOBS", "limit-replay-jobs", strconv.Itoa(admin.DefaultLimits().ReplayJobs), "most replay jobs of one partner queued or running at once"},
	{"HOOKSTREAM_LIMIT_TEST_EVENTS_PER_MINUTE", "limit-test-events-per-minute", strconv.Itoa(admin.DefaultLimits().TestEventsPerMinute), "most test events one partner may send in any minute, per admin process"},
	{"HOOKSTREAM_LIMIT_REPLAY_DELIVERIES", "limit-replay-deliveries", strconv.Itoa(admin.DefaultLimits().ReplayDeliveries), "most deliveries one replay job may replay"},
}

// registerFlags adds a flag per variable to fs, defaulting to the environment or the built-in
// default, and returns a function that parses the values once fs.Parse has run.
func registerFlags(fs *flag.FlagSet, overrides map[string]string) func() (settings, error) {
	values := map[string]*string{}
	for _, v := range variables {
		def := v.def
		if o, ok := overrides[v.env]; ok {
			def = o
		}
		if e, ok := os.LookupEnv(v.env); ok {
			def = e
		}
		values[v.env] = fs.String(v.flag, def, v.help+" ("+v.env+")")
	}
	return func() (settings, error) {
		get := func(name string) string { return strings.TrimSpace(*values[name]) }
		var s settings
		var errs []error
		atoi := func(name string) int {
			n, err := strconv.Atoi(get(name))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not an integer", name, get(name)))
			}
			return n
		}
		s.DatabaseURL = get("HOOKSTREAM_DATABASE_URL")
		s.KafkaBrokers = splitList(get("HOOKSTREAM_KAFKA_BROKERS"))
		s.TopicPrefix = get("HOOKSTREAM_TOPIC_PREFIX")
		s.TopicPartitions = atoi("HOOKSTREAM_TOPIC_PARTITIONS")
		s.ReplicationFactor = atoi("HOOKSTREAM_REPLICATION_FACTOR")
		if d, err := time.ParseDuration(get("HOOKSTREAM_FEED_RETENTION")); err != nil {
			errs = append(errs, fmt.Errorf("HOOKSTREAM_FEED_RETENTION: %q is not a duration like 720h", get("HOOKSTREAM_FEED_RETENTION")))
		} else {
			s.FeedRetention = d
		}
		s.SecretKey = get("HOOKSTREAM_SECRET_KEY")
		s.AdminToken = get("HOOKSTREAM_ADMIN_TOKEN")
		s.AdminAddr = get("HOOKSTREAM_ADMIN_ADDR")
		s.EgressAllowCIDRs = splitList(get("HOOKSTREAM_EGRESS_ALLOW_CIDRS"))
		if b, err := strconv.ParseBool(get("HOOKSTREAM_ALLOW_HTTP")); err != nil {
			errs = append(errs, fmt.Errorf("HOOKSTREAM_ALLOW_HTTP: %q is not true or false", get("HOOKSTREAM_ALLOW_HTTP")))
		} else {
			s.AllowHTTP = b
		}
		s.DataDir = get("HOOKSTREAM_DATA_DIR")
		s.DevKafkaPort = atoi("HOOKSTREAM_DEV_KAFKA_PORT")
		s.LogFormat = get("HOOKSTREAM_LOG_FORMAT")
		s.CDCSlot = get("HOOKSTREAM_CDC_SLOT")
		if d, err := time.ParseDuration(get("HOOKSTREAM_OUTBOX_RETENTION")); err != nil {
			errs = append(errs, fmt.Errorf("HOOKSTREAM_OUTBOX_RETENTION: %q is not a duration like 168h", get("HOOKSTREAM_OUTBOX_RETENTION")))
		} else {
			s.OutboxRetention = d
		}
		s.MetricsAddr = get("HOOKSTREAM_METRICS_ADDR")
		s.InstanceID = get("HOOKSTREAM_INSTANCE_ID")
		if s.InstanceID == "" {
			s.InstanceID, _ = os.Hostname() // on failure: none, so random ids and dynamic membership
		}
		ports, err := parsePorts(get("HOOKSTREAM_EGRESS_ALLOW_PORTS"))
		if err != nil {
			errs = append(errs, fmt.Errorf("HOOKSTREAM_EGRESS_ALLOW_PORTS: %w", err))
		}
		s.EgressAllowPorts = ports
		for _, d := range splitList(get("HOOKSTREAM_RETRY_SCHEDULE")) {
			v, err := time.ParseDuration(d)
			if err != nil || v <= 0 {
				errs = append(errs, fmt.Errorf("HOOKSTREAM_RETRY_SCHEDULE: %q is not a positive duration", d))
				continue
			}
			s.RetrySchedule = append(s.RetrySchedule, v)
		}
		for name, dst := range map[string]*time.Duration{"HOOKSTREAM_FAILING_WARN_AFTER": &s.FailingWarnAfter,
			"HOOKSTREAM_FAILING_DISABLE_AFTER": &s.FailingDisable, "HOOKSTREAM_HISTORY_RETENTION": &s.HistoryRetention} {
			v, err := time.ParseDuration(get(name))
			if err != nil || v <= 0 {
				errs = append(errs, fmt.Errorf("%s: %q is not a positive duration", name, get(name)))
			}
			*dst = v
		}
		s.Limits = admin.Limits{
			Endpoints:           atoi("HOOKSTREAM_LIMIT_ENDPOINTS"),
			ReplayJobs:          atoi("HOOKSTREAM_LIMIT_REPLAY_JOBS"),
			TestEventsPerMinute: atoi("HOOKSTREAM_LIMIT_TEST_EVENTS_PER_MINUTE"),
			ReplayDeliveries:    atoi("HOOKSTREAM_LIMIT_REPLAY_DELIVERIES"),
		}
		if s.LogFormat != "json" && s.LogFormat != "text" {
			errs = append(errs, fmt.Errorf("HOOKSTREAM_LOG_FORMAT: %q is neither json nor text", s.LogFormat))
		}
		return s, errors.Join(errs...)
	}
}

// topicConfig is the topic catalog configuration of these settings.
func (s settings) topicConfig() topics.Config {
	c := topics.DefaultConfig()
	c.Prefix = s.TopicPrefix
	c.Partitions = int32(s.TopicPartitions)
	c.ReplicationFactor = int16(s.ReplicationFactor)
	c.FeedRetention = s.FeedRetention
	return c
}

// cdcConfig is the cdc configuration of these settings.
func (s settings) cdcConfig(log *slog.Logger, reg prometheus.Registerer) cdc.Config {
	c := cdc.DefaultConfig()
	c.DatabaseURL = s.DatabaseURL
	c.Brokers = s.KafkaBrokers
	c.Prefix = s.TopicPrefix
	c.Slot = s.CDCSlot
	c.OutboxRetention = s.OutboxRetention
	c.Logger = log
	c.Registerer = reg
	return c
}

func (s settings) logger() *slog.Logger {
	if s.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, nil))
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parsePorts reads "443,8443,9000-9100".
func parsePorts(v string) ([]int, error) {
	var out []int
	for _, part := range splitList(v) {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 1 || b > 65535 || a > b {
			return nil, fmt.Errorf("%q is not a port or a range like 9000-9100", part)
		}
		for p := a; p <= b; p++ {
			out = append(out, p)
		}
	}
	return out, nil
}
