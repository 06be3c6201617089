package sender

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestBreaker(t *testing.T) {
	open := 0
	b := breaker{threshold: 3, cooldown: 10 * time.Second, onChange: func(o bool) {
		if o {
			open++
		} else {
			open--
		}
	}}
	t0 := now
	mustAcquire := func(at time.Time, wantOK, wantProbe bool) {
		t.Helper()
		ok, probe := b.acquire(at)
		if ok != wantOK || probe != wantProbe {
			t.Fatalf("acquire at +%s = %v, %v; want %v, %v", at.Sub(t0), ok, probe, wantOK, wantProbe)
		}
	}
	// A success in the run resets it.
	b.record(false, false, t0)
	b.record(false, false, t0)
	b.record(true, false, t0)
	b.record(false, false, t0)
	b.record(false, false, t0)
	if b.rejects(t0) || open != 0 {
		t.Fatal("opened without a run of 3 failures")
	}
	b.record(false, false, t0)
	if !b.rejects(t0) || open != 1 {
		t.Fatal("not open after 3 consecutive failures")
	}
	mustAcquire(t0.Add(time.Second), false, false)
	// Results of requests begun before it opened change nothing.
	b.record(false, false, t0.Add(time.Second))
	b.record(true, false, t0.Add(time.Second))
	if !b.rejects(t0.Add(2*time.Second)) || b.remaining(t0.Add(2*time.Second)) != 8*time.Second {
		t.Fatalf("open state disturbed; remaining %s", b.remaining(t0.Add(2*time.Second)))
	}
	// After the cooldown: one probe, the rest wait.
	after := t0.Add(11 * time.Second)
	if b.rejects(after) {
		t.Fatal("intake still rejected after the cooldown")
	}
	mustAcquire(after, true, true)
	mustAcquire(after, false, false)
	// A failed probe opens it again for a full cooldown.
	b.record(false, true, after)
	if !b.rejects(after.Add(9*time.Second)) || open != 1 {
		t.Fatal("failed probe did not reopen the circuit")
	}
	later := after.Add(11 * time.Second)
	mustAcquire(later, true, true)
	// A probe that made no request gives its slot back.
	b.release(true)
	mustAcquire(later, true, true)
	b.record(true, true, later)
	if b.rejects(later) || open != 0 || !b.quiet() {
		t.Fatal("successful probe did not close the circuit")
	}
	mustAcquire(later, true, false)
}

// An endpoint that fails one request in five has runs of failures longer than the threshold
// now and then, but never fails half of its recent requests: its circuit stays closed. When it
// then fails every request, the circuit opens before its recent results are all failures.
func TestBreakerIgnoresRunsOfAMostlyHealthyEndpoint(t *testing.T) {
	opened := 0
	b := breaker{threshold: 5, cooldown: 10 * time.Second, onChange: func(o bool) {
		if o {
			opened++
		}
	}}
	rng := rand.New(rand.NewPCG(1, 2))
	run, longest := 0, 0
	for range 20000 {
		ok := rng.IntN(5) != 0
		if ok {
			run = 0
		} else {
			run++
			longest = max(longest, run)
		}
		b.record(ok, false, now)
	}
	if longest < 5 {
		t.Fatalf("the sequence never had a run of 5 failures (longest %d): the test proves nothing", longest)
	}
	if opened != 0 {
		t.Fatalf("circuit opened %d times for an endpoint that fails 1 request in 5", opened)
	}
	n := 0
	for !b.rejects(now) {
		if n++; n > recentSize {
			t.Fatalf("still closed after %d failures in a row", recentSize)
		}
		b.record(false, false, now)
	}
	if n < 5 {
		t.Fatalf("opened after %d failures, before the threshold", n)
	}
}

func TestPartitionMark(t *testing.T) {
	p := newPartition(t.Context(), "d", 0)
	if _, ok := p.mark(); ok {
		t.Fatal("mark before any record")
	}
	for o := int64(10); o < 15; o++ {
		if taken, _ := p.add(&kgo.Record{Offset: o, LeaderEpoch: 3}); !taken || !p.begin() {
			t.Fatal("add/begin refused")
		}
	}
	expect := func(want int64) {
		t.Helper()
		eo, _ := p.mark()
		if eo.Offset != want {
			t.Fatalf("mark %d, want %d", eo.Offset, want)
		}
	}
	expect(10)
	p.finish(12)
	p.finish(11)
	expect(10) // 10 is unfinished: nothing past it
	p.finish(10)
	expect(13)
	p.abandon() // 13 abandoned stays unfinished
	p.finish(14)
	expect(13)
	if eo, ok := p.mark(); !ok || eo.Epoch != 3 {
		t.Fatalf("mark %+v %v", eo, ok)
	}
	p.committedAt(13)
	if _, ok := p.mark(); ok {
		t.Fatal("mark reported again after being committed")
	}
	if !p.waitIdle(time.Now()) {
		t.Fatal("not idle with nothing active")
	}
	p.stop()
	if taken, _ := p.add(&kgo.Record{Offset: 15}); taken || p.begin() {
		t.Fatal("stopped partition took work")
	}
	if p.stopCtx.Err() == nil || p.ctx.Err() != nil {
		t.Fatal("stop must end waits but not running work")
	}
}

// offsetSet against a plain map, under random adds (increasing, with gaps) and removes.
func TestOffsetSet(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	var s offsetSet
	model := map[int64]bool{}
	next := int64(rng.IntN(1000))
	for step := 0; step < 50000; step++ {
		if rng.IntN(2) == 0 || len(model) == 0 {
			next += 1 + int64(rng.IntN(3)) // gaps, as transaction markers leave
			s.add(next)
			model[next] = true
		} else {
			var o int64
			if rng.IntN(2) == 0 {
				o, _ = s.min() // mostly in order, as a healthy partition finishes
			} else {
				for k := range model {
					o = k
					break
				}
			}
			s.remove(o)
			delete(model, o)
			s.remove(o) // removing twice is harmless
		}
		got, ok := s.min()
		want, wantOK := int64(-1), false
		for k := range model {
			if !wantOK || k < want {
				want, wantOK = k, true
			}
		}
		if ok != wantOK || (ok && got != want) || s.count != len(model) {
			t.Fatalf("step %d: min %d %v, want %d %v; count %d, want %d", step, got, ok, want, wantOK, s.count, len(model))
		}
	}
	if len(s.words) > 1+int(next-mustMin(&s))/64+1 {
		t.Fatalf("%d words kept for a span of %d offsets", len(s.words), next-mustMin(&s))
	}
}

func mustMin(s *offsetSet) int64 {
	m, ok := s.min()
	if !ok {
		return 0
	}
	return m
}

func TestPartitionMarkEpochs(t *testing.T) {
	p := newPartition(t.Context(), "d", 0)
	for _, r := range []kgo.Record{{Offset: 0, LeaderEpoch: 1}, {Offset: 1, LeaderEpoch: 1}, {Offset: 2, LeaderEpoch: 2}, {Offset: 3, LeaderEpoch: 2}, {Offset: 4, LeaderEpoch: 5}} {
		p.add(&r)
		p.begin()
	}
	for _, c := range []struct {
		finish int64
		mark   kgo.EpochOffset
	}{
		{1, kgo.EpochOffset{Epoch: 1, Offset: 0}},
		{0, kgo.EpochOffset{Epoch: 2, Offset: 2}},
		{2, kgo.EpochOffset{Epoch: 2, Offset: 3}},
		{3, kgo.EpochOffset{Epoch: 5, Offset: 4}},
		{4, kgo.EpochOffset{Epoch: 5, Offset: 5}},
	} {
		p.finish(c.finish)
		if got, _ := p.mark(); got != c.mark {
			t.Fatalf("after finishing %d: mark %+v, want %+v", c.finish, got, c.mark)
		}
	}
}

// The finished runs above the mark (finished.go): encoded at a commit, read back by the next
// owner only for that committed offset, cut at the metadata bound without claiming more.
func TestFinishedRuns(t *testing.T) {
	p := newPartition(t.Context(), "d", 0)
	for o := int64(100); o < 110; o++ {
		p.add(&kgo.Record{Offset: o})
		p.begin()
	}
	for _, o := range []int64{101, 102, 105, 109} {
		p.finish(o)
	}
	eo, runs, _, ok := p.commitPoint()
	if !ok || eo.Offset != 100 || runs != finishedPrefix+"100,1,2,2,1,3,1" {
		t.Fatalf("commit point %d %q %v", eo.Offset, runs, ok)
	}
	got := parseFinished(runs, 100)
	want := []offsetRange{{101, 103}, {105, 106}, {109, 110}}
	if !slices.Equal(got, want) {
		t.Fatalf("parsed %v, want %v", got, want)
	}
	for _, bad := range []string{runs[:len(runs)-2] + "x", "other metadata", finishedPrefix + "100,1,0,3"} {
		if r := parseFinished(bad, 100); r != nil {
			t.Errorf("%q read as %v", bad, r)
		}
	}
	if r := parseFinished(runs, 99); r != nil {
		t.Errorf("runs of offset 100 read for a commit at 99: %v", r)
	}

	// A mark held at a finished record of a transaction still open (uncommitted.go): the runs
	// begin with an empty unfinished one, and say the held records are finished.
	h := newPartition(t.Context(), "d", 0)
	for o := int64(100); o < 104; o++ {
		h.add(&kgo.Record{Offset: o})
		h.begin()
	}
	h.txnRecord(7, 101)
	for _, o := range []int64{100, 101, 102} {
		h.finish(o)
	}
	eo, runs, _, ok = h.commitPoint()
	if !ok || eo.Offset != 101 || runs != finishedPrefix+"101,0,2,1" {
		t.Fatalf("held commit point %d %q %v", eo.Offset, runs, ok)
	}
	if got := parseFinished(runs, 101); !slices.Equal(got, []offsetRange{{101, 103}}) {
		t.Fatalf("held runs parsed as %v, want [{101 103}]", got)
	}
	h.txnEnded(7)
	if eo, _ = h.mark(); eo.Offset != 103 {
		t.Fatalf("mark %d after the transaction's marker, want 103, the unfinished record", eo.Offset)
	}

	// The next owner passes over the finished records and handles the others.
	q := newPartition(t.Context(), "d", 0)
	q.done = got
	var handled []int64
	for o := int64(100); o < 112; o++ {
		if taken, done := q.add(&kgo.Record{Offset: o}); taken && !done {
			handled = append(handled, o)
		}
	}
	if !slices.Equal(handled, []int64{100, 103, 104, 106, 107, 108, 110, 111}) {
		t.Fatalf("handled %v", handled)
	}

	// Alternating finished and unfinished records: runs would cover about 2,000 of them, so
	// the commit carries a bitmap, which covers all 10,000.
	r := newPartition(t.Context(), "d", 0)
	alternate(r, 0, 10000)
	_, runs, _, _ = r.commitPoint()
	if !strings.HasPrefix(runs, finishedBitsPrefix) || len(runs) > commitMetadataMax {
		t.Fatalf("alternating records: %d bytes of %.30q, want a bitmap within %d", len(runs), runs, commitMetadataMax)
	}
	if got := parseFinished(runs, 0); len(got) != 5000 || got[0] != (offsetRange{1, 2}) || got[4999] != (offsetRange{9999, 10000}) {
		t.Fatalf("bitmap read as %d ranges", len(got))
	}
	if parseFinished(runs, 1) != nil || parseFinished(runs[:len(finishedBitsPrefix)+2]+"!", 0) != nil {
		t.Fatal("a bitmap read for another offset, or a malformed one read")
	}

	// Beyond what a bitmap holds too: it stops under the bound and claims no unfinished record.
	r = newPartition(t.Context(), "d", 0)
	alternate(r, 0, 40000)
	_, runs, _, _ = r.commitPoint()
	if len(runs) > commitMetadataMax {
		t.Fatalf("bitmap of %d bytes", len(runs))
	}
	last := parseFinished(runs, 0)
	if len(last) < 10000 || last[len(last)-1].to > 40000 {
		t.Fatalf("bitmap cut wrongly: %d ranges", len(last))
	}
	for _, rg := range last {
		if rg.from%2 != 1 || rg.to != rg.from+1 {
			t.Fatalf("range %v claims an unfinished record", rg)
		}
	}
}

// alternate takes the records [from, to) into p and finishes the odd ones.
func alternate(p *partition, from, to int64) {
	for o := from; o < to; o++ {
		p.add(&kgo.Record{Offset: o})
		p.begin()
		if o%2 == 1 {
			p.finish(o)
		}
	}
}

// A partition lost and assigned to this sender again (onLost, onAssigned): what its work
// finished since the last commit is passed over, with the committed runs; what it left
// unfinished, and what it never took, is handled.
func TestLostPartitionKeepsWhatItFinished(t *testing.T) {
	lost := newPartition(t.Context(), "d", 0)
	lost.done = []offsetRange{{101, 102}} // finished by the owner before it
	for o := int64(100); o < 108; o++ {
		lost.add(&kgo.Record{Offset: o})
		lost.begin()
	}
	for _, o := range []int64{103, 104, 106} {
		lost.finish(o)
	}
	if got, want := lost.finishedRanges(), []offsetRange{{101, 102}, {103, 105}, {106, 107}}; !slices.Equal(got, want) {
		t.Fatalf("finished ranges %v, want %v", got, want)
	}
	if got := newPartition(t.Context(), "d", 0).finishedRanges(); got != nil {
		t.Fatalf("a partition that took nothing finished %v", got)
	}

	committed := []offsetRange{{100, 101}, {104, 106}}
	again := newPartition(t.Context(), "d", 0)
	again.done = mergeRanges(committed, lost.finishedRanges())
	if want := []offsetRange{{100, 102}, {103, 107}}; !slices.Equal(again.done, want) {
		t.Fatalf("merged %v, want %v", again.done, want)
	}
	var handled []int64
	for o := int64(100); o < 110; o++ {
		if taken, done := again.add(&kgo.Record{Offset: o}); taken && !done {
			handled = append(handled, o)
		}
	}
	if want := []int64{102, 107, 108, 109}; !slices.Equal(handled, want) {
		t.Fatalf("handled %v, want %v", handled, want)
	}
}
