package sender_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// txnProducer writes delivery records in Kafka transactions, as cdc and fanout do.
type txnProducer struct {
	e  *env
	cl *kgo.Client
}

func newTxnProducer(e *env, id string) *txnProducer {
	e.t.Helper()
	cl := e.kafka.Client(e.t, kgo.TransactionalID(e.names.Deliveries+"."+id),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	return &txnProducer{e: e, cl: cl}
}

// write begins a transaction and writes ds to partition 0, flushed to the broker and left open.
func (p *txnProducer) write(ds ...records.Delivery) {
	p.e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.cl.BeginTransaction(); err != nil {
		p.e.t.Fatal(err)
	}
	for _, d := range ds {
		v, err := json.Marshal(d)
		if err != nil {
			p.e.t.Fatal(err)
		}
		p.cl.Produce(ctx, &kgo.Record{Topic: p.e.names.Deliveries, Key: []byte(d.EndpointID), Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				p.e.t.Errorf("produce: %v", err)
			}
		})
	}
	if err := p.cl.Flush(ctx); err != nil {
		p.e.t.Fatal(err)
	}
}

// end commits or aborts the open transaction.
func (p *txnProducer) end(commit kgo.TransactionEndTry) {
	p.e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.cl.EndTransaction(ctx, commit); err != nil {
		p.e.t.Fatal(err)
	}
}

// The sender takes a delivery record as it is written, before its transaction commits: the
// delivery does not wait for the transaction's end (design.md section 6).
func TestDeliversBeforeTheTransactionCommits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_open", "p_a")
	e.start(e.config())
	p := newTxnProducer(e, "open")

	d := delivery("p_a", "ep_open", "customer.created")
	p.write(d)
	waitFor(t, 15*time.Second, "the request of a record whose transaction is open", func() bool {
		return len(e.rcv.got("ep_open")) == 1
	})
	p.end(kgo.TryCommit)
	e.waitDelivered(d)
	if got := e.rcv.eventIDs("ep_open"); !slices.Equal(got, []string{d.EventID}) {
		t.Fatalf("received %v, want the event once", got)
	}
}

// A transaction that aborts after the sender took its records is written again by the one that
// replaces it, with the same delivery ids (cdc from its slot, fanout from its input offsets):
// each delivery reaches the endpoint once, the copies are passed over and committed past, and a
// replay of a delivery that was in the aborted transaction is still sent.
func TestAbortedTransactionsCopiesAreNotSentAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_abort", "p_a")
	cfg, reg := e.meteredConfig()
	e.start(cfg)
	p := newTxnProducer(e, "abort")

	ds := deliveries(3, "p_a", "ep_abort", "customer.created")
	p.write(ds[:2]...)
	waitFor(t, 15*time.Second, "the requests of the open transaction's records", func() bool {
		return len(e.rcv.got("ep_abort")) == 2
	})
	p.end(kgo.TryAbort)
	waitFor(t, 15*time.Second, "the abort seen", func() bool {
		return testenv.Counter(t, reg, "hookstream_sender_aborted_records_total") == 2
	})
	// The replacing transaction: the two copies and a record the aborted one did not hold.
	p.write(ds...)
	p.end(kgo.TryCommit)
	e.waitDelivered(ds[2])
	waitFor(t, 15*time.Second, "the copies passed over", func() bool {
		return testenv.Counter(t, reg, "hookstream_sender_aborted_copies_skipped_total") == 2
	})

	// A replay of the first delivery is a new request, not a copy.
	replay := ds[0]
	replay.Trigger = records.TriggerReplay
	e.deliver(0, replay)
	waitFor(t, 15*time.Second, "the replay", func() bool {
		return len(e.rcv.got("ep_abort")) == 4
	})
	time.Sleep(300 * time.Millisecond) // a copy sent by mistake would arrive meanwhile
	got := e.rcv.eventIDs("ep_abort")
	want := []string{ds[0].EventID, ds[1].EventID, ds[2].EventID, ds[0].EventID}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("received %v,\nwant each event once and the replay\n%v", got, want)
	}
	// Every record, the markers and the copies included, is committed past.
	waitFor(t, 15*time.Second, "the commit past every record", func() bool {
		return e.committed(cfg, 0) == e.endOffset(0)
	})
}

// endOffset is the end offset of a deliveries partition.
func (e *env) endOffset(partition int32) int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offsets, err := kadm.NewClient(e.producer).ListEndOffsets(ctx, e.names.Deliveries)
	if err != nil {
		e.t.Fatal(err)
	}
	o, ok := offsets.Lookup(e.names.Deliveries, partition)
	if !ok {
		e.t.Fatalf("no end offset of partition %d", partition)
	}
	return o.Offset
}
