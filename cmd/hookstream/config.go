package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/commalist"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/kafkasec"
	"github.com/hookstream/hookstream/internal/quotas"
	"github.com/hookstream/hookstream/internal/retrypolicy"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/internal/tracing"
)

// settings is the process configuration: every HOOKSTREAM_* variable. A command has a flag, which
// wins over the variable, for each setting it reads. Only this package reads the environment: the
// other packages take a Config.
type settings struct {
	DatabaseURL       string
	KafkaBrokers      []string
	TopicPrefix       string
	TopicPartitions   int
	ReplicationFactor int
	FeedRetention     time.Duration
	EventLogRetention time.Duration // 0: the feed retention; topics.RetainForever: unlimited
	SecretKey         string
	SecretKeys        string
	SecretKeysFile    string
	SecretKeyActive   string
	AdminToken        string
	AdminAddr         string
	ResellerAddr      string
	AdminURL          string
	APIKey            string
	EgressAllowCIDRs  []string
	AllowHTTP         bool
	DataDir           string
	DevKafkaPort      int
	LogFormat         string
	LogLevel          logLevelValue
	CDCSlot           string
	CDCCommitInterval time.Duration
	CDCWriteInterval  time.Duration
	CDCReadInterval   time.Duration
	CDCFanoutMax      int
	OutboxRetention   time.Duration
	HistoryRetention  time.Duration
	MetricsAddr       string
	InstanceID        string
	EgressAllowPorts  []int
	RequestTimeout    time.Duration
	EgressProxy       *url.URL
	EgressProxies     map[string]*url.URL
	RetrySchedule     []time.Duration
	RetryBounds       retrypolicy.Bounds
	RetryClientErrors bool
	FailingWarnAfter  time.Duration
	FailingDisable    time.Duration
	Limits            quotas.Limits

	// egressProxyErr and egressProxiesErr are why those could not be read (see proxyValue).
	egressProxyErr, egressProxiesErr error

	TracesExporter string

	// Kafka connection security (package kafkasec): the HOOKSTREAM_KAFKA_TLS* and
	// HOOKSTREAM_KAFKA_SASL_* settings, made into kafka and kafkaOpts by parse.
	KafkaTLS                                                              bool
	KafkaTLSCAFile, KafkaTLSServerName, KafkaTLSCertFile, KafkaTLSKeyFile string
	KafkaSASLMechanism, KafkaSASLUsername, KafkaSASLPassword              string
	KafkaSASLPasswordFile, KafkaSASLOAuthTokenFile                        string

	// kafka is the security of every Kafka connection; kafkaOpts its franz-go options, built
	// (files read) once by parse for the commands that read the settings.
	kafka     kafkasec.Config
	kafkaOpts []kgo.Opt

	// tracer is the process's tracer provider, nil when tracing is off: made from
	// TracesExporter by startTracing, not read from a variable.
	tracer trace.TracerProvider
}

// variable is one setting: its HOOKSTREAM_* variable, its flag, its built-in default as text
// (what the configuration table of docs/configuration.md states; a test holds the two together), its help, and
// the typed flag value that parses it into a field of settings.
type variable struct {
	env, flag, def, help string
	value                func(*settings) flag.Value
}

var variables = []variable{
	{"HOOKSTREAM_DATABASE_URL", "database-url", "postgres://postgres@127.0.0.1:54329/hookstream?sslmode=disable", "PostgreSQL URL",
		func(s *settings) flag.Value { return (*stringValue)(&s.DatabaseURL) }},
	{"HOOKSTREAM_KAFKA_BROKERS", "kafka-brokers", "127.0.0.1:19092", "comma-separated Kafka seed brokers",
		func(s *settings) flag.Value { return (*listValue)(&s.KafkaBrokers) }},
	{"HOOKSTREAM_KAFKA_TLS", "kafka-tls", "false", "encrypt every Kafka connection with TLS (the system's roots unless a CA file is given); any HOOKSTREAM_KAFKA_TLS_* file or server name implies it",
		func(s *settings) flag.Value { return (*boolValue)(&s.KafkaTLS) }},
	{"HOOKSTREAM_KAFKA_TLS_CA_FILE", "kafka-tls-ca-file", "", "PEM file of the CA certificates that sign the brokers' (empty: the system's roots)",
		func(s *settings) flag.Value { return (*stringValue)(&s.KafkaTLSCAFile) }},
	{"HOOKSTREAM_KAFKA_TLS_SERVER_NAME", "kafka-tls-server-name", "", "name the brokers' certificates must bear (empty: each broker's host name)",
		func(s *settings) flag.Value { return (*stringValue)(&s.KafkaTLSServerName) }},
	{"HOOKSTREAM_KAFKA_TLS_CERT_FILE", "kafka-tls-cert-file", "", "PEM client certificate for mutual TLS; needs HOOKSTREAM_KAFKA_TLS_KEY_FILE",
		func(s *settings) flag.Value { return (*stringValue)(&s.KafkaTLSCertFile) }},
	{"HOOKSTREAM_KAFKA_TLS_KEY_FILE", "kafka-tls-key-file", "", "PEM key of the client certificate",
		func(s *settings) flag.Value { return (*stringValue)(&s.KafkaTLSKeyFile) }},
	{"HOOKSTREAM_KAFKA_SASL_MECHANISM", "kafka-sasl-mechanism", "", "SASL mechanism of every Kafka connection: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM (credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); empty: none",
		func(s *settings) flag.Value { return (*stringValue)(&s.KafkaSASLMechanism) }},
	{"HOOKSTREAM_KAFKA_SASL_USERNAME", "kafka-sasl-username", "", "SASL user (PLAIN, SCRAM)",
		func(s *settings) flag.Value { return (*stringValue)(&s.KafkaSASLUsername) }},
	{"HOOKSTREAM_KAFKA_SASL_PASSWORD", "kafka-sasl-password", "", "SASL password (PLAIN, SCRAM); prefer the variable or the password file to the flag, which ps shows",
		func(s *settings) flag.Value { return (*stringValue)(&s.KafkaSASLPassword) }},
	{"HOOKSTREAM_KAFKA_SASL_PASSWORD_FILE", "kafka-sasl-password-file", "", "file holding the SASL password (a mounted secret; trailing newline trimmed), read at start and at each authentication",
		func(s *settings) flag.Value { return (*stringValue)(&s.KafkaSASLPasswordFile) }},
	{"HOOKSTREAM_KAFKA_SASL_OAUTH_TOKEN_FILE", "kafka-sasl-oauth-token-file", "", "file holding the OAUTHBEARER token, read at each authentication so a sidecar can refresh it",
		func(s *settings) flag.Value { return (*stringValue)(&s.KafkaSASLOAuthTokenFile) }},
	{"HOOKSTREAM_TOPIC_PREFIX", "topic-prefix", "hookstream", "prefix of every Kafka topic",
		func(s *settings) flag.Value { return (*stringValue)(&s.TopicPrefix) }},
	{"HOOKSTREAM_TOPIC_PARTITIONS", "topic-partitions", "12", "partitions of the partitioned topics (at creation)",
		func(s *settings) flag.Value { return (*intValue)(&s.TopicPartitions) }},
	{"HOOKSTREAM_REPLICATION_FACTOR", "replication-factor", "-1", "replication factor of created topics; -1 is the broker default",
		func(s *settings) flag.Value { return (*intValue)(&s.ReplicationFactor) }},
	{"HOOKSTREAM_FEED_RETENTION", "feed-retention", "720h", "how long the events topic (the cursor feed) keeps events",
		func(s *settings) flag.Value { return (*durationValue)(&s.FeedRetention) }},
	{"HOOKSTREAM_EVENT_LOG_RETENTION", "event-log-retention", "", "retention of the events topic (the event log) at creation: a duration at least the feed retention, or forever (-1); empty: the feed retention",
		func(s *settings) flag.Value { return (*logRetentionValue)(&s.EventLogRetention) }},
	{"HOOKSTREAM_SECRET_KEY", "secret-key", "", "base64 of 32 bytes: the AES-256-GCM key for endpoint secrets, key id \"default\" of the keyring",
		func(s *settings) flag.Value { return (*stringValue)(&s.SecretKey) }},
	{"HOOKSTREAM_SECRET_KEYS", "secret-keys", "", "more keys of the keyring for endpoint secrets: id:base64key entries, comma-separated",
		func(s *settings) flag.Value { return (*stringValue)(&s.SecretKeys) }},
	{"HOOKSTREAM_SECRET_KEYS_FILE", "secret-keys-file", "", "a file of more keys of the keyring (a mounted Secret): id:base64key entries, one a line or comma-separated",
		func(s *settings) flag.Value { return (*stringValue)(&s.SecretKeysFile) }},
	{"HOOKSTREAM_SECRET_KEY_ACTIVE", "secret-key-active", "", "id of the key that seals new values; empty: the only key of the keyring",
		func(s *settings) flag.Value { return (*stringValue)(&s.SecretKeyActive) }},
	{"HOOKSTREAM_ADMIN_TOKEN", "admin-token", "", "operator bearer token of the admin API",
		func(s *settings) flag.Value { return (*stringValue)(&s.AdminToken) }},
	{"HOOKSTREAM_ADMIN_ADDR", "admin-addr", "127.0.0.1:8080", "listen address of the admin API",
		func(s *settings) flag.Value { return (*stringValue)(&s.AdminAddr) }},
	{"HOOKSTREAM_RESELLER_ADDR", "reseller-addr", "127.0.0.1:8081", "listen address of the reseller reference platform's API in dev; the address seed calls",
		func(s *settings) flag.Value { return (*stringValue)(&s.ResellerAddr) }},
	{"HOOKSTREAM_ADMIN_URL", "admin-url", "http://127.0.0.1:8080", "base URL of the admin API that the API commands (endpoints, deliveries, replay, feed, listen) call",
		func(s *settings) flag.Value { return (*stringValue)(&s.AdminURL) }},
	{"HOOKSTREAM_API_KEY", "api-key", "", "a partner API key the API commands authenticate with, in place of the operator token",
		func(s *settings) flag.Value { return (*stringValue)(&s.APIKey) }},
	{"HOOKSTREAM_EGRESS_ALLOW_CIDRS", "egress-allow-cidrs", "", "comma-separated CIDRs the egress guard allows besides public addresses",
		func(s *settings) flag.Value { return (*listValue)(&s.EgressAllowCIDRs) }},
	{"HOOKSTREAM_ALLOW_HTTP", "allow-http", "false", "allow plain-HTTP webhook URLs",
		func(s *settings) flag.Value { return (*boolValue)(&s.AllowHTTP) }},
	{"HOOKSTREAM_DATA_DIR", "data-dir", ".data", "where dev keeps its embedded Kafka's data, its secret key and its operator token (which the API commands read when given no token)",
		func(s *settings) flag.Value { return (*stringValue)(&s.DataDir) }},
	{"HOOKSTREAM_DEV_KAFKA_PORT", "dev-kafka-port", "19192", "port of the embedded Kafka of dev, on 127.0.0.1",
		func(s *settings) flag.Value { return (*intValue)(&s.DevKafkaPort) }},
	{"HOOKSTREAM_LOG_FORMAT", "log-format", "json", "log format: json or text",
		func(s *settings) flag.Value { return choice(&s.LogFormat, "json", "text") }},
	{"HOOKSTREAM_LOG_LEVEL", "log-level", "info", "least level logged: debug, info, warn or error; debug adds the Kafka client's own log of each transaction, metadata refresh, produce error and retry",
		func(s *settings) flag.Value { return (*logLevelValue)(&s.LogLevel) }},
	{"HOOKSTREAM_CDC_SLOT", "cdc-slot", "hookstream", "logical replication slot of cdc (one per hookstream database)",
		func(s *settings) flag.Value { return (*stringValue)(&s.CDCSlot) }},
	{"HOOKSTREAM_CDC_COMMIT_INTERVAL", "cdc-commit-interval", "100ms", "least time between the starts of two of cdc's Kafka transactions under a steady stream when nobody waits for them to commit (the events cdc fans out itself and their deliveries, which the sender reads as they are written); twice it from 4,000 records a second; the first after a quiet spell starts at once: the broker sees about one transaction of cdc per interval, and read_committed readers of the events topic (the cursor feed, a data team's consumer) see an event up to about this long after it is written; under half the Kafka transaction timeout (2m)",
		func(s *settings) flag.Value { return (*positiveDurationValue)(&s.CDCCommitInterval) }},
	{"HOOKSTREAM_CDC_WRITE_INTERVAL", "cdc-write-interval", "25ms", "most time a record of cdc waits before it is written to Kafka, where the sender takes it (the next read of the replication connection, then its producer's linger, a fifth of this and at most 5ms, which sends one read's records in one request): deliveries wait up to about this long; also the least time between two of cdc's Kafka transactions when one holds an event left to fanout or an endpoint change, which their readers take committed (and one of fanout's per interval for those events); at most the commit interval is used",
		func(s *settings) flag.Value { return (*positiveDurationValue)(&s.CDCWriteInterval) }},
	{"HOOKSTREAM_CDC_READ_INTERVAL", "cdc-read-interval", "20ms", "least time between two of cdc's reads of the replication connection while WAL flows (the first after a quiet spell is at once): the transactions that arrive meanwhile are read with one wake-up instead of one each and written with one produce request; 0 reads each as it arrives; at most the write interval less the producer's linger is used",
		func(s *settings) flag.Value { return (*durationValue)(&s.CDCReadInterval) }},
	{"HOOKSTREAM_CDC_FANOUT_MAX", "cdc-fanout-max", "4", "cdc makes an event's deliveries itself, in the Kafka transaction of the event, when at most this many of its partner's endpoints receive its type and none of them is ordered (fanout makes the others'): one transaction and one hop less on the way to the endpoint; 0 leaves every event to fanout",
		func(s *settings) flag.Value { return (*countValue)(&s.CDCFanoutMax) }},
	{"HOOKSTREAM_OUTBOX_RETENTION", "outbox-retention", "168h", "how long outbox rows are kept before their day partition is dropped; 0 keeps them",
		func(s *settings) flag.Value { return (*durationValue)(&s.OutboxRetention) }},
	{"HOOKSTREAM_HISTORY_RETENTION", "history-retention", "720h", "how long finished deliveries and their attempts are kept before the recorder deletes them",
		func(s *settings) flag.Value { return (*positiveDurationValue)(&s.HistoryRetention) }},
	{"HOOKSTREAM_INSTANCE_ID", "instance-id", "", "name of this instance among several of one component (empty: the host name); transactional ids and static group membership derive from it, so every replica running at once needs its own",
		func(s *settings) flag.Value { return (*stringValue)(&s.InstanceID) }},
	{"HOOKSTREAM_EGRESS_ALLOW_PORTS", "egress-allow-ports", "", "webhook destination ports, e.g. 443,8443,9000-9100; empty: 443 and 8443 (and 80 with plain HTTP)",
		func(s *settings) flag.Value { return (*portsValue)(&s.EgressAllowPorts) }},
	{"HOOKSTREAM_REQUEST_TIMEOUT", "request-timeout", "15s", "deadline of one webhook request, from connecting to the end of the response; a receiver that has not answered by then is a timeout (a retryable failure)",
		func(s *settings) flag.Value { return (*positiveDurationValue)(&s.RequestTimeout) }},
	{"HOOKSTREAM_EGRESS_PROXY", "egress-proxy", "", "forward proxy every webhook connection goes through by CONNECT, http://[user:password@]host:port; the destination is still checked by the egress guard",
		func(s *settings) flag.Value { return &proxyValue{&s.EgressProxy, &s.egressProxyErr} }},
	{"HOOKSTREAM_EGRESS_PROXIES", "egress-proxies", "", "named forward proxies endpoints may choose (egress_proxy), name=http://host:port,...",
		func(s *settings) flag.Value { return &proxiesValue{&s.EgressProxies, &s.egressProxiesErr} }},
	{"HOOKSTREAM_RETRY_SCHEDULE", "retry-schedule", "5s,1m,10m,1h,3h,6h,12h,24h,24h", "comma-separated delays after each failed attempt; attempts = delays + 1",
		func(s *settings) flag.Value { return (*scheduleValue)(&s.RetrySchedule) }},
	{"HOOKSTREAM_RETRY_CLIENT_ERRORS", "retry-client-errors", "retry", "what a 4xx other than 408, 410, 425 and 429 does: retry (by the schedule) or stop; an endpoint's retry_policy may say otherwise",
		func(s *settings) flag.Value { return (*clientErrorsValue)(&s.RetryClientErrors) }},
	{"HOOKSTREAM_RETRY_MIN_DELAY", "retry-min-delay", "5s", "shortest delay an endpoint's retry_policy may ask for",
		func(s *settings) flag.Value { return (*positiveDurationValue)(&s.RetryBounds.MinDelay) }},
	{"HOOKSTREAM_RETRY_MAX_DELAY", "retry-max-delay", "24h", "longest delay an endpoint's retry_policy may ask for",
		func(s *settings) flag.Value { return (*positiveDurationValue)(&s.RetryBounds.MaxDelay) }},
	{"HOOKSTREAM_RETRY_MAX_ATTEMPTS", "retry-max-attempts", strconv.Itoa(retrypolicy.DefaultBounds().MaxAttempts), "most attempts an endpoint's retry_policy may give a delivery",
		func(s *settings) flag.Value { return (*intValue)(&s.RetryBounds.MaxAttempts) }},
	{"HOOKSTREAM_FAILING_WARN_AFTER", "failing-warn-after", "24h", "an endpoint failing this long with no success gets an endpoint.failing event",
		func(s *settings) flag.Value { return (*positiveDurationValue)(&s.FailingWarnAfter) }},
	{"HOOKSTREAM_FAILING_DISABLE_AFTER", "failing-disable-after", "120h", "an endpoint failing this long with no success is disabled (endpoint.disabled)",
		func(s *settings) flag.Value { return (*positiveDurationValue)(&s.FailingDisable) }},
	{"HOOKSTREAM_TRACES_EXPORTER", "traces-exporter", "none", "none, or otlp to export OpenTelemetry traces of every event's hops over OTLP/HTTP; the standard OTEL_EXPORTER_OTLP_* variables (endpoint, default http://localhost:4318; headers; timeout; TLS), OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and OTEL_TRACES_SAMPLER configure it",
		func(s *settings) flag.Value {
			return choice(&s.TracesExporter, tracing.ExporterNone, tracing.ExporterOTLP)
		}},
	{"HOOKSTREAM_METRICS_ADDR", "metrics-addr", "127.0.0.1:9464", "probe and metrics address of a component command (empty disables), and of admin (empty, its default: /metrics on the admin address)",
		func(s *settings) flag.Value { return (*stringValue)(&s.MetricsAddr) }},
	{"HOOKSTREAM_LIMIT_ENDPOINTS", "limit-endpoints", strconv.Itoa(quotas.Defaults().Endpoints), "most endpoints one partner may have",
		func(s *settings) flag.Value { return (*intValue)(&s.Limits.Endpoints) }},
	{"HOOKSTREAM_LIMIT_REPLAY_JOBS", "limit-replay-jobs", strconv.Itoa(quotas.Defaults().ReplayJobs), "most replay jobs of one partner queued or running at once",
		func(s *settings) flag.Value { return (*intValue)(&s.Limits.ReplayJobs) }},
	{"HOOKSTREAM_LIMIT_TEST_EVENTS_PER_MINUTE", "limit-test-events-per-minute", strconv.Itoa(quotas.Defaults().TestEventsPerMinute), "most test events one partner may send in any minute, per admin process",
		func(s *settings) flag.Value { return (*intValue)(&s.Limits.TestEventsPerMinute) }},
	{"HOOKSTREAM_LIMIT_REPLAYS_PER_MINUTE", "limit-replays-per-minute", strconv.Itoa(quotas.Defaults().ReplaysPerMinute), "most single-delivery replays one partner may ask for in any minute, per admin process",
		func(s *settings) flag.Value { return (*intValue)(&s.Limits.ReplaysPerMinute) }},
	{"HOOKSTREAM_LIMIT_REPLAY_DELIVERIES", "limit-replay-deliveries", strconv.Itoa(quotas.Defaults().ReplayDeliveries), "most deliveries one replay job may replay",
		func(s *settings) flag.Value { return (*intValue)(&s.Limits.ReplayDeliveries) }},
	{"HOOKSTREAM_LIMIT_DELIVERIES_IN_FLIGHT", "limit-deliveries-in-flight", strconv.Itoa(quotas.Defaults().DeliveriesInFlight), "most requests one sender process has out at once for all the endpoints of one partner",
		func(s *settings) flag.Value { return (*intValue)(&s.Limits.DeliveriesInFlight) }},
	{"HOOKSTREAM_LIMIT_DELIVERIES_PER_SEC", "limit-deliveries-per-sec", strconv.Itoa(quotas.Defaults().DeliveriesPerSec), "most requests a second one sender process makes for all the endpoints of one partner (0: no limit)",
		func(s *settings) flag.Value { return (*intValue)(&s.Limits.DeliveriesPerSec) }},
	{"HOOKSTREAM_LIMIT_REPLAY_DELIVERIES_PER_SEC", "limit-replay-deliveries-per-sec", strconv.Itoa(quotas.Defaults().ReplayDeliveriesPerSec), "most deliveries a second one admin process's bulk replay jobs replay for one partner together (0: no limit)",
		func(s *settings) flag.Value { return (*intValue)(&s.Limits.ReplayDeliveriesPerSec) }},
}

// The settings each command reads, by the code that reads them: a command's flag set has these
// and no others, so its -h lists what it uses.
var (
	// kafkaSecuritySettings: settings.kafkaSecurity, for every command that connects to Kafka
	// (dev's embedded Kafka is plain).
	kafkaSecuritySettings = []string{"kafka-tls", "kafka-tls-ca-file", "kafka-tls-server-name", "kafka-tls-cert-file", "kafka-tls-key-file",
		"kafka-sasl-mechanism", "kafka-sasl-username", "kafka-sasl-password", "kafka-sasl-password-file", "kafka-sasl-oauth-token-file"}
	// logSettings: settings.logger.
	logSettings = []string{"log-format", "log-level"}
	// componentSettings: runComponent and serveComponent, for every component command.
	componentSettings = slices.Concat([]string{"kafka-brokers", "metrics-addr", "log-format", "log-level", "traces-exporter"}, kafkaSecuritySettings)
	// topicSettings: settings.topicConfig.
	topicSettings = slices.Concat([]string{"kafka-brokers", "topic-prefix", "topic-partitions", "replication-factor", "feed-retention", "event-log-retention"}, kafkaSecuritySettings)
	// cdcSettings: settings.cdcConfig.
	cdcSettings = []string{"database-url", "kafka-brokers", "topic-prefix", "cdc-slot", "cdc-commit-interval", "cdc-write-interval", "cdc-read-interval", "cdc-fanout-max", "outbox-retention"}
	// egressSettings: settings.egressConfig.
	egressSettings = []string{"allow-http", "egress-allow-cidrs", "egress-allow-ports", "egress-proxy", "egress-proxies", "request-timeout"}
	// retrySettings: settings.retryConfig.
	retrySettings = []string{"kafka-brokers", "topic-prefix", "retry-schedule", "retry-min-delay", "retry-max-delay", "retry-max-attempts", "instance-id"}
	// apiSettings: newAPISession, for the commands over the admin API (the dev token is read
	// from the data directory when no token is given).
	apiSettings = []string{"admin-url", "api-key", "admin-token", "data-dir"}
	// keyringSettings: settings.keyring.
	keyringSettings = []string{"secret-key", "secret-keys", "secret-keys-file", "secret-key-active"}
	// adminSettings: runAdmin and serveAdmin.
	adminSettings = slices.Concat([]string{"database-url", "admin-addr", "admin-token", "kafka-brokers", "topic-prefix",
		"feed-retention", "event-log-retention", "outbox-retention", "history-retention", "retry-schedule",
		"retry-client-errors", "retry-min-delay", "retry-max-delay", "retry-max-attempts",
		"limit-endpoints", "limit-replay-jobs", "limit-test-events-per-minute", "limit-replays-per-minute", "limit-replay-deliveries", "limit-deliveries-in-flight", "limit-deliveries-per-sec", "limit-replay-deliveries-per-sec", "metrics-addr"}, keyringSettings, egressSettings, logSettings,
		kafkaSecuritySettings)
	// adminDefaults: admin serves its metrics on the API's address unless given one of their own.
	adminDefaults = map[string]string{"HOOKSTREAM_METRICS_ADDR": ""}
)

// allSettingsBut is every setting but the ones named.
func allSettingsBut(names ...string) []string {
	var out []string
	for _, v := range variables {
		if !slices.Contains(names, v.flag) {
			out = append(out, v.flag)
		}
	}
	return out
}

// commandFlags is the flag set of one command: a typed flag for each setting it reads, whose
// default is its HOOKSTREAM_* variable when set, else the built-in default; a flag given wins.
// A command may add flags of its own to the FlagSet.
type commandFlags struct {
	*flag.FlagSet
	usage  string           // what -h prints above the flags
	s      settings         // the flags' values point into it
	env    map[string]bool  // flag name → its variable is set
	envErr map[string]error // flag name → why its variable's value was refused
	err    error            // a bug of the command: a setting no variable has, a bad default
	// check, when a command sets it, checks its own flags after parsing, before anything is
	// contacted; its error is a usage error.
	check func() error
}

// newCommandFlags makes the flag set of the command name for the settings it reads; defaults
// replaces built-in defaults by variable (dev's own). The settings it does not read keep their
// built-in defaults.
func newCommandFlags(name, usage string, reads []string, defaults map[string]string) *commandFlags {
	c := &commandFlags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), usage: usage,
		env: map[string]bool{}, envErr: map[string]error{}}
	c.SetOutput(io.Discard) // parse prints the help itself, and main the errors
	c.Usage = func() {}
	for _, v := range variables {
		def := v.def
		if d, ok := defaults[v.env]; ok {
			def = d
		}
		if err := v.value(&c.s).Set(def); err != nil {
			c.err = fmt.Errorf("built-in default of %s: %w", v.env, err)
		}
		if !slices.Contains(reads, v.flag) {
			continue
		}
		val := v.value(&c.s)
		if e, ok := os.LookupEnv(v.env); ok {
			c.env[v.flag] = true
			if err := val.Set(strings.TrimSpace(e)); err != nil {
				c.envErr[v.flag] = fmt.Errorf("%s: invalid value %q: %w", v.env, e, err)
			}
		}
		c.Var(val, v.flag, v.help)
		c.Lookup(v.flag).DefValue = def
	}
	for _, r := range reads {
		if c.Lookup(r) == nil {
			c.err = fmt.Errorf("%s reads the setting %q, which no variable has", name, r)
		}
	}
	return c
}

// parse parses args. On -h it prints the help to out and returns flag.ErrHelp; a command line
// it cannot run is a *usageError naming the flag; a variable whose value is refused (and that
// no flag replaces) is an error naming the variable.
func (c *commandFlags) parse(args []string, out io.Writer) (settings, error) {
	s, _, err := c.parseWithArgs(args, out, 0)
	return s, err
}

// parseWithArgs is parse for a command that takes up to n arguments besides its flags, before,
// between or after them (hookstream endpoints get ep_… --partner acme); it returns them in order.
func (c *commandFlags) parseWithArgs(args []string, out io.Writer, n int) (settings, []string, error) {
	if c.err != nil {
		return settings{}, nil, c.err
	}
	var positional []string
	for {
		if err := c.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.printHelp(out)
				return settings{}, nil, err
			}
			return settings{}, nil, c.usageError(err)
		}
		if c.NArg() == 0 || len(positional) == n {
			break
		}
		positional = append(positional, c.Arg(0))
		args = c.Args()[1:]
	}
	if c.NArg() > 0 {
		return settings{}, nil, c.usageError(c.unexpected(args))
	}
	given := map[string]bool{}
	c.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	c.VisitAll(func(f *flag.Flag) {
		if err, ok := c.envErr[f.Name]; ok && !given[f.Name] {
			errs = append(errs, err)
		}
	})
	if len(errs) > 0 {
		return settings{}, nil, errors.Join(errs...)
	}
	s := c.s
	if c.Lookup("kafka-sasl-mechanism") != nil {
		// Refused at start, before anything is contacted: an unknown mechanism, a missing
		// credential, a file that cannot be read (named, never its content).
		s.kafka = s.kafkaSecurity(os.Getenv)
		opts, err := s.kafka.Options()
		if err != nil {
			return settings{}, nil, err
		}
		s.kafkaOpts = opts
	}
	if s.InstanceID == "" {
		s.InstanceID, _ = os.Hostname() // on failure: none, so random ids and dynamic membership
	}
	return s, positional, nil
}

// unexpected explains the first argument left after the flags; after a bool flag given its
// value with a space (-allow-http true), it says how to give one.
func (c *commandFlags) unexpected(args []string) error {
	arg := c.Arg(0)
	if i := len(args) - c.NArg() - 1; i >= 0 && !strings.Contains(args[i], "=") {
		if f := c.Lookup(strings.TrimLeft(args[i], "-")); f != nil && isBoolFlag(f) {
			if _, err := strconv.ParseBool(arg); err == nil {
				return fmt.Errorf("unexpected argument %q: a bool flag takes a value only after =, as in %s=%s", arg, args[i], arg)
			}
		}
	}
	return fmt.Errorf("unexpected argument %q", arg)
}

func (c *commandFlags) usageError(err error) error {
	return &usageError{err: fmt.Errorf("%s: %w", c.Name(), err),
		help: fmt.Sprintf("'hookstream %s -h' lists its flags\n", c.Name())}
}

// printHelp writes the usage, then every flag with its type, help, variable and default.
func (c *commandFlags) printHelp(w io.Writer) {
	fmt.Fprint(w, c.usage)
	var flags, withVariable int
	c.VisitAll(func(f *flag.Flag) {
		flags++
		if _, ok := variableOf(f.Name); ok {
			withVariable++
		}
	})
	switch {
	case withVariable > 0:
		fmt.Fprintln(w, "\nflags (the HOOKSTREAM_* variable named under a flag sets its default; a flag given wins):")
	case flags > 0:
		fmt.Fprintln(w, "\nflags:")
	}
	c.VisitAll(func(f *flag.Flag) {
		typ, help := flag.UnquoteUsage(f)
		if t, ok := f.Value.(interface{ typeName() string }); ok {
			typ = t.typeName()
		}
		fmt.Fprintf(w, "  -%s", f.Name)
		if typ != "" {
			fmt.Fprintf(w, " %s", typ)
		}
		fmt.Fprintf(w, "\n    \t%s\n", help)
		def := f.DefValue
		if def == "" {
			def = `""`
		}
		if v, ok := variableOf(f.Name); ok {
			set := ""
			if c.env[f.Name] {
				set = ", set in the environment"
			}
			fmt.Fprintf(w, "    \t(%s%s; default %s)\n", v.env, set, def)
		} else if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, "    \t(default %s)\n", def)
		}
	})
}

// variableOf is the variable of a flag.
func variableOf(flagName string) (variable, bool) {
	for _, v := range variables {
		if v.flag == flagName {
			return v, true
		}
	}
	return variable{}, false
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagsOf is the flag set of the command name, as its entry in commands() describes it.
func flagsOf(name string) *commandFlags {
	for _, c := range commands() {
		if c.name == name {
			return newCommandFlags(c.name, c.usage(), c.reads, c.defaults)
		}
	}
	cf := newCommandFlags(name, "", nil, nil)
	cf.err = fmt.Errorf("no command %q", name)
	return cf
}

// parseSettings parses the flags of the command name: the settings it reads.
func parseSettings(name string, args []string, out io.Writer) (settings, error) {
	return flagsOf(name).parse(args, out)
}

// topicConfig is the topic catalog configuration of these settings.
func (s settings) topicConfig() topics.Config {
	c := topics.DefaultConfig()
	c.Prefix = s.TopicPrefix
	c.Partitions = int32(s.TopicPartitions)
	c.ReplicationFactor = int16(s.ReplicationFactor)
	c.FeedRetention = s.FeedRetention
	c.EventLogRetention = s.eventLogRetention()
	return c
}

// eventLogRetention is the events topic's retention: HOOKSTREAM_EVENT_LOG_RETENTION, or the feed
// retention when it is not set.
func (s settings) eventLogRetention() time.Duration {
	if s.EventLogRetention == 0 {
		return s.FeedRetention
	}
	return s.EventLogRetention
}

// base is what every component's configuration takes from these settings: the brokers, their
// connection security and the topic prefix, with the process's logger and registry. Every
// Kafka client of a command is made from it (Base.ClientOptions, Base.ConnectionOptions).
func (s settings) base(log *slog.Logger, reg prometheus.Registerer) component.Base {
	return component.Base{Brokers: s.KafkaBrokers, Security: s.kafkaOpts, Prefix: s.TopicPrefix, Logger: log, Registerer: reg}
}

// kafkaSecurity is the Kafka connection security of these settings; getenv reads the standard
// AWS_* variables of AWS_MSK_IAM (the only variables besides HOOKSTREAM_* it reads).
func (s settings) kafkaSecurity(getenv func(string) string) kafkasec.Config {
	c := kafkasec.Config{
		TLS: s.KafkaTLS, CAFile: s.KafkaTLSCAFile, ServerName: s.KafkaTLSServerName,
		CertFile: s.KafkaTLSCertFile, KeyFile: s.KafkaTLSKeyFile,
		Mechanism: strings.ToUpper(s.KafkaSASLMechanism), Username: s.KafkaSASLUsername,
		Password: s.KafkaSASLPassword, PasswordFile: s.KafkaSASLPasswordFile, OAuthTokenFile: s.KafkaSASLOAuthTokenFile,
	}
	if c.Mechanism == kafkasec.AWSMSKIAM {
		c.AWS = kafkasec.AWSCredentials{AccessKeyID: getenv("AWS_ACCESS_KEY_ID"),
			SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: getenv("AWS_SESSION_TOKEN")}
	}
	return c
}

// cdcConfig is the cdc configuration of these settings.
func (s settings) cdcConfig(log *slog.Logger, reg prometheus.Registerer) cdc.Config {
	c := cdc.DefaultConfig()
	c.Base = s.base(log, reg)
	c.DatabaseURL = s.DatabaseURL
	c.Slot = s.CDCSlot
	c.CommitInterval = s.CDCCommitInterval
	c.WriteInterval = s.CDCWriteInterval
	c.ReadInterval = s.CDCReadInterval
	c.FanoutMax = s.CDCFanoutMax
	c.OutboxRetention = s.OutboxRetention
	c.TracerProvider = s.tracer
	return c
}

// startTracing makes the tracer provider of the command name (service.name hookstream-<name>
// unless OTEL_SERVICE_NAME says otherwise) into s.tracer; stop flushes what is not exported
// yet. With the exporter none, s.tracer stays nil and nothing is traced.
func (s *settings) startTracing(ctx context.Context, name string, log *slog.Logger) (stop func(), err error) {
	cfg := tracing.Config{Exporter: s.TracesExporter, ServiceName: "hookstream-" + name, InstanceID: s.InstanceID,
		Version: thisBuild().Version,
		// The protocol is the exporter's to read, but it would ignore grpc and post HTTP to the
		// gRPC port: refuse it here instead (the one variable this package reads for it).
		Protocol: cmp.Or(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))}
	tp, shutdown, err := tracing.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("HOOKSTREAM_TRACES_EXPORTER: %w", err)
	}
	s.tracer = tp
	if tp != nil {
		// Export failures (the collector away) go to this process's log, not the log package's.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing: spans not exported", "err", err) }))
		log.Info("tracing on: exporting spans over OTLP/HTTP", "service", cfg.ServiceName)
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("tracing: spans not exported at shutdown", "err", err)
		}
	}, nil
}

func (s settings) logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.Level(s.LogLevel)}
	if s.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}

// parsePorts reads "443,8443,9000-9100".
func parsePorts(v string) ([]int, error) {
	var out []int
	for _, part := range commalist.Split(v) {
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
