package sender

// The deliveries topic read uncommitted (design.md sections 5 and 6): cdc and fanout write
// delivery records in Kafka transactions, and a read_committed reader sees none of a
// transaction's records until its commit markers are written, which on a real broker cost each
// delivery the transaction's end (EndTxn, the markers, the last stable offset) on its way to the
// endpoint. The sender takes records as they are written instead. A record of a transaction that
// aborts is still a delivery of a committed event: cdc publishes only what PostgreSQL committed
// and confirms its slot only after its Kafka transaction commits, and fanout consumes only
// committed events and commits its input offsets in its transaction, so an aborted transaction's
// records are written again, with the same delivery ids, by the transaction that replaces it.
// The sender watches the transactions' markers, remembers the records it took from a
// transaction that aborted, and passes over their copies, so an abort costs no second request.

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
// it needs no lock.
type txnWatch struct {
	// open: by producer id, the records taken from its transaction since its last marker. A
	// producer has one transaction open on a partition at a time, and its epoch moves across
	// transactions and restarts, so the id alone names it.
	open map[int64][]copyKey
	// aborted: records taken from transactions that aborted, whose copies are still to come;
	// order is the order they were added in, for the cap.
	aborted map[copyKey]struct{}
	order   []copyKey
}

// control reads a transaction marker: an abort makes the records taken from the producer's
// transaction aborted copies to pass over; a commit forgets them. It returns how many records
// the abort concerned.
func (t *txnWatch) control(r *kgo.Record) (aborted int) {
	// A marker's key is its version (int16) and type (int16): 0 abort, 1 commit.
	if len(r.Key) < 4 {
		return 0
	}
	taken := t.open[r.ProducerID]
	delete(t.open, r.ProducerID)
	if binary.BigEndian.Uint16(r.Key[2:4]) != 0 {
		return 0
	}
	if t.aborted == nil {
		t.aborted = make(map[copyKey]struct{})
	}
	for _, k := range taken {
		t.aborted[k] = struct{}{}
		t.order = append(t.order, k)
	}
	t.trim()
	return len(taken)
}

// taken registers a record of producer's open transaction and says whether it is the copy of an
// aborted record already taken, to be passed over. A copy is registered as well: should its
// transaction abort in turn, the copy after it is passed over too.
func (t *txnWatch) taken(producer int64, d records.Delivery) (repeat bool) {
	k := keyOf(d)
	if _, ok := t.aborted[k]; ok {
		delete(t.aborted, k)
		if len(t.aborted) == 0 {
			clear(t.order)
			t.order = t.order[:0]
		}
		repeat = true
	}
	if t.open == nil {
		t.open = make(map[int64][]copyKey)
	}
	if open := t.open[producer]; len(open) < maxOpenTxnRecords {
		t.open[producer] = append(open, k)
	}
	return repeat
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
