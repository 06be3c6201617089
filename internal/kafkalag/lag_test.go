package kafkalag_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/kafkalag"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

const (
	lagMetric    = "hookstream_kafka_consumer_lag_records"
	failedMetric = "hookstream_kafka_consumer_lag_checks_failed_total"
)

// newTopic creates a topic of three partitions under the test's prefix.
func newTopic(t *testing.T, k *testenv.Kafka, name string) string {
	t.Helper()
	topic := k.Prefix + "." + name
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(k.Client(t)).CreateTopic(ctx, 3, 1, nil, topic); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	return topic
}

func produce(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range n {
		r := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
}

// consumeAndCommit reads exactly n records as a member of the consumer's group and commits them.
func consumeAndCommit(t *testing.T, cl *kgo.Client, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fs := cl.PollRecords(ctx, n-len(recs))
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(recs), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		recs = append(recs, fs.Records()...)
	}
	if err := cl.CommitRecords(ctx, recs...); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

func newMonitor(t *testing.T, brokers []string, reg prometheus.Registerer, cs ...kafkalag.Consumption) *kafkalag.Monitor {
	t.Helper()
	cfg := kafkalag.DefaultConfig()
	cfg.Brokers, cfg.Consumptions, cfg.Logger, cfg.Registerer = brokers, cs, slog.New(slog.DiscardHandler), reg
	m, err := kafkalag.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func check(t *testing.T, m *kafkalag.Monitor) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Check(ctx); err != nil {
		t.Fatalf("check: %v", err)
	}
}

// checkEventually runs checks until one succeeds (bounded): a broker just started answers
// COORDINATOR_NOT_AVAILABLE for a while, as the offsets topic comes up.
func checkEventually(t *testing.T, m *kafkalag.Monitor) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		err := m.Check(ctx)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("no check succeeded within a minute: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestLagIsWhatTheGroupHasNotCommitted(t *testing.T) {
	k := testenv.NewKafka(t)
	topic := newTopic(t, k, "work")
	other := newTopic(t, k, "other")
	group := k.Prefix + ".reader"
	const n, m = 40, 15
	produce(t, k.Client(t), topic, n)
	produce(t, k.Client(t), other, 7)

	reg := prometheus.NewRegistry()
	mon := newMonitor(t, k.Brokers, reg,
		kafkalag.Consumption{Group: group, Topic: topic},
		kafkalag.Consumption{Group: group + ".idle", Topic: other})

	check(t, mon)
	if got := testenv.Gauge(t, reg, lagMetric, "group", group, "topic", topic); got != n {
		t.Fatalf("before any commit: lag %v, want %d", got, n)
	}
	if got := testenv.Gauge(t, reg, lagMetric, "group", group+".idle", "topic", other); got != 7 {
		t.Fatalf("a group that never consumed: lag %v, want 7", got)
	}

	reader := k.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consumeAndCommit(t, reader, m)
	check(t, mon)
	if got := testenv.Gauge(t, reg, lagMetric, "group", group, "topic", topic); got != n-m {
		t.Fatalf("after committing %d of %d: lag %v, want %d", m, n, got, n-m)
	}

	consumeAndCommit(t, reader, n-m)
	check(t, mon)
	if got := testenv.Gauge(t, reg, lagMetric, "group", group, "topic", topic); got != 0 {
		t.Fatalf("after committing everything: lag %v, want 0", got)
	}
	if got := testenv.Counter(t, reg, failedMetric); got != 0 {
		t.Fatalf("%s = %v after checks that succeeded", failedMetric, got)
	}
}

// Records of a transaction still open are past the last stable offset: a read_committed
// consumer cannot reach them yet, so they are not lag; once committed they are.
func TestOpenTransactionIsNotLag(t *testing.T) {
	k := testenv.NewKafka(t)
	topic := newTopic(t, k, "txn")
	group := k.Prefix + ".reader"
	produce(t, k.Client(t), topic, 5)
	tx := k.Client(t, kgo.TransactionalID(k.Prefix+".tx"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, tx, topic, 3)

	reg := prometheus.NewRegistry()
	mon := newMonitor(t, k.Brokers, reg, kafkalag.Consumption{Group: group, Topic: topic})
	check(t, mon)
	if got := testenv.Gauge(t, reg, lagMetric, "group", group, "topic", topic); got != 5 {
		t.Fatalf("with 3 records in an open transaction after 5: lag %v, want 5", got)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// EndTransaction returns once the coordinator has decided; it writes the commit markers to
	// the partitions a moment later (on a real broker), and only then does the last stable offset
	// move. So the lag reaches 5 + 3 records, and the marker of each partition the transaction
	// wrote (doc.go), within a bound.
	var got float64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		check(t, mon)
		got = testenv.Gauge(t, reg, lagMetric, "group", group, "topic", topic)
		if got >= 8 || time.Now().After(deadline) {
			break
		}
	}
	if got < 8 || got > 8+3 {
		t.Fatalf("after the commit: lag %v, want 8 records plus at most one marker per partition", got)
	}
}

func TestBrokerOutageCountsAFailedCheck(t *testing.T) {
	t.Parallel()
	k := testenv.NewRestartableKafka(t)
	topic := newTopic(t, k, "work")
	group := k.Prefix + ".reader"
	produce(t, k.Client(t), topic, 4)
	reg := prometheus.NewRegistry()
	mon := newMonitor(t, k.Brokers, reg, kafkalag.Consumption{Group: group, Topic: topic})
	checkEventually(t, mon)
	failedBefore := testenv.Counter(t, reg, failedMetric)

	k.Stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	err := mon.Check(ctx)
	cancel()
	if err == nil {
		t.Fatal("a check with the broker stopped succeeded")
	}
	if got := testenv.Counter(t, reg, failedMetric) - failedBefore; got != 1 {
		t.Fatalf("%s rose by %v with one failed check, want 1", failedMetric, got)
	}
	if got := testenv.Gauge(t, reg, lagMetric, "group", group, "topic", topic); got != 4 {
		t.Fatalf("during the outage the gauge reads %v, want the last value 4", got)
	}

	k.Start(t)
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for mon.Check(ctx) != nil {
		if ctx.Err() != nil {
			t.Fatal("checks kept failing for a minute after the broker came back")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Run keeps going while no broker answers: each check fails and is counted, none panics, and
// Run returns nil when its context ends.
func TestRunSurvivesADeadBroker(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := kafkalag.DefaultConfig()
	cfg.Brokers = []string{"127.0.0.1:1"} // nothing listens on port 1
	cfg.Consumptions = []kafkalag.Consumption{{Group: "g", Topic: "t"}}
	cfg.Interval, cfg.Logger, cfg.Registerer = 200*time.Millisecond, slog.New(slog.DiscardHandler), reg
	mon, err := kafkalag.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 1100*time.Millisecond)
	defer cancel()
	if err := mon.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := testenv.Counter(t, reg, failedMetric); got < 3 {
		t.Fatalf("%s = %v after about five intervals without a broker, want at least 3", failedMetric, got)
	}
	if n := testenv.Series(t, reg, lagMetric); n != 0 {
		t.Fatalf("%d lag series without ever measuring, want none", n)
	}
}
