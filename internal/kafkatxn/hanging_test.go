package kafkatxn_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/kafkatxn"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestOutcome(t *testing.T) {
	write := time.Date(2026, 12, 1, 15, 31, 24, 149e6, time.UTC)
	at := func(d time.Duration) int64 { return write.Add(d).UnixMilli() }
	for _, c := range []struct {
		name          string
		txn           *kadm.DescribedTransaction
		epoch         int16
		commit, leave bool
	}{
		{"coordinator knows no such producer", nil, 7, true, false},
		{"still ongoing", &kadm.DescribedTransaction{State: "Ongoing", ProducerEpoch: 7, StartTimestamp: at(0)}, 7, false, true},
		{"being committed", &kadm.DescribedTransaction{State: "PrepareCommit", ProducerEpoch: 8, StartTimestamp: at(0)}, 7, false, true},
		{"being aborted", &kadm.DescribedTransaction{State: "PrepareAbort", ProducerEpoch: 7, StartTimestamp: at(-time.Second)}, 7, false, true},
		{"committed, protocol 2 (epoch bumped)", &kadm.DescribedTransaction{State: "CompleteCommit", ProducerEpoch: 8, StartTimestamp: at(time.Millisecond)}, 7, true, false},
		{"aborted, protocol 2", &kadm.DescribedTransaction{State: "CompleteAbort", ProducerEpoch: 8, StartTimestamp: at(0)}, 7, false, false},
		{"aborted, protocol 1, this transaction", &kadm.DescribedTransaction{State: "CompleteAbort", ProducerEpoch: 7, StartTimestamp: at(-time.Minute)}, 7, false, false},
		{"aborted, protocol 1, a later transaction", &kadm.DescribedTransaction{State: "CompleteAbort", ProducerEpoch: 7, StartTimestamp: at(time.Minute)}, 7, true, false},
		{"a later transaction ongoing", &kadm.DescribedTransaction{State: "Ongoing", ProducerEpoch: 8, StartTimestamp: at(time.Minute)}, 7, true, false},
		{"producer fenced since, outcome lost", &kadm.DescribedTransaction{State: "Empty", ProducerEpoch: 12, StartTimestamp: at(time.Hour)}, 7, true, false},
	} {
		commit, leave := kafkatxn.Outcome(c.txn, c.epoch, write)
		if commit != c.commit || leave != c.leave {
			t.Errorf("%s: commit %v leave %v, want commit %v leave %v", c.name, commit, leave, c.commit, c.leave)
		}
	}
}

// openTransaction begins a transaction of txnID, writes n records to partition p of topic and
// leaves it open, as a producer whose commit markers a broker lost.
func openTransaction(t *testing.T, k *testenv.Kafka, txnID, topic string, p int32, n int) {
	t.Helper()
	cl := k.Client(t, kgo.TransactionalID(txnID), kgo.TransactionTimeout(5*time.Minute), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cl.EndTransaction(ctx, kgo.TryAbort) // may find the transaction completed already
	})
}

// stuck reports whether partition p of topic has an open transaction holding its last stable
// offset below its end.
func stuck(t *testing.T, adm *kadm.Client, topic string, p int32) bool {
	t.Helper()
	ctx := context.Background()
	end, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := end.Lookup(topic, p)
	s, _ := stable.Lookup(topic, p)
	return s.Offset < e.Offset
}

// readCommitted counts the committed records of partition p.
func readCommitted(t *testing.T, k *testenv.Kafka, topic string, p int32) int {
	t.Helper()
	cl := k.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	n := 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		cl.PollFetches(ctx).EachRecord(func(*kgo.Record) { n++ })
		cancel()
	}
	return n
}

// A transaction left open on partitions is left to its coordinator while the coordinator holds
// it open, and completed with the coordinator's outcome once the coordinator has finished it:
// committed records become readable, aborted ones never, and both partitions move again. No
// broker loses markers on demand, so the test states the coordinator's record of the finished
// transactions; the partitions, the markers and the readers are the broker's.
func TestRepairerCompletesHangingTransactions(t *testing.T) {
	t.Parallel()
	k := testenv.NewKafka(t)
	names := k.CreateTopics(t)
	adm := kadm.NewClient(k.Client(t))
	committed, aborted := k.Prefix+".fanout.committed", k.Prefix+".fanout.aborted"
	openTransaction(t, k, committed, names.Deliveries, 0, 3)
	openTransaction(t, k, aborted, names.Deliveries, 1, 2)
	if !stuck(t, adm, names.Deliveries, 0) || !stuck(t, adm, names.Deliveries, 1) {
		t.Fatal("open transactions do not hold the last stable offsets")
	}

	reg := prometheus.NewRegistry()
	r, err := kafkatxn.NewRepairer(adm, k.Prefix, time.Nanosecond, slog.New(slog.NewTextHandler(io.Discard, nil)), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if done, err := r.Check(ctx); err != nil || len(done) != 0 {
		t.Fatalf("live transactions: completed %+v (%v), want them left to their coordinator", done, err)
	}
	if !stuck(t, adm, names.Deliveries, 0) {
		t.Fatal("a live transaction was completed")
	}

	kafkatxn.SetCoordinator(r, func(ctx context.Context, pid int64, real func(context.Context, int64) (*kadm.DescribedTransaction, error)) (*kadm.DescribedTransaction, error) {
		d, err := real(ctx, pid)
		if err != nil || d == nil || d.TxnID != committed && d.TxnID != aborted {
			return d, err
		}
		ended := *d // finished at the coordinator with protocol 2's epoch bump, markers lost
		ended.ProducerEpoch, ended.Topics, ended.State = d.ProducerEpoch+1, nil, "CompleteCommit"
		if d.TxnID == aborted {
			ended.State = "CompleteAbort"
		}
		return &ended, nil
	})
	done, err := r.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]bool{}
	for _, c := range done {
		outcomes[c.TxnID] = c.Commit
	}
	if len(done) != 2 || !outcomes[committed] || outcomes[aborted] {
		t.Fatalf("completed %+v, want %s committed and %s aborted", done, committed, aborted)
	}
	if stuck(t, adm, names.Deliveries, 0) || stuck(t, adm, names.Deliveries, 1) {
		t.Fatal("partitions still held after the markers")
	}
	if n := readCommitted(t, k, names.Deliveries, 0); n != 3 {
		t.Errorf("%d records readable of the committed transaction, want 3", n)
	}
	if n := readCommitted(t, k, names.Deliveries, 1); n != 0 {
		t.Errorf("%d records readable of the aborted transaction, want 0", n)
	}
	if got := testenv.Counter(t, reg, "hookstream_kafka_hanging_transactions_completed_total"); got != 2 {
		t.Errorf("hanging_transactions_completed_total = %v, want 2", got)
	}
}
