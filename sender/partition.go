package sender

import (
	"context"
	"math/bits"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// partition follows the records of one assigned deliveries partition from intake to finish, so
// the committed offset never passes an unfinished record: records finish out of order across
// endpoints, and the commit mark is the lowest unfinished offset (R21). Unfinished offsets are
// kept as one bit per offset from the lowest unfinished one to the newest, so a record stuck
// while a million later ones finish costs 125 KB, and finishing a record is O(1).
type partition struct {
	topic string
	id    int32

	// stopCtx ends when the partition stops taking work (revoke, loss, shutdown): waits for a
	// rate limit or an ordered backoff end at once. ctx ends when what is still running is
	// abandoned: requests and produces are cancelled.
	stopCtx  context.Context
	stopWork context.CancelFunc
	ctx      context.Context
	cancel   context.CancelFunc

	mu         sync.Mutex
	stopped    bool
	unfinished offsetSet         // intaken and not finished
	epochs     []kgo.EpochOffset // leader epoch changes: the epoch in force from each offset on
	next       kgo.EpochOffset   // one past the last intaken record; Offset < 0 before the first
	first      int64             // the first intaken record's offset; -1 before it
	committed  int64             // the last offset this owner committed; -1 before the first
	// finishes counts the records finished; committedFinishes is its value at the last
	// successful commit, so a commit goes out when the mark or the finished runs above it moved.
	finishes, committedFinishes uint64
	// done: offsets the previous owner committed as finished above its mark (finished.go),
	// finished at intake without a request.
	done   []offsetRange
	active int             // records being handled now (not merely queued)
	idle   []chan struct{} // closed when active drops to zero

	// Records intake has taken and routed, waiting for their partner's feeder to offer them
	// to their lanes in offset order (Sender.feed): a feeder per partner, so one partner's
	// full lanes never hold back another partner's records (design.md section 7).
	feedMu      sync.Mutex
	feeds       map[string]*feed // by partner id
	feedLen     int              // records in all feeds
	feedPaused  bool             // the feeds hold partitionWaitCap records
	sharePaused bool             // a partner alone on the partition is over its share (takeShare)
	fetchPaused bool             // fetching the partition is paused, for either reason
	// The endpoint of the partition's first record, and whether another endpoint's records have
	// come since: a partition that carries one endpoint's work only has nobody to hold back.
	firstEndpoint string
	shared        bool
	// partnersSeen: when a record of each partner was last taken (seePartner).
	partnersSeen   map[string]time.Time
	partnersPruned time.Time

	// txns follows the partition's transactions for intake (uncommitted.go); the sender keeps
	// it across assignments.
	txns *txnWatch
	// openTxns: by producer id, the offset of the first record taken of its transaction still
	// open, below which no commit goes (mark, uncommitted.go).
	openTxns map[int64]int64
}

// feed is one partner's records of a partition waiting to be offered to their lanes.
type feed struct {
	q       []*work
	count   map[string]int // records in q by endpoint
	running bool           // a feeder runs
}

func newPartition(parent context.Context, topic string, id int32) *partition {
	p := &partition{topic: topic, id: id, next: kgo.EpochOffset{Epoch: -1, Offset: -1}, first: -1, committed: -1}
	p.ctx, p.cancel = context.WithCancel(parent)
	p.stopCtx, p.stopWork = context.WithCancel(p.ctx)
	return p
}

// add registers an intaken record; false once the partition has stopped. done says the
// previous owner finished it already (finished.go): it is passed over, not handled.
func (p *partition) add(r *kgo.Record) (taken, done bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || r.Offset < p.next.Offset {
		return false, false // stopped, or a record seen before (never expected from one assignment)
	}
	done = p.finishedBefore(r.Offset)
	if !done {
		p.unfinished.add(r.Offset)
	}
	if p.first < 0 {
		p.first = r.Offset
	}
	if n := len(p.epochs); n == 0 || p.epochs[n-1].Epoch != r.LeaderEpoch {
		p.epochs = append(p.epochs, kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset})
	}
	p.next = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
	if done {
		p.finishes++
	}
	return true, done
}

// begin marks a record as being handled; false once the partition has stopped, in which case
// the record must be left alone (its next owner handles it).
func (p *partition) begin() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.active++
	return true
}

// finish marks the handled record at offset as done: its outcome is durably in Kafka.
func (p *partition) finish(offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unfinished.remove(offset)
	p.finishes++
	p.endActive()
}

// pass finishes the record at offset at intake, without handling it: the copy of a record
// already delivered (uncommitted.go).
func (p *partition) pass(offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unfinished.remove(offset)
	p.finishes++
}

// abandon ends the handling of a record without finishing it: it stays unfinished, so the
// commit mark never passes it.
func (p *partition) abandon() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endActive()
}

func (p *partition) endActive() {
	p.active--
	if p.active == 0 {
		for _, ch := range p.idle {
			close(ch)
		}
		p.idle = nil
	}
}

// mark returns the offset to commit: the lowest unfinished record, or one past the last
// intaken record when all are finished, but never past the first record taken of a
// transaction still open (uncommitted.go), which may be finished. ok is false before the first
// record, and when the mark is not past what this owner committed already.
func (p *partition) mark() (eo kgo.EpochOffset, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next.Offset < 0 {
		return eo, false
	}
	eo = p.next
	if low, ok := p.unfinished.min(); ok {
		eo = kgo.EpochOffset{Epoch: p.epochAt(low), Offset: low}
	}
	for _, first := range p.openTxns {
		if first < eo.Offset {
			eo = kgo.EpochOffset{Epoch: p.epochAt(first), Offset: first}
		}
	}
	return eo, eo.Offset > p.committed
}

// txnRecord notes a record taken of producer's open transaction at offset.
func (p *partition) txnRecord(producer, offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.openTxns[producer]; ok {
		return
	}
	if p.openTxns == nil {
		p.openTxns = make(map[int64]int64)
	}
	p.openTxns[producer] = offset
}

// txnEnded notes the marker of producer's transaction: it no longer holds the mark back.
func (p *partition) txnEnded(producer int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.openTxns, producer)
}

// commitPoint returns what to commit: the mark, the finished runs above it (finished.go) and
// the finish count they reflect; ok is false when neither moved since the last commit.
func (p *partition) commitPoint() (eo kgo.EpochOffset, runs string, finishes uint64, ok bool) {
	eo, moved := p.mark()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next.Offset < 0 {
		return eo, "", 0, false
	}
	return eo, p.finishedRuns(eo.Offset), p.finishes, moved || p.finishes > p.committedFinishes
}

// committedAt records a successful commit of offset, with the finishes its runs reflect.
func (p *partition) committedAt(offset int64, finishes ...uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if offset > p.committed {
		p.committed = offset
	}
	for _, f := range finishes {
		p.committedFinishes = max(p.committedFinishes, f)
	}
}

// stop ends intake for the partition; records queued but not begun are then left alone.
func (p *partition) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.stopWork()
}

func (p *partition) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// waitIdle waits until no record is being handled, or until the deadline; it reports whether
// the partition went idle.
func (p *partition) waitIdle(deadline time.Time) bool {
	p.mu.Lock()
	if p.active == 0 {
		p.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	p.idle = append(p.idle, ch)
	p.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// epochAt returns the leader epoch of the record at offset, and forgets the epoch changes
// before it, which no mark can need again (marks only move forward). The caller holds mu.
func (p *partition) epochAt(offset int64) int32 {
	i := 0
	for i+1 < len(p.epochs) && p.epochs[i+1].Offset <= offset {
		i++
	}
	p.epochs = p.epochs[i:]
	return p.epochs[0].Epoch
}

// offsetSet is a set of offsets added in increasing order and removed in any order, as one
// bit per offset from the lowest member's 64-aligned word on.
type offsetSet struct {
	origin int64    // the offset of bit 0 of words[0]
	words  []uint64 // bit i of words[j] set: origin + 64j + i is a member
	count  int
}

// add inserts o, which is above every offset added before.
func (s *offsetSet) add(o int64) {
	if s.count == 0 {
		s.origin, s.words = o&^63, s.words[:0]
	}
	i := o - s.origin
	for int64(len(s.words)) <= i/64 {
		s.words = append(s.words, 0)
	}
	s.words[i/64] |= 1 << (i % 64)
	s.count++
}

// remove deletes o if it is a member.
func (s *offsetSet) remove(o int64) {
	i := o - s.origin
	if i < 0 || i/64 >= int64(len(s.words)) || s.words[i/64]&(1<<(i%64)) == 0 {
		return
	}
	s.words[i/64] &^= 1 << (i % 64)
	s.count--
	// Drop leading empty words, so min stays cheap and memory follows the lowest member.
	n := 0
	for n < len(s.words) && s.words[n] == 0 {
		n++
	}
	if n > 0 {
		s.words = s.words[n:]
		s.origin += 64 * int64(n)
	}
}

// min returns the lowest member.
func (s *offsetSet) min() (int64, bool) {
	if s.count == 0 {
		return 0, false
	}
	return s.origin + int64(bits.TrailingZeros64(s.words[0])), true
}

// queueFeed appends w to the records waiting for its partner's feeder and reports whether a
// feeder must be started for them. The caller holds feedMu.
func (p *partition) queueFeed(w *work) (f *feed, start bool) {
	id := w.d.EndpointID
	switch {
	case p.firstEndpoint == "":
		p.firstEndpoint = id
	case id != p.firstEndpoint:
		p.shared = true
	}
	if p.feeds == nil {
		p.feeds = map[string]*feed{}
	}
	f = p.feeds[w.d.PartnerID]
	if f == nil {
		f = &feed{count: map[string]int{}}
		p.feeds[w.d.PartnerID] = f
	}
	f.count[id]++
	f.q = append(f.q, w)
	p.feedLen++
	start = !f.running
	f.running = true
	return f, start
}

// takeFeed removes and returns the first record waiting in f, nil when none is left (the
// feeder then ends, and the partner's next record starts another). The caller holds feedMu.
func (p *partition) takeFeed(partner string, f *feed) *work {
	if len(f.q) == 0 {
		f.running = false
		delete(p.feeds, partner)
		return nil
	}
	w := f.q[0]
	f.q[0] = nil
	f.q = f.q[1:]
	p.feedLen--
	id := w.d.EndpointID
	if f.count[id]--; f.count[id] <= 0 {
		delete(f.count, id)
	}
	return w
}

// holdsBack reports whether waiting for room in w's lane would hold back another endpoint's
// records of this partition: some of w's partner wait behind in its feeder (another partner's
// have a feeder of their own), or fetching is paused on a partition that has carried other
// endpoints' records, whose next ones may be unfetched behind.
func (p *partition) holdsBack(w *work) bool {
	p.feedMu.Lock()
	defer p.feedMu.Unlock()
	f := p.feeds[w.d.PartnerID]
	return f != nil && len(f.q) > f.count[w.d.EndpointID] || p.fetchPaused && p.shared
}

// seePartner notes that a record of partner was taken now, and reports whether another
// partner's record was taken within about partnerSeenWindow (partners are forgotten every tenth
// of it, so a record costs no walk over them).
func (p *partition) seePartner(partner string, now time.Time) (others bool) {
	p.feedMu.Lock()
	defer p.feedMu.Unlock()
	if p.partnersSeen == nil {
		p.partnersSeen = map[string]time.Time{}
	}
	if now.Sub(p.partnersPruned) > partnerSeenWindow/10 {
		p.partnersPruned = now
		for id, at := range p.partnersSeen {
			if now.Sub(at) > partnerSeenWindow {
				delete(p.partnersSeen, id)
			}
		}
	}
	p.partnersSeen[partner] = now
	return len(p.partnersSeen) > 1
}
