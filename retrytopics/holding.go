package retrytopics

import (
	"container/heap"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// This file holds a tier's look-ahead buffer and its offset bookkeeping, with no Kafka I/O, so
// the rules that make holding safe can be tested on their own.
//
// A tier holds waits between its own delay and the next tier's, so the records of one partition
// are not in due order, and a record released now may sit above an older one still held. The
// committed offset of a partition is therefore its lowest held offset, and the records above it
// that were already released are described in the commit's metadata by a releasedRule.
//
// The rule is a staircase over offsets: at offset o, a record was released iff it is due before
// the earliest record still held at or below o (the prefix minimum). Never losing a record needs
// only that no held record is covered, which holds by construction. Exactness (no record
// released twice after a restart) follows from releasing in due order: when a record was
// released, every record held at a lower offset was already read and was due later. Records are
// read in offset order, so a record read after that release (possibly due earlier) sits above
// it and does not lower its threshold. A staircase longer than maxRuleSteps is cut short by
// merging its tail into its lowest step: still safe, at worst a few records are released twice
// after a restart.
//
// Copies. A sender that repeats a Schedule or Defer whose first write landed unseen (a broker
// interruption) leaves two records of one scheduled retry in a tier, byte for byte the same or
// with due times a jitter apart. A retry is one (delivery id, attempt number, trigger,
// deferrals): its retryID. The first record of a retry to fall due is released; a later record
// of it is a copy when it was read before that release, or has exactly the released record's
// due time. A copy is popped in its turn like any record (so the rules above are untouched) but
// released to nowhere. Reading order is safe: a record read before the release was written
// before it, so it cannot be the sender's next hand-off of the retry (a deferral that met an
// open circuit keeps the retry's id), since the sender sees a release only once its
// transaction committed; that hand-off is due after the release, never at the released due
// time to the nanosecond. A copy is dropped only by a committed release, with its original or
// after it: an abort reads both again. The tier remembers the last maxRemembered released
// retries, per partition, with their due time and the read position at the release (the mark);
// a new session learns a released retry from a record the committed rule says was released. A
// copy whose original was forgotten, or was released by an earlier session below the committed
// offset, is released again: at least once, never lost.

// position orders the records of one partition: by due time, then by offset.
type position struct {
	due    int64 // unix nanoseconds
	offset int64
}

func (a position) before(b position) bool {
	return a.due < b.due || a.due == b.due && a.offset < b.offset
}

// ruleStep says: from offset `from` on (up to the next step), records due before min were
// released.
type ruleStep struct {
	from int64
	min  position
}

// releasedRule says which records above a committed offset were released already: a record at
// offset o below end was released iff its position is before the min of the last step at or
// below o. The zero rule covers nothing.
type releasedRule struct {
	end   int64
	steps []ruleStep // increasing from
}

// threshold returns the min in force at offset off.
func (r releasedRule) threshold(off int64) (position, bool) {
	i, found := -1, false
	for j := len(r.steps) - 1; j >= 0; j-- {
		if r.steps[j].from <= off {
			i, found = j, true
			break
		}
	}
	if !found {
		return position{}, false
	}
	return r.steps[i].min, true
}

func (r releasedRule) covers(p position) bool {
	if p.offset >= r.end {
		return false
	}
	min, ok := r.threshold(p.offset)
	return ok && p.before(min)
}

func (r releasedRule) equal(o releasedRule) bool {
	if r.end != o.end || len(r.steps) != len(o.steps) {
		return false
	}
	for i := range r.steps {
		if r.steps[i] != o.steps[i] {
			return false
		}
	}
	return true
}

// maxRuleSteps bounds a rule so its encoding (about 45 bytes a step) stays well below Kafka's
// default 4 KiB limit on offset-commit metadata.
const maxRuleSteps = 64

// ruleVersion starts the encoding of a releasedRule in offset-commit metadata.
const ruleVersion = "hsretry1"

// encode writes the rule as commit metadata, "hsretry1:<end>;<from>,<due unix ns>,<offset>;...",
// or "" for the zero rule.
func (r releasedRule) encode() string {
	if r.end <= 0 || len(r.steps) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(ruleVersion)
	b.WriteByte(':')
	b.WriteString(strconv.FormatInt(r.end, 10))
	for _, s := range r.steps {
		fmt.Fprintf(&b, ";%d,%d,%d", s.from, s.min.due, s.min.offset)
	}
	return b.String()
}

// decodeRule reads encode's output. Empty metadata is the zero rule; metadata in another form
// (such as franz-go's default, the member id) is the zero rule with an error, so the caller can
// say so: every record above the committed offset is then read as not yet released (at least
// once, never lost).
func decodeRule(s string) (releasedRule, error) {
	if s == "" {
		return releasedRule{}, nil
	}
	head, body, ok := strings.Cut(s, ";")
	version, endText, ok2 := strings.Cut(head, ":")
	if !ok || !ok2 || version != ruleVersion {
		return releasedRule{}, fmt.Errorf("commit metadata %q is not a %s rule", s, ruleVersion)
	}
	bad := func(why string) (releasedRule, error) {
		return releasedRule{}, fmt.Errorf("commit metadata %q: %s", s, why)
	}
	end, err := strconv.ParseInt(endText, 10, 64)
	if err != nil || end <= 0 {
		return bad("bad end offset")
	}
	r := releasedRule{end: end}
	for _, step := range strings.Split(body, ";") {
		f := strings.Split(step, ",")
		if len(f) != 3 {
			return bad("bad step")
		}
		var n [3]int64
		for i := range f {
			if n[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
				return bad("bad number")
			}
		}
		st := ruleStep{from: n[0], min: position{due: n[1], offset: n[2]}}
		if st.from < 0 || st.from >= end || st.min.offset < 0 || len(r.steps) > 0 && st.from <= r.steps[len(r.steps)-1].from {
			return bad("steps out of order or range")
		}
		r.steps = append(r.steps, st)
	}
	if len(r.steps) > maxRuleSteps {
		return bad("too many steps")
	}
	return r, nil
}

// commitPoint is what is committed for a partition: the offset to resume reading at, and the
// rule for released records above it. offset -1: nothing committed, reading starts wherever
// the consumer's reset offset says.
type commitPoint struct {
	offset int64
	rule   releasedRule
}

func (c commitPoint) equal(o commitPoint) bool { return c.offset == o.offset && c.rule.equal(o.rule) }

// heldRecord is one tier record waiting in memory for its due time.
type heldRecord struct {
	partition int32
	pos       position
	key       []byte
	value     []byte
	headers   []kgo.RecordHeader
	size      int
	// deadReason, when set, sends the record to the dlq instead of the deliveries topic; such
	// records are due at once.
	deadReason string
	// deadBare drops the original value from the dead letter (the dlq refused it whole).
	deadBare bool
	// alone: the record was in a refused release of several; it is released in a transaction
	// of its own, to learn whether it is the one refused.
	alone bool
	// id is the record's retry (retryID); empty for a record that is not a readable delivery.
	id string
	// copy, set when popped: another record of the same retry was released first, so this one
	// is committed as released without being written anywhere.
	copy bool
	// mark, set when popped and not a copy: the partition's next read offset at the release.
	mark int64

	released bool // popped; still listed in byOffset until compacted away
}

// recordOverhead approximates a held record's memory beyond its key, value and headers.
const recordOverhead = 160

// partitionHolding is the state of one assigned partition.
type partitionHolding struct {
	id int32
	// next is the next offset to read; -1 until the first record when nothing was committed.
	next int64
	// committed is the last commit point that reached Kafka (from the group's offsets or our
	// last committed transaction); an aborted transaction rewinds to it.
	committed commitPoint
	// skip is the rule of the commit this session started from: records it covers were
	// released before and are skipped when read again.
	skip  releasedRule
	byDue dueHeap
	// byOffset lists the held records in offset order (records are read in that order);
	// released ones stay until they are at the front or make up half of the list.
	byOffset []*heldRecord
	dead     int
	bytes    int
	// released remembers the retries released (committed) in this session: a record of one
	// of them below its mark or at its due time is a copy. order lists them in release order,
	// for forgetting.
	released map[string]releasedRetry
	order    []string
}

// releasedRetry is what a partition remembers of a released retry.
type releasedRetry struct {
	mark int64 // records below it were read before the release
	due  int64
}

// copyOf reports whether r is a copy of a retry ph released.
func (ph *partitionHolding) copyOf(r *heldRecord) bool {
	rr, ok := ph.released[r.id]
	return ok && (r.pos.offset < rr.mark || r.pos.due == rr.due)
}

func (ph *partitionHolding) held() int { return len(ph.byDue) }

// holding is a tier's look-ahead buffer over its assigned partitions.
type holding struct {
	parts map[int32]*partitionHolding
	count int
	bytes int
	// maxRemembered bounds the released retries remembered over all partitions (each partition
	// keeps its share).
	maxRemembered int
}

// defaultMaxRemembered bounds the released retries a holding remembers (about 100 bytes each).
const defaultMaxRemembered = 20000

func newHolding() *holding { return newHoldingOf(defaultMaxRemembered) }

// newHoldingOf returns a holding remembering at most maxRemembered released retries (at least
// one).
func newHoldingOf(maxRemembered int) *holding {
	return &holding{parts: map[int32]*partitionHolding{}, maxRemembered: max(maxRemembered, 1)}
}

// assign starts holding partition p from its committed point (replacing any state of p).
func (h *holding) assign(p int32, cp commitPoint) {
	h.drop(p)
	ph := &partitionHolding{id: p, next: -1, committed: commitPoint{offset: -1}}
	if cp.offset >= 0 {
		ph.next, ph.committed, ph.skip = cp.offset, cp, cp.rule
	}
	h.parts[p] = ph
}

// drop forgets partitions (revoked or lost): their records are read again by their next owner
// from what was committed.
func (h *holding) drop(ps ...int32) {
	for _, p := range ps {
		if ph := h.parts[p]; ph != nil {
			h.count -= ph.held()
			h.bytes -= ph.bytes
			delete(h.parts, p)
		}
	}
}

// dropAll forgets every partition.
func (h *holding) dropAll() {
	clear(h.parts)
	h.count, h.bytes = 0, 0
}

// addResult says what add did with a record.
type addResult int

const (
	added           addResult = iota // held until due
	duplicate                        // read before in this session (a rewind re-delivered it)
	releasedAlready                  // released by an earlier session (the committed rule covers it)
)

// add takes a record just read; records of a partition arrive in offset order.
func (h *holding) add(r *heldRecord) addResult {
	ph := h.parts[r.partition]
	if ph == nil {
		ph = &partitionHolding{id: r.partition, next: -1, committed: commitPoint{offset: -1}}
		h.parts[r.partition] = ph
	}
	off := r.pos.offset
	if ph.next >= 0 && off < ph.next {
		return duplicate
	}
	if ph.committed.offset < 0 {
		// Nothing committed: the consumer started here, and an abort rewinds to here.
		ph.committed.offset = off
	}
	ph.next = off + 1
	covered := ph.skip.covers(r.pos)
	if ph.next >= ph.skip.end {
		ph.skip = releasedRule{} // every record the rule speaks of has been read
	}
	if covered {
		if r.id != "" {
			// Released by an earlier session: a record of the same retry read before it
			// (below it) is a copy.
			h.remember(ph, r.id, releasedRetry{mark: off + 1, due: r.pos.due})
		}
		return releasedAlready
	}
	heap.Push(&ph.byDue, r)
	ph.byOffset = append(ph.byOffset, r)
	ph.bytes += r.size
	h.count++
	h.bytes += r.size
	return added
}

// nextDue returns the earliest due time held.
func (h *holding) nextDue() (int64, bool) {
	var best int64
	ok := false
	for _, ph := range h.parts {
		if len(ph.byDue) > 0 && (!ok || ph.byDue[0].pos.due < best) {
			best, ok = ph.byDue[0].pos.due, true
		}
	}
	return best, ok
}

// popDue removes and returns up to maxN records due at or before now (and about maxBytes), in
// due order across partitions. A record marked alone comes in a batch of its own. A record of a
// retry released before it, in an earlier committed release or earlier in this batch, comes
// marked copy.
func (h *holding) popDue(now int64, maxN, maxBytes int) []*heldRecord {
	var out []*heldRecord
	var inBatch map[string]bool // retries released by this batch (a retry lives in one partition)
	size := 0
	for len(out) < maxN && (size < maxBytes || len(out) == 0) {
		var best *partitionHolding
		for _, ph := range h.parts {
			if len(ph.byDue) > 0 && ph.byDue[0].pos.due <= now && (best == nil || ph.byDue[0].pos.before(best.byDue[0].pos)) {
				best = ph
			}
		}
		if best == nil || best.byDue[0].alone && len(out) > 0 {
			break // a record to release alone waits for a batch of its own
		}
		r := heap.Pop(&best.byDue).(*heldRecord)
		best.release(r)
		if r.id != "" {
			if inBatch[r.id] || best.copyOf(r) {
				r.copy = true
			} else {
				if inBatch == nil {
					inBatch = map[string]bool{}
				}
				inBatch[r.id], r.mark = true, best.next
			}
		}
		h.count--
		h.bytes -= r.size
		size += r.size
		out = append(out, r)
		if r.alone {
			break
		}
	}
	return out
}

// release takes a popped record out of the offset list, lazily.
func (ph *partitionHolding) release(r *heldRecord) {
	r.released = true
	ph.bytes -= r.size
	ph.dead++
	if ph.dead > 32 && 2*ph.dead > len(ph.byOffset) {
		live := ph.byOffset[:0]
		for _, x := range ph.byOffset {
			if !x.released {
				live = append(live, x)
			}
		}
		clear(ph.byOffset[len(live):])
		ph.byOffset, ph.dead = live, 0
		return
	}
	i := 0
	for i < len(ph.byOffset) && ph.byOffset[i].released {
		ph.byOffset[i] = nil
		i++
	}
	ph.byOffset, ph.dead = ph.byOffset[i:], ph.dead-i
}

// commitPoint is the point to commit for p after its released records leave memory: resume at
// the lowest held offset (or the next unread one), and describe what above it was released.
func (ph *partitionHolding) commitPoint() (commitPoint, bool) {
	if ph.next < 0 {
		return commitPoint{}, false
	}
	cp := commitPoint{offset: ph.next}
	var steps []ruleStep
	for _, r := range ph.byOffset {
		if r.released {
			continue
		}
		if len(steps) == 0 {
			cp.offset = r.pos.offset
		}
		if len(steps) == 0 || r.pos.before(steps[len(steps)-1].min) {
			steps = append(steps, ruleStep{from: r.pos.offset, min: r.pos})
		}
	}
	end := ph.next
	if ph.skip.end > ph.next {
		// Part of what the previous session released is not read again yet: keep saying so.
		if min, ok := ph.skip.threshold(ph.next); ok {
			steps = append(steps, ruleStep{from: ph.next, min: min})
		}
		for _, st := range ph.skip.steps {
			if st.from > ph.next {
				steps = append(steps, st)
			}
		}
		end = ph.skip.end
	}
	if len(steps) > maxRuleSteps {
		// Merge the tail into its lowest min: a lower threshold only ever claims fewer records
		// released.
		tail := steps[maxRuleSteps-1]
		for _, st := range steps[maxRuleSteps:] {
			if st.min.before(tail.min) {
				tail.min = st.min
			}
		}
		steps = append(steps[:maxRuleSteps-1], tail)
	}
	if len(steps) > 0 {
		cp.rule = releasedRule{end: end, steps: steps}
	}
	return cp, true
}

// commitPoints returns the commit points of the given partitions that differ from what is
// committed.
func (h *holding) commitPoints(ps map[int32]bool) map[int32]commitPoint {
	out := make(map[int32]commitPoint, len(ps))
	for p := range ps {
		ph := h.parts[p]
		if ph == nil {
			continue
		}
		if cp, ok := ph.commitPoint(); ok && !cp.equal(ph.committed) {
			out[p] = cp
		}
	}
	return out
}

// committedAt records that points reached Kafka.
func (h *holding) committedAt(points map[int32]commitPoint) {
	for p, cp := range points {
		if ph := h.parts[p]; ph != nil {
			ph.committed = cp
		}
	}
}

// rememberReleased notes the retries a committed release released.
func (h *holding) rememberReleased(batch []*heldRecord) {
	for _, r := range batch {
		if ph := h.parts[r.partition]; ph != nil && r.id != "" && !r.copy {
			h.remember(ph, r.id, releasedRetry{mark: r.mark, due: r.pos.due})
		}
	}
}

// remember notes that retry id of ph was released; beyond its share of maxRemembered, ph
// forgets its oldest.
func (h *holding) remember(ph *partitionHolding, id string, rr releasedRetry) {
	if ph.released == nil {
		ph.released = map[string]releasedRetry{}
	}
	if _, ok := ph.released[id]; !ok {
		ph.order = append(ph.order, id)
	}
	ph.released[id] = rr
	limit := max(h.maxRemembered/max(len(h.parts), 1), 1)
	i := 0
	for ; len(ph.order)-i > limit; i++ {
		delete(ph.released, ph.order[i])
	}
	if i > 0 {
		clear(ph.order[:i])
		ph.order = ph.order[i:]
	}
}

// rewind returns every partition to its committed point after an aborted transaction: the
// consumer reads again from there, and nothing held survives. The released retries it
// remembers stay: those releases committed.
func (h *holding) rewind() {
	for _, ph := range h.parts {
		ph.byDue, ph.byOffset, ph.dead, ph.bytes = nil, nil, 0, 0
		ph.next, ph.skip = ph.committed.offset, ph.committed.rule
		if ph.next < 0 {
			ph.skip = releasedRule{}
		}
	}
	h.count, h.bytes = 0, 0
}

// dueHeap orders held records by position.
type dueHeap []*heldRecord

func (q dueHeap) Len() int           { return len(q) }
func (q dueHeap) Less(i, j int) bool { return q[i].pos.before(q[j].pos) }
func (q dueHeap) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *dueHeap) Push(x any)        { *q = append(*q, x.(*heldRecord)) }
func (q *dueHeap) Pop() any {
	old := *q
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return r
}
