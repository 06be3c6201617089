// Package kafkatxn completes hanging Kafka transactions on hookstream's topics.
//
// A broker that dies in the middle of a transaction's commit can leave the transaction finished
// at its coordinator but open on the partitions it wrote: the commit or abort markers never
// reach them (the chaos run met it after a broker SIGKILL, with Kafka 4.4). Such a
// hanging transaction is permanent. read_committed consumers stop at the partition's last stable
// offset for ever, and a consumer group whose offsets were part of the transaction gets
// UNSTABLE_OFFSET_COMMIT for ever, so its partitions are owned and never consumed. Nothing is
// lost, but nothing moves either, and no client error says why.
//
// The Repairer looks for transactions open on a partition longer than any of hookstream's
// transaction timeouts allow, asks the transaction coordinator how it ended, and writes that
// outcome's markers to every partition the transaction left open, its consumer offsets
// included (KIP-664's WriteTxnMarkers, what `kafka-transactions.sh abort` sends).
package kafkatxn

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/internal/periodic"
)

// DefaultStuckAfter is how long a transaction may stay open on a partition, with no write of its
// producer, before the Repairer asks its coordinator about it. The coordinator's answer is what
// makes a repair safe (a transaction it still holds open is left to it), so this only keeps the
// checks away from transactions being written now; a chaos run with 2 minutes here drained a
// minute late after every hanging transaction.
const DefaultStuckAfter = 15 * time.Second

// offsetsTopic holds the consumer groups' offsets; a transaction's offset commit is pending
// there until its marker arrives.
const offsetsTopic = "__consumer_offsets"

// Repairer completes hanging transactions on the topics of one installation.
type Repairer struct {
	adm        *kadm.Client
	prefix     string
	stuckAfter time.Duration
	log        *slog.Logger
	now        func() time.Time
	// coordinator returns the coordinator's state of producer pid's transactional id (nil: it
	// knows none); a field so that a test can state a coordinator's lost record, which no
	// broker produces on demand.
	coordinator func(ctx context.Context, pid int64) (*kadm.DescribedTransaction, error)
	repaired    *prometheus.CounterVec
	failures    prometheus.Counter
}

// NewRepairer returns a Repairer of the topics named <prefix>.*; reg may be nil.
func NewRepairer(adm *kadm.Client, prefix string, stuckAfter time.Duration, log *slog.Logger, reg prometheus.Registerer) (*Repairer, error) {
	if adm == nil || prefix == "" || stuckAfter <= 0 || log == nil {
		return nil, fmt.Errorf("kafkatxn: repairer needs an admin client, a topic prefix, a positive stuck-after and a logger")
	}
	set := &metrics.Set{Registerer: reg, Subsystem: "kafka"}
	r := &Repairer{adm: adm, prefix: prefix, stuckAfter: stuckAfter, log: log.With("component", "kafkatxn"), now: time.Now,
		repaired: set.CounterVec("hanging_transactions_completed_total",
			"Transactions found open on partitions after their coordinator had finished them, completed with the coordinator's outcome (commit, abort).",
			"outcome"),
		failures: set.Counter("hanging_transaction_checks_failed_total", "Checks for hanging transactions that could not be made."),
	}
	r.coordinator = r.transactionOf
	for _, outcome := range []string{"commit", "abort"} {
		r.repaired.WithLabelValues(outcome) // exported at 0 from the start, for alerts' increase()
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("kafkatxn: metrics: %w", err)
	}
	return r, nil
}

// Run checks every interval until ctx ends. A check that fails is counted and logged, and
// made again at the next interval.
func (r *Repairer) Run(ctx context.Context, interval time.Duration) {
	periodic.Every(ctx, interval, func(ctx context.Context) {
		cctx, cancel := context.WithTimeout(ctx, interval)
		_, err := r.Check(cctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			r.failures.Inc()
			r.log.Warn("hanging transactions: check failed; trying again", "in", interval, "err", err)
		}
	})
}

// Completed is one hanging transaction the Repairer completed.
type Completed struct {
	ProducerID    int64
	ProducerEpoch int16
	TxnID         string // "" when the coordinator no longer knows the producer
	Commit        bool
	Partitions    []string // "topic/partition"
}

// open is one transaction open on one or more partitions.
type open struct {
	pid        int64
	epoch      int16
	last       time.Time                // the producer's newest write to any of them
	ours       bool                     // open on a topic of the installation, not only on consumer offsets
	partitions map[int32]kadm.TopicsSet // by the coordinator epoch each partition knows
}

// Check looks once and completes every hanging transaction it finds.
func (r *Repairer) Check(ctx context.Context) ([]Completed, error) {
	md, err := r.adm.Metadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafkatxn: metadata: %w", err)
	}
	set := kadm.TopicsSet{}
	for name, parts := range md.Topics.TopicsSet() {
		if name == offsetsTopic || strings.HasPrefix(name, r.prefix+".") {
			set[name] = parts
		}
	}
	if len(set) == 0 {
		return nil, nil
	}
	described, err := r.adm.DescribeProducers(ctx, set)
	if err != nil {
		return nil, fmt.Errorf("kafkatxn: describe producers: %w", err)
	}
	opens := map[[2]int64]*open{}
	now := r.now()
	described.EachProducer(func(p kadm.DescribedProducer) {
		if p.CurrentTxnStartOffset < 0 {
			return
		}
		k := [2]int64{p.ProducerID, int64(p.ProducerEpoch)}
		o := opens[k]
		if o == nil {
			o = &open{pid: p.ProducerID, epoch: p.ProducerEpoch, partitions: map[int32]kadm.TopicsSet{}}
			opens[k] = o
		}
		if last := time.UnixMilli(p.LastTimestamp); last.After(o.last) {
			o.last = last
		}
		o.ours = o.ours || p.Topic != offsetsTopic
		ts := o.partitions[p.CoordinatorEpoch]
		if ts == nil {
			ts = kadm.TopicsSet{}
		}
		ts.Add(p.Topic, p.Partition)
		o.partitions[p.CoordinatorEpoch] = ts
	})
	var done []Completed
	for _, o := range opens {
		if now.Sub(o.last) < r.stuckAfter {
			continue
		}
		c, err := r.complete(ctx, o)
		if err != nil {
			return done, err
		}
		if c != nil {
			done = append(done, *c)
		}
	}
	return done, nil
}

// complete asks the coordinator how o ended and writes that outcome's markers, or leaves o to
// the coordinator when it still holds o open.
func (r *Repairer) complete(ctx context.Context, o *open) (*Completed, error) {
	txn, err := r.coordinator(ctx, o.pid)
	if err != nil {
		return nil, err
	}
	if !o.ours && (txn == nil || !strings.HasPrefix(txn.TxnID, r.prefix+".")) {
		return nil, nil // only offsets, of another installation's or an unknown producer
	}
	commit, leave := Outcome(txn, o.epoch, o.last)
	if leave {
		return nil, nil
	}
	c := &Completed{ProducerID: o.pid, ProducerEpoch: o.epoch, Commit: commit}
	if txn != nil {
		c.TxnID = txn.TxnID
	}
	var markers []kadm.TxnMarkers
	for coordEpoch, topics := range o.partitions {
		markers = append(markers, kadm.TxnMarkers{ProducerID: o.pid, ProducerEpoch: o.epoch, Commit: commit,
			CoordinatorEpoch: coordEpoch, Topics: topics})
		for _, tp := range topics.Sorted() {
			for _, p := range tp.Partitions {
				c.Partitions = append(c.Partitions, fmt.Sprintf("%s/%d", tp.Topic, p))
			}
		}
	}
	slices.Sort(c.Partitions)
	resp, err := r.adm.WriteTxnMarkers(ctx, markers...)
	if err != nil {
		return nil, fmt.Errorf("kafkatxn: write markers of producer %d: %w", o.pid, err)
	}
	var perr error
	resp.EachPartition(func(p kadm.TxnMarkersPartitionResponse) {
		if p.Err != nil && perr == nil {
			perr = fmt.Errorf("kafkatxn: marker of producer %d on %s/%d: %w", o.pid, p.Topic, p.Partition, p.Err)
		}
	})
	if perr != nil {
		return nil, perr
	}
	outcome := "abort"
	if commit {
		outcome = "commit"
	}
	r.repaired.WithLabelValues(outcome).Inc()
	r.log.Warn("completed a hanging Kafka transaction: it was open on partitions after its coordinator had finished it",
		"outcome", outcome, "transactional_id", c.TxnID, "producer_id", o.pid, "producer_epoch", o.epoch,
		"partitions", strings.Join(c.Partitions, ","), "last_write", o.last)
	return c, nil
}

// transactionOf asks the coordinators for the transactional id producer pid belongs to.
func (r *Repairer) transactionOf(ctx context.Context, pid int64) (*kadm.DescribedTransaction, error) {
	listed, err := r.adm.ListTransactions(ctx, []int64{pid}, nil)
	if err != nil {
		return nil, fmt.Errorf("kafkatxn: list transactions of producer %d: %w", pid, err)
	}
	ids := listed.TransactionalIDs()
	if len(ids) == 0 {
		return nil, nil
	}
	described, err := r.adm.DescribeTransactions(ctx, ids...)
	if err != nil {
		return nil, fmt.Errorf("kafkatxn: describe transactions %v: %w", ids, err)
	}
	for _, d := range described {
		if d.ProducerID == pid && d.Err == nil {
			return &d, nil
		}
	}
	return nil, nil
}

// Outcome decides what to do with a transaction of producer epoch epoch that is open on a
// partition, last written at last, given its coordinator's state txn (nil: the coordinator no
// longer knows the producer). leave: the coordinator still holds this transaction open or is
// completing it, and finishes it itself (it aborts one that outlives its timeout). Otherwise the
// markers to write carry the coordinator's outcome when it recorded this very transaction's end.
//
// When it did not (it knows a later transaction of the producer, or none), the outcome is lost,
// and Outcome commits. Kafka's own tooling aborts instead, but that can lose data here: a
// producer learns that its commit succeeded before the markers are written, so cdc may have
// confirmed the outbox rows to PostgreSQL, and they would never be published again. A commit
// loses nothing: every hookstream transaction is read-process-write with its input offsets (or
// cdc's checkpoint) inside it, so a transaction its writer had meant to abort is redone, and its
// records are at worst delivered twice, under the same ids (at least once, R11).
//
// Whether the coordinator's record is of this transaction: with transaction protocol version 2
// (KIP-890) the coordinator bumps the epoch when a transaction ends, so it ended as epoch+1;
// with version 1 the epoch stays, and the coordinator's last transaction is this one when it
// started no later than this write (with a second for the writer's clock and linger).
func Outcome(txn *kadm.DescribedTransaction, epoch int16, last time.Time) (commit, leave bool) {
	if txn == nil {
		return true, false
	}
	started := time.UnixMilli(txn.StartTimestamp)
	same := txn.ProducerEpoch == epoch+1 || txn.ProducerEpoch == epoch && !started.After(last.Add(time.Second))
	switch {
	case txn.ProducerEpoch == epoch && (txn.State == "Ongoing" || txn.State == "PrepareEpochFence"),
		same && (txn.State == "PrepareCommit" || txn.State == "PrepareAbort"):
		return false, true
	case same && txn.State == "CompleteAbort":
		return false, false
	}
	return true, false
}
