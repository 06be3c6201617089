package sender

import (
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// marker is a transaction marker of producer at offset: an abort or a commit.
func marker(producer, offset int64, commit bool) *kgo.Record {
	key := []byte{0, 0, 0, 0}
	if commit {
		key[3] = 1
	}
	return &kgo.Record{Key: key, ProducerID: producer, Offset: offset}
}

// isCopy is taken's first answer.
func (t *txnWatch) isCopy(producer, offset int64, d records.Delivery) bool {
	repeat, _ := t.taken(producer, offset, d)
	return repeat
}

func firstDelivery(id string) records.Delivery {
	return records.Delivery{DeliveryID: id, Trigger: records.TriggerInitial, AttemptNo: 1}
}

// The watch across the sequences intake meets, the partition read again from an earlier offset
// after an assignment included: a copy is a record after the abort's marker, never the aborted
// record read again, and never the record of a transaction that committed.
func TestTxnWatch(t *testing.T) {
	const cdc, fanout = 7, 9
	a, b, c := firstDelivery("dlv_a"), firstDelivery("dlv_b"), firstDelivery("dlv_c")

	t.Run("abort then copies", func(t *testing.T) {
		var w txnWatch
		for i, d := range []records.Delivery{a, b} {
			if w.isCopy(cdc, int64(10+i), d) {
				t.Fatalf("%s taken as a copy before any abort", d.DeliveryID)
			}
		}
		if n := w.control(marker(cdc, 12, false)); n != 2 {
			t.Fatalf("the abort concerned %d records, want 2", n)
		}
		if !w.isCopy(cdc, 13, a) || !w.isCopy(cdc, 14, b) {
			t.Fatal("a copy after the abort was not passed over")
		}
		if w.isCopy(cdc, 15, c) {
			t.Fatal("a record the aborted transaction did not hold was passed over")
		}
		if w.isCopy(cdc, 20, a) {
			t.Fatal("a record after the copy was passed over: one copy is owed an aborted record")
		}
	})

	t.Run("read again from before the abort", func(t *testing.T) {
		var w txnWatch
		w.isCopy(cdc, 10, a)
		w.control(marker(cdc, 12, false))
		// The assignment comes back and the partition is read from offset 10 again.
		if repeat, open := w.taken(cdc, 10, a); repeat || open {
			t.Fatalf("the aborted record read again: taken for a copy %t, its transaction open %t; want neither", repeat, open)
		}
		if n := w.control(marker(cdc, 12, false)); n != 0 {
			t.Fatalf("the abort read again concerned %d records, want 0", n)
		}
		if !w.isCopy(cdc, 13, a) {
			t.Fatal("the copy after the abort read again was not passed over")
		}
	})

	t.Run("read again from after the records", func(t *testing.T) {
		// Taken and committed past before an outage; the abort comes after it.
		var w txnWatch
		w.isCopy(cdc, 10, a)
		if w.control(marker(cdc, 11, false)) != 1 || !w.isCopy(cdc, 12, a) {
			t.Fatal("the copy of a record taken before the outage was not passed over")
		}
	})

	t.Run("commit", func(t *testing.T) {
		var w txnWatch
		w.isCopy(cdc, 10, a)
		w.control(marker(cdc, 11, true))
		if w.isCopy(cdc, 12, a) {
			t.Fatal("a record after a committed transaction was passed over")
		}
	})

	t.Run("producers apart", func(t *testing.T) {
		var w txnWatch
		w.isCopy(cdc, 10, a)
		w.isCopy(fanout, 11, b)
		w.control(marker(fanout, 12, false)) // fanout's abort; cdc's transaction goes on
		w.control(marker(cdc, 13, true))
		if w.isCopy(cdc, 14, a) {
			t.Fatal("cdc's committed record counted as aborted by fanout's abort")
		}
		if !w.isCopy(fanout, 15, b) {
			t.Fatal("the copy of fanout's aborted record was not passed over")
		}
	})

	t.Run("a replay is no copy", func(t *testing.T) {
		var w txnWatch
		w.isCopy(cdc, 10, a)
		w.control(marker(cdc, 11, false))
		replay := a
		replay.Trigger = records.TriggerReplay
		if w.isCopy(cdc, 12, replay) {
			t.Fatal("a replay of an aborted record's delivery was passed over")
		}
	})
}

// The aborted records awaiting their copies are capped, the newest kept.
func TestTxnWatchCap(t *testing.T) {
	var w txnWatch
	offset := int64(0)
	abortOf := func(first, n int) {
		for i := range n {
			w.isCopy(1, offset, firstDelivery("dlv_"+strconv.Itoa(first+i)))
			offset++
		}
		w.control(marker(1, offset, false))
		offset++
	}
	abortOf(0, 10)
	abortOf(10, maxAbortedCopies)
	if len(w.aborted) != maxAbortedCopies {
		t.Fatalf("%d aborted records remembered, want the cap %d", len(w.aborted), maxAbortedCopies)
	}
	if _, ok := w.aborted[keyOf(firstDelivery("dlv_0"))]; ok {
		t.Fatal("the oldest aborted record kept past the cap")
	}
}
