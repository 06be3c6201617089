// Package topics is the catalog of hookstream's Kafka topics (design.md section 5): their names
// under a prefix, partition counts and cleanup policies, and idempotent creation.
package topics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RetryTiers are the retry tier suffixes in increasing delay order (design.md section 8).
var RetryTiers = []string{"5s", "1m", "10m", "1h", "3h", "6h", "12h", "24h"}

// DefaultPrefix is the topic prefix of an installation that sets none.
const DefaultPrefix = "hookstream"

// Names are the full topic names under one prefix.
type Names struct {
	Prefix      string
	Events      string
	Endpoints   string
	Deliveries  string
	Attempts    string
	DLQ         string
	Checkpoints string
	Retry       map[string]string // tier suffix → topic
}

// For returns the topic names under prefix.
func For(prefix string) Names {
	n := Names{
		Prefix:      prefix,
		Events:      prefix + ".events",
		Endpoints:   prefix + ".endpoints",
		Deliveries:  prefix + ".deliveries",
		Attempts:    prefix + ".attempts",
		DLQ:         prefix + ".dlq",
		Checkpoints: prefix + ".cdc.checkpoints",
		Retry:       map[string]string{},
	}
	for _, t := range RetryTiers {
		n.Retry[t] = prefix + ".retry." + t
	}
	return n
}

// Config sets the sizes and retention of the topics.
type Config struct {
	Prefix            string
	Partitions        int32         // for the partitioned work topics
	ReplicationFactor int16         // -1: the broker's default
	FeedRetention     time.Duration // how far back the cursor feed promises to reach (R33)
	// EventLogRetention is the events topic's retention.ms: how long the event log keeps
	// events, at least FeedRetention, or RetainForever. It is not the delivery history's
	// retention, which the recorder sweeps in PostgreSQL.
	EventLogRetention time.Duration
	WorkRetention     time.Duration // deliveries, retry tiers, attempts
	DLQRetention      time.Duration
}

// RetainForever as EventLogRetention keeps the event log without a time limit (retention.ms -1).
const RetainForever time.Duration = -1

// DefaultConfig returns the defaults: 12 partitions, a 30-day feed and event log, 7 days of work
// topics, 30 days of dead letters.
func DefaultConfig() Config {
	return Config{
		Prefix:            DefaultPrefix,
		Partitions:        12,
		ReplicationFactor: -1,
		FeedRetention:     30 * 24 * time.Hour,
		EventLogRetention: 30 * 24 * time.Hour,
		WorkRetention:     7 * 24 * time.Hour,
		DLQRetention:      30 * 24 * time.Hour,
	}
}

// Validate reports a configuration that cannot create sensible topics.
func (c Config) Validate() error {
	if err := ValidatePrefix(c.Prefix); err != nil {
		return err
	}
	switch {
	case c.Partitions < 1:
		return fmt.Errorf("topics: partitions must be at least 1, got %d", c.Partitions)
	case c.ReplicationFactor == 0 || c.ReplicationFactor < -1:
		return fmt.Errorf("topics: replication factor must be -1 (broker default) or at least 1, got %d", c.ReplicationFactor)
	case c.FeedRetention < time.Hour || c.WorkRetention < time.Hour || c.DLQRetention < time.Hour:
		return errors.New("topics: retentions must be at least one hour")
	case c.EventLogRetention != RetainForever && c.EventLogRetention < c.FeedRetention:
		return fmt.Errorf("topics: the event log retention %s is shorter than the feed retention %s: the feed would promise events the log has deleted",
			c.EventLogRetention, c.FeedRetention)
	}
	return nil
}

// ValidatePrefix reports a prefix that cannot start Kafka topic names: empty, longer than 200
// characters, or holding a character Kafka refuses in a topic name.
func ValidatePrefix(prefix string) error {
	switch {
	case prefix == "":
		return errors.New("topics: prefix is empty")
	case len(prefix) > 200:
		return errors.New("topics: prefix is longer than 200 characters")
	}
	for _, r := range prefix {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("topics: prefix %q may hold only letters, digits, '.', '_' and '-'", prefix)
		}
	}
	return nil
}

// Spec is one topic to create.
type Spec struct {
	Name       string
	Partitions int32
	Configs    map[string]string
}

// Specs lists every topic of design.md section 5 (and cdc's checkpoint topic) for c.
func (c Config) Specs() []Spec {
	n := For(c.Prefix)
	ms := func(d time.Duration) string {
		if d == RetainForever {
			return "-1"
		}
		return strconv.FormatInt(d.Milliseconds(), 10)
	}
	work := map[string]string{"cleanup.policy": "delete", "retention.ms": ms(c.WorkRetention)}
	specs := []Spec{
		// Compacted and time-bounded: each event_id is written once, so compaction keeps every
		// event and the event log's retention bounds how far back the log, and so the cursor
		// feed, reaches (R32, R33).
		{n.Events, c.Partitions, map[string]string{"cleanup.policy": "compact,delete", "retention.ms": ms(c.EventLogRetention)}},
		// One partition keeps endpoint changes in commit order for every reader of the table.
		{n.Endpoints, 1, map[string]string{"cleanup.policy": "compact", "retention.ms": "-1"}},
		{n.Checkpoints, 1, map[string]string{"cleanup.policy": "compact", "retention.ms": "-1"}},
		{n.Deliveries, c.Partitions, work},
		{n.Attempts, c.Partitions, work},
		{n.DLQ, c.Partitions, map[string]string{"cleanup.policy": "delete", "retention.ms": ms(c.DLQRetention)}},
	}
	for _, t := range RetryTiers {
		specs = append(specs, Spec{n.Retry[t], c.Partitions, work})
	}
	return specs
}

// Created reports, per topic, whether Ensure created it now (false: it already existed).
type Created map[string]bool

// Ensure creates every topic of c that does not exist yet. Existing topics are left as they are,
// so running it twice succeeds.
func Ensure(ctx context.Context, cl *kgo.Client, c Config) (Created, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	adm := kadm.NewClient(cl)
	out := Created{}
	for _, s := range c.Specs() {
		cfg := map[string]*string{}
		for k, v := range s.Configs {
			cfg[k] = kadm.StringPtr(v)
		}
		_, err := adm.CreateTopic(ctx, s.Partitions, c.ReplicationFactor, cfg, s.Name)
		switch {
		case err == nil:
			out[s.Name] = true
		case errors.Is(err, kerr.TopicAlreadyExists):
			out[s.Name] = false
		default:
			return out, fmt.Errorf("topics: create %s: %w", s.Name, err)
		}
	}
	return out, waitServed(ctx, cl, c)
}

// waitServed waits until every topic of c has a leader for each of its partitions: a topic is
// created before its partitions are served, and a produce in between is refused with
// UNKNOWN_TOPIC_OR_PARTITION, which a client retries only a few times. Ensure returns once the
// topics can be used. Bounded by ctx and by about 30 s, after which it says what is not served.
func waitServed(ctx context.Context, cl *kgo.Client, c Config) error {
	names := c.names()
	var unserved []string
	for attempt := 0; attempt < 150; attempt++ {
		states, err := look(ctx, cl, names)
		if err == nil {
			unserved = unserved[:0]
			for _, n := range names {
				if st := states[n]; !st.exists || !st.served {
					unserved = append(unserved, n)
				}
			}
			if len(unserved) == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics: waiting for the partitions to be served: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("topics: created, but partitions of %s have no leader after 30 s", strings.Join(unserved, ", "))
}

func (c Config) names() []string {
	var names []string
	for _, s := range c.Specs() {
		names = append(names, s.Name)
	}
	return names
}

// topicState is what one metadata response says of a topic.
type topicState struct {
	exists     bool
	partitions int
	served     bool // every partition has a leader
}

// look asks the cluster for the metadata of names, every time. kadm's ListTopics answers from the
// client's metadata cache, which keeps a response for MetadataMinAge (5 s by default): a topic
// first seen without leaders, just after its creation, would read so for 5 s, and `hookstream
// topics create` of new topics on a real broker took 5.5 s instead of under 1.
func look(ctx context.Context, cl *kgo.Client, names []string) (map[string]topicState, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, n := range names {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, t)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := make(map[string]topicState, len(resp.Topics))
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if errors.Is(err, kerr.TopicAuthorizationFailed) {
				return nil, fmt.Errorf("topics: %s: %w", *t.Topic, err)
			}
			continue // unknown, or being created or deleted
		}
		st := topicState{exists: true, partitions: len(t.Partitions), served: len(t.Partitions) > 0}
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				st.served = false
			}
		}
		out[*t.Topic] = st
	}
	return out, nil
}

// Description is what the cluster says of one topic.
type Description struct {
	Name          string
	Partitions    int
	CleanupPolicy string
	RetentionMS   string
}

// Describe reads the partition count and cleanup policy of every topic of c from the cluster.
func Describe(ctx context.Context, cl *kgo.Client, c Config) ([]Description, error) {
	names := c.names()
	// Metadata of a topic created a moment ago can take a little while to reach every broker.
	var states map[string]topicState
	for attempt := 0; ; attempt++ {
		var err error
		if states, err = look(ctx, cl, names); err != nil {
			return nil, fmt.Errorf("topics: list: %w", err)
		}
		missing := slices.ContainsFunc(names, func(n string) bool { return !states[n].exists })
		if !missing || attempt == 75 { // about 15 s: a fresh, busy broker can be slow
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	adm := kadm.NewClient(cl)
	configs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("topics: describe configs: %w", err)
	}
	var out []Description
	for _, name := range names {
		st := states[name]
		if !st.exists {
			return nil, fmt.Errorf("topics: %s does not exist (run `hookstream topics create`)", name)
		}
		d := Description{Name: name, Partitions: st.partitions}
		rc, err := configs.On(name, nil)
		if err != nil {
			return nil, fmt.Errorf("topics: describe %s: %w", name, err)
		}
		for _, kv := range rc.Configs {
			if kv.Value == nil {
				continue
			}
			switch kv.Key {
			case "cleanup.policy":
				d.CleanupPolicy = *kv.Value
			case "retention.ms":
				d.RetentionMS = *kv.Value
			}
		}
		out = append(out, d)
	}
	return out, nil
}
