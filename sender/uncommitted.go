package sender

// The deliveries topic read uncommitted (design.md section 6): cdc, fanout and the retry tiers
// write delivery records in Kafka transactions, and a read_committed reader sees none of a
// transaction's records until its commit markers are written, which on a real broker cost each
// delivery the transaction's end (EndTxn, the markers, the last stable offset) on its way to the
// endpoint. The sender takes records as they are written instead. A record of a transaction that
// aborts is still a delivery of a committed event: cdc publishes only what PostgreSQL committed
// and confirms its slot only after its Kafka transaction commits, and fanout consumes only
// committed events and commits its input offsets in its transaction, as a retry tier does with
// the retries it releases, so an aborted transaction's records are written again, with the same
// delivery ids, by the transaction that replaces it.
// The sender watches the transactions' markers, remembers the records it took from a
// transaction that aborted, and passes over their copies, so an abort costs no second request.
// Its commits never pass the first record it took of a transaction still open (partition.mark):
// a sender that takes the partition over after a crash or a rebalance reads that transaction's
// records again (finished, from the commit's metadata: not sent again) and knows its copies too.

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// Caps on what one partition remembers, so a transaction that never ends, or aborted copies
// never written again, cannot grow the sender's memory without bound; past them a copy may be
// sent a second time (at least once, design.md section 6).
const (
	// maxOpenTxnRecords bounds the records remembered of one producer's open transaction.
	maxOpenTxnRecords = 200_000
	// maxAbortedCopies bounds the aborted records a partition remembers until their copies come.
	maxAbortedCopies = 200_000
)

// copyKey names a delivery record as its copy repeats it: the delivery, the attempt it asks for
// and its trigger. A replay or a retry of the same delivery differs in trigger or attempt
// number, so it is never taken for a copy.
type copyKey struct {
	delivery string
	trigger  string
	attempt  int
}

func keyOf(d records.Delivery) copyKey {
	return copyKey{delivery: d.DeliveryID, trigger: d.Trigger, attempt: d.AttemptNo}
}

// txnWatch follows one partition's transactions. It is used by intake alone (the poll loop), so
// it needs no lock. The sender keeps it across the partition's revocations and assignments
// (Sender.txnWatchOf): after a broker outage the partition comes back to the same process, which
// reads it again from the committed offset, often past records taken from a transaction that
// aborted meanwhile, and must still know them for what they are.
type txnWatch struct {
	// open: by producer id, the records taken from its transaction since its last marker. A
	// producer has one transaction open on a partition at a time, and its epoch moves across
	// transactions and restarts, so the id alone names it.
	open map[int64][]copyKey
	// marked: by producer id, the offset of its last marker read. A record or marker at or
	// below it was read before, the partition being read again after an assignment.
	marked map[int64]int64
	// aborted: records taken from transactions that aborted, whose copies are still to come,
	// each with the offset of the abort's marker: only a record after it is a copy. order is
	// the order they were added in, for the cap.
	aborted map[copyKey]int64
	order   []copyKey
}

// control reads a transaction marker: an abort makes the records taken from the producer's
// transaction aborted records whose copies are passed over; a commit forgets them. It returns
// how many records the abort concerned (0 for a marker read before).
func (t *txnWatch) control(r *kgo.Record) (aborted int) {
	// A marker's key is its version (int16) and type (int16): 0 abort, 1 commit.
	if len(r.Key) < 4 {
		return 0
	}
	if last, ok := t.marked[r.ProducerID]; ok && r.Offset <= last {
		return 0
	}
	if t.marked == nil {
		t.marked = make(map[int64]int64)
	}
	t.marked[r.ProducerID] = r.Offset
	taken := t.open[r.ProducerID]
	delete(t.open, r.ProducerID)
	if binary.BigEndian.Uint16(r.Key[2:4]) != 0 {
		return 0
	}
	if t.aborted == nil {
		t.aborted = make(map[copyKey]int64)
	}
	for _, k := range taken {
		if _, ok := t.aborted[k]; !ok {
			t.order = append(t.order, k)
		}
		t.aborted[k] = r.Offset
	}
	t.trim()
	return len(taken)
}

// taken registers the record at offset of producer's transaction and says whether it is the
// copy of an aborted record already taken, to be passed over, and whether its transaction is
// open. A copy is registered as well: should its transaction abort in turn, the copy after it
// is passed over too. A record read again after an assignment is registered only while its
// transaction is open.
func (t *txnWatch) taken(producer, offset int64, d records.Delivery) (repeat, open bool) {
	k := keyOf(d)
	if marker, ok := t.aborted[k]; ok && offset > marker {
		delete(t.aborted, k)
		if len(t.aborted) == 0 {
			clear(t.order)
			t.order = t.order[:0]
		}
		repeat = true
	}
	if last, ok := t.marked[producer]; ok && offset <= last {
		return repeat, false // its transaction has ended
	}
	if t.open == nil {
		t.open = make(map[int64][]copyKey)
	}
	if open := t.open[producer]; len(open) < maxOpenTxnRecords {
		t.open[producer] = append(open, k)
	}
	return repeat, true
}

// trim keeps order to the keys still awaited and at most maxAbortedCopies of them, the newest.
func (t *txnWatch) trim() {
	if len(t.order) <= maxAbortedCopies {
		return
	}
	kept := t.order[:0]
	for _, k := range t.order {
		if _, ok := t.aborted[k]; ok {
			kept = append(kept, k)
		}
	}
	clear(t.order[len(kept):])
	t.order = kept
	if n := len(t.order) - maxAbortedCopies; n > 0 {
		for _, k := range t.order[:n] {
			delete(t.aborted, k)
		}
		t.order = append(t.order[:0], t.order[n:]...)
	}
}
