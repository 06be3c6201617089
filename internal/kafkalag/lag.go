package kafkalag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/internal/periodic"
)

// DefaultInterval is how often a Monitor measures lag: often enough for a 10-minute alert,
// rarely enough that its three requests per check cost the brokers nothing.
const DefaultInterval = 15 * time.Second

// Consumption is one consumer group reading one topic: the unit lag is measured in.
type Consumption struct {
	Group string
	Topic string
}

// Config says which consumptions a Monitor measures, where and how often.
type Config struct {
	Brokers      []string
	Consumptions []Consumption
	Interval     time.Duration // default DefaultInterval; also the time one check may take
	Logger       *slog.Logger
	Registerer   prometheus.Registerer // nil: not registered
	KafkaOptions []kgo.Opt             // appended to the client's options (tests)
}

// DefaultConfig returns a Config with the default interval.
func DefaultConfig() Config {
	return Config{Interval: DefaultInterval}
}

// Validate reports a Config a Monitor cannot work with.
func (c Config) Validate() error {
	switch {
	case len(c.Brokers) == 0:
		return errors.New("kafkalag: no Kafka brokers")
	case len(c.Consumptions) == 0:
		return errors.New("kafkalag: no consumer groups to measure")
	case c.Interval <= 0:
		return fmt.Errorf("kafkalag: interval %s is not positive", c.Interval)
	case c.Logger == nil:
		return errors.New("kafkalag: no logger")
	}
	for _, cs := range c.Consumptions {
		if cs.Group == "" || cs.Topic == "" {
			return fmt.Errorf("kafkalag: consumption %+v needs a group and a topic", cs)
		}
	}
	return nil
}

// Monitor measures the lag of a fixed set of consumptions and exports it.
type Monitor struct {
	cfg    Config
	cl     *kgo.Client
	adm    *kadm.Client
	groups []string
	topics []string
	log    *slog.Logger

	lag    *prometheus.GaugeVec
	failed prometheus.Counter
}

// New returns a Monitor; Close releases its Kafka client.
func New(cfg Config) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger.With("component", "kafkalag")
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...), kgo.WithLogger(component.KafkaLogger(log))},
		cfg.KafkaOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("kafkalag: kafka client: %w", err)
	}
	// `hookstream dev` runs several components, each with a Monitor, on one registry.
	set := &metrics.Set{Registerer: cfg.Registerer, Subsystem: "kafka", Shared: true}
	m := &Monitor{
		cfg: cfg, cl: cl, adm: kadm.NewClient(cl), log: log,
		lag: set.GaugeVec("consumer_lag_records",
			"Records of the topic the consumer group has not committed yet, summed over partitions, up to the last stable offset; kept at the last measured value while checks fail.",
			"group", "topic"),
		failed: set.Counter("consumer_lag_checks_failed_total",
			"Consumer lag checks that could not measure every group and topic (broker unreachable, topic missing)."),
	}
	for _, cs := range cfg.Consumptions {
		if !slices.Contains(m.groups, cs.Group) {
			m.groups = append(m.groups, cs.Group)
		}
		if !slices.Contains(m.topics, cs.Topic) {
			m.topics = append(m.topics, cs.Topic)
		}
	}
	return m, nil
}

// Close releases the Kafka client.
func (m *Monitor) Close() { m.cl.Close() }

// Run checks at once and then every interval until ctx ends; it always returns nil.
func (m *Monitor) Run(ctx context.Context) error {
	periodic.NowAndEvery(ctx, m.cfg.Interval, func(ctx context.Context) {
		cctx, cancel := context.WithTimeout(ctx, m.cfg.Interval)
		err := m.Check(cctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			m.log.Warn("consumer lag check failed; the lag gauges keep their last value", "err", err)
		}
	})
	return nil
}

// Check measures every consumption once and sets its gauge. The consumptions it could not
// measure keep their last value; if there are any, the check is counted as failed and the
// first reason is returned.
func (m *Monitor) Check(ctx context.Context) error {
	err := m.check(ctx)
	// A check cut short by shutdown is not a failure; one out of time (broker down) is.
	if err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		m.failed.Inc()
	}
	return err
}

func (m *Monitor) check(ctx context.Context) error {
	// The last stable offset, not the high watermark: a read_committed consumer cannot pass an
	// open transaction, so its records are not yet lag this group could work off.
	ends, err := m.adm.ListCommittedOffsets(ctx, m.topics...)
	if err != nil {
		return fmt.Errorf("kafkalag: list end offsets: %w", err)
	}
	starts, err := m.adm.ListStartOffsets(ctx, m.topics...)
	if err != nil {
		return fmt.Errorf("kafkalag: list start offsets: %w", err)
	}
	committed := m.adm.FetchManyOffsets(ctx, m.groups...)
	var first error
	for _, cs := range m.cfg.Consumptions {
		n, err := lagOf(cs, ends, starts, committed)
		if err != nil {
			first = cmp.Or(first, err)
			continue
		}
		m.lag.WithLabelValues(cs.Group, cs.Topic).Set(float64(n))
	}
	return first
}

// lagOf sums, over the topic's partitions, the last stable offset minus the group's committed
// offset, or minus the log start where the group has committed nothing.
func lagOf(cs Consumption, ends, starts kadm.ListedOffsets, committed kadm.FetchOffsetsResponses) (int64, error) {
	parts, ok := ends[cs.Topic]
	if !ok {
		return 0, fmt.Errorf("kafkalag: topic %s: no end offsets", cs.Topic)
	}
	fetched, ok := committed[cs.Group]
	if !ok {
		return 0, fmt.Errorf("kafkalag: group %s: no offsets fetched", cs.Group)
	}
	// A group that does not exist yet has committed nothing (real brokers answer with no
	// offsets, kfake with this error).
	if fetched.Err != nil && !errors.Is(fetched.Err, kerr.GroupIDNotFound) {
		return 0, fmt.Errorf("kafkalag: group %s: fetch offsets: %w", cs.Group, fetched.Err)
	}
	var lag int64
	for p, end := range parts {
		if end.Err != nil {
			return 0, fmt.Errorf("kafkalag: topic %s partition %d: %w", cs.Topic, p, end.Err)
		}
		from := int64(0)
		if s, ok := starts.Lookup(cs.Topic, p); ok && s.Err == nil {
			from = s.Offset
		}
		if c, ok := fetched.Fetched.Lookup(cs.Topic, p); ok {
			if c.Err != nil {
				return 0, fmt.Errorf("kafkalag: group %s topic %s partition %d: %w", cs.Group, cs.Topic, p, c.Err)
			}
			if c.At >= 0 {
				from = c.At
			}
		}
		lag += max(0, end.Offset-from)
	}
	return lag, nil
}
