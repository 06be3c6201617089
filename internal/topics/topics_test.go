package topics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/topics"
)

func TestEnsureTwiceAndDescribe(t *testing.T) {
	k := testenv.NewKafka(t)
	cl := k.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := k.TopicConfig()

	created, err := topics.Ensure(ctx, cl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	specs := cfg.Specs()
	if len(specs) != 6+len(topics.RetryTiers) {
		t.Fatalf("%d topic specs", len(specs))
	}
	for _, s := range specs {
		if !created[s.Name] {
			t.Errorf("%s not created on the first run", s.Name)
		}
	}
	created, err = topics.Ensure(ctx, cl, cfg)
	if err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	for name, c := range created {
		if c {
			t.Errorf("%s created again on the second run", name)
		}
	}

	descs, err := topics.Describe(ctx, cl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	names := topics.For(cfg.Prefix)
	got := map[string]topics.Description{}
	for _, d := range descs {
		got[d.Name] = d
	}
	want := map[string]struct {
		partitions int
		policy     string
	}{
		names.Events:       {3, "compact,delete"},
		names.Endpoints:    {1, "compact"},
		names.Checkpoints:  {1, "compact"},
		names.Deliveries:   {3, "delete"},
		names.Attempts:     {3, "delete"},
		names.DLQ:          {3, "delete"},
		names.Retry["5s"]:  {3, "delete"},
		names.Retry["24h"]: {3, "delete"},
	}
	for name, w := range want {
		d := got[name]
		if d.Partitions != w.partitions || d.CleanupPolicy != w.policy {
			t.Errorf("%s: %d partitions, cleanup.policy %q; want %d, %q", name, d.Partitions, d.CleanupPolicy, w.partitions, w.policy)
		}
	}
	if got[names.Events].RetentionMS != fmt.Sprint(cfg.EventLogRetention.Milliseconds()) {
		t.Errorf("events retention.ms = %s", got[names.Events].RetentionMS)
	}
}

// The events topic is created with the event log's retention, not the feed's: a longer one, or
// none at all (retention.ms -1), as the cluster reads it back.
func TestEventLogRetention(t *testing.T) {
	k := testenv.NewKafka(t)
	cl := k.Client(t)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name      string
		retention time.Duration
		want      string
	}{
		{"longer", 90 * 24 * time.Hour, "7776000000"},
		{"forever", topics.RetainForever, "-1"},
	} {
		cfg := k.TopicConfig()
		cfg.Prefix += "." + tc.name
		cfg.EventLogRetention = tc.retention
		if _, err := topics.Ensure(ctx, cl, cfg); err != nil {
			t.Fatal(err)
		}
		events := topics.For(cfg.Prefix).Events
		rc, err := adm.DescribeTopicConfigs(ctx, events)
		if err != nil {
			t.Fatal(err)
		}
		c, err := rc.On(events, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, kv := range c.Configs {
			if kv.Key == "retention.ms" && kv.Value != nil {
				got = *kv.Value
			}
		}
		if got != tc.want {
			t.Errorf("%s: events retention.ms = %q, want %q (feed retention %s)", tc.name, got, tc.want, cfg.FeedRetention)
		}
	}
}

// A transactional produce and a read_committed consume: the shape every hookstream stage uses,
// on whichever Kafka the test lane names.
func TestTransactionalRoundTrip(t *testing.T) {
	k := testenv.NewKafka(t)
	names := k.CreateTopics(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	prod := k.Client(t,
		kgo.TransactionalID(k.Prefix+"-roundtrip"),
		kgo.DefaultProduceTopic(names.Events),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
	produce := func(commit bool, keys ...string) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, key := range keys {
			r := &kgo.Record{Key: []byte(key), Value: []byte(`{"event_id":"` + key + `"}`), Partition: 1}
			if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	produce(true, "evt_1", "evt_2")
	produce(false, "evt_aborted")
	produce(true, "evt_3")

	cons := k.Client(t,
		kgo.ConsumeTopics(names.Events),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	var got []string
	for len(got) < 3 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v (got %v so far)", err, got)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Partition != 1 {
				t.Errorf("record %s on partition %d, want 1", r.Key, r.Partition)
			}
			got = append(got, string(r.Key))
		})
	}
	if fmt.Sprint(got) != "[evt_1 evt_2 evt_3]" {
		t.Fatalf("consumed %v, want the committed records in order and no aborted one", got)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := topics.DefaultConfig()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*topics.Config){
		func(c *topics.Config) { c.Prefix = "" },
		func(c *topics.Config) { c.Prefix = "has space" },
		func(c *topics.Config) { c.Partitions = 0 },
		func(c *topics.Config) { c.ReplicationFactor = 0 },
		func(c *topics.Config) { c.FeedRetention = time.Minute },
		// The log may not keep less than the feed promises.
		func(c *topics.Config) { c.EventLogRetention = c.FeedRetention - time.Hour },
		func(c *topics.Config) { c.EventLogRetention = 0 },
	}
	for i, edit := range bad {
		c := topics.DefaultConfig()
		edit(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: invalid config accepted: %+v", i, c)
		}
	}
}
