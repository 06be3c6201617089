package retrytopics

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestRuleEncoding(t *testing.T) {
	rules := []releasedRule{
		{},
		{end: 10, steps: []ruleStep{{3, position{1_700_000_000_000_000_000, 3}}}},
		{end: 1 << 40, steps: []ruleStep{{0, position{0, 0}}, {5, position{-1, 5}}}},
		{end: 9, steps: []ruleStep{{2, position{50, 2}}, {4, position{40, 4}}, {8, position{60, 1}}}},
	}
	for _, r := range rules {
		got, err := decodeRule(r.encode())
		if err != nil || !got.equal(r) {
			t.Errorf("rule %+v: encoded %q, decoded %+v, %v", r, r.encode(), got, err)
		}
	}
	// The longest rule fits Kafka's default 4 KiB commit metadata.
	long := releasedRule{end: 1 << 62}
	for i := 0; i < maxRuleSteps; i++ {
		off := int64(1<<61 + i)
		long.steps = append(long.steps, ruleStep{off, position{-1 << 62, off}})
	}
	if n := len(long.encode()); n > 4000 {
		t.Errorf("a rule of %d steps encodes to %d bytes", maxRuleSteps, n)
	}
	bad := []string{
		"member-1234",                   // franz-go's default transactional metadata
		"hsretry1:10",                   // no step
		"hsretry1:10;3,5",               // a field missing
		"hsretry2:10;3,5,3",             // another version
		"hsretry1:ten;3,5,3",            // not a number
		"hsretry1:10;10,5,3",            // a step not below end
		"hsretry1:-1;0,5,0",             // negative end
		"hsretry1:10;4,5,3;4,6,4",       // steps out of order
		"hsretry1:10;3,5,3,extra-field", // too many fields
	}
	for _, s := range bad {
		if r, err := decodeRule(s); err == nil || !r.equal(releasedRule{}) {
			t.Errorf("decodeRule(%q) = %+v, %v; want the zero rule and an error", s, r, err)
		}
	}
}

// rec makes a held record of partition p at offset off, due at due.
func rec(p int32, off, due int64) *heldRecord {
	return &heldRecord{partition: p, pos: position{due: due, offset: off}, size: 100}
}

func step(from, due, off int64) ruleStep { return ruleStep{from, position{due, off}} }

func TestHoldingReleasesInDueOrderAndCommitsLowestHeld(t *testing.T) {
	h := newHolding()
	h.assign(0, commitPoint{offset: 0})
	// A tier holds waits between its own delay and the next tier's: offsets are not in due order.
	for i, due := range []int64{50, 10, 40, 20, 30} {
		if res := h.add(rec(0, int64(i), due)); res != added {
			t.Fatalf("offset %d: %v", i, res)
		}
	}
	if due, ok := h.nextDue(); !ok || due != 10 {
		t.Fatalf("next due %d, %v; want 10", due, ok)
	}
	if got := h.popDue(9, 100, 1<<20); len(got) != 0 {
		t.Fatalf("released %d records before any was due", len(got))
	}
	steps := []struct {
		now      int64
		released []int64 // offsets, in release order
		commit   commitPoint
	}{
		// Offset 1 released; offset 0 (due 50) still held: commit 0, and say what above it
		// was released: below offset 2 what is due before 50, from 2 on before 40, from 3 on
		// before 20.
		{10, []int64{1}, commitPoint{offset: 0, rule: releasedRule{end: 5, steps: []ruleStep{
			step(0, 50, 0), step(2, 40, 2), step(3, 20, 3)}}}},
		{35, []int64{3, 4}, commitPoint{offset: 0, rule: releasedRule{end: 5, steps: []ruleStep{
			step(0, 50, 0), step(2, 40, 2)}}}},
		{45, []int64{2}, commitPoint{offset: 0, rule: releasedRule{end: 5, steps: []ruleStep{step(0, 50, 0)}}}},
		// Everything read is released: resume after it, no rule needed.
		{50, []int64{0}, commitPoint{offset: 5}},
	}
	for _, st := range steps {
		got := h.popDue(st.now, 100, 1<<20)
		if len(got) != len(st.released) {
			t.Fatalf("at %d released %d records, want %v", st.now, len(got), st.released)
		}
		for i, r := range got {
			if r.pos.offset != st.released[i] {
				t.Fatalf("at %d released offset %d, want %v", st.now, r.pos.offset, st.released)
			}
			if r.pos.due > st.now {
				t.Fatalf("at %d released offset %d due at %d: early", st.now, r.pos.offset, r.pos.due)
			}
		}
		points := h.commitPoints(map[int32]bool{0: true})
		if !points[0].equal(st.commit) {
			t.Fatalf("at %d commit point %+v, want %+v", st.now, points[0], st.commit)
		}
		h.committedAt(points)
	}
	if h.count != 0 || h.bytes != 0 {
		t.Fatalf("count %d bytes %d after releasing everything", h.count, h.bytes)
	}
}

func TestHoldingRestartFromRule(t *testing.T) {
	// A previous session committed offset 2 with the rule: below offset 4 what is due before
	// (40, 2) was released, from 4 to 6 what is due before (30, 4).
	h := newHolding()
	h.assign(0, commitPoint{offset: 2, rule: releasedRule{end: 6, steps: []ruleStep{step(2, 40, 2), step(4, 30, 4)}}})
	tests := []struct {
		off, due int64
		want     addResult
	}{
		{1, 5, duplicate},        // below the committed offset
		{2, 40, added},           // the committed offset is the lowest held record
		{3, 35, releasedAlready}, // released above the committed offset
		{4, 30, added},           // the second step's own record
		{5, 31, added},           // due after the second step's threshold
		{5, 29, duplicate},       // offset 5 was read already
		{6, 1, added},            // beyond what the rule speaks of: new
	}
	for _, tt := range tests {
		if got := h.add(rec(0, tt.off, tt.due)); got != tt.want {
			t.Errorf("offset %d due %d: %v, want %v", tt.off, tt.due, got, tt.want)
		}
	}
	h2 := newHolding()
	h2.assign(0, commitPoint{offset: 2, rule: releasedRule{end: 6, steps: []ruleStep{step(2, 40, 2), step(4, 30, 4)}}})
	if got := h2.add(rec(0, 5, 29)); got != releasedAlready {
		t.Errorf("offset 5 due 29: %v, want releasedAlready", got)
	}
}

func TestHoldingCarriesUnreadRule(t *testing.T) {
	// Paused before reading all a previous session released: the next commit must keep
	// saying what the unread part holds.
	h := newHolding()
	h.assign(0, commitPoint{offset: 0, rule: releasedRule{end: 100, steps: []ruleStep{step(0, 600, 0), step(50, 500, 50)}}})
	h.add(rec(0, 0, 600))
	h.add(rec(0, 1, 100)) // released before: skipped
	h.add(rec(0, 2, 700))
	got := h.popDue(650, 10, 1<<20)
	if len(got) != 1 || got[0].pos.offset != 0 {
		t.Fatalf("released %v", got)
	}
	cp, _ := h.parts[0].commitPoint()
	want := commitPoint{offset: 2, rule: releasedRule{end: 100, steps: []ruleStep{
		step(2, 700, 2), // what this session holds
		step(3, 600, 0), // the previous rule from the next unread offset on
		step(50, 500, 50),
	}}}
	if !cp.equal(want) {
		t.Fatalf("commit point %+v, want %+v", cp, want)
	}
}

func TestHoldingLongStaircaseIsCutSafely(t *testing.T) {
	// Later offsets due ever earlier: every held record is a step.
	h := newHolding()
	h.assign(0, commitPoint{offset: 0})
	n := int64(3 * maxRuleSteps)
	for off := int64(0); off < n; off++ {
		h.add(rec(0, off, 10_000-off))
	}
	cp, _ := h.parts[0].commitPoint()
	if len(cp.rule.steps) != maxRuleSteps {
		t.Fatalf("%d steps, want %d", len(cp.rule.steps), maxRuleSteps)
	}
	for off := int64(0); off < n; off++ {
		if cp.rule.covers(position{10_000 - off, off}) {
			t.Fatalf("the cut rule covers held offset %d: it would be lost", off)
		}
	}
}

func TestHoldingRewindAfterAbort(t *testing.T) {
	h := newHolding()
	h.assign(0, commitPoint{offset: -1})
	h.add(rec(0, 10, 5))
	h.add(rec(0, 11, 50))
	h.add(rec(0, 12, 6))
	got := h.popDue(10, 10, 1<<20)
	if len(got) != 2 {
		t.Fatalf("released %d", len(got))
	}
	// The release transaction aborted: back to where consuming started.
	h.rewind()
	if h.count != 0 || h.parts[0].next != 10 {
		t.Fatalf("after rewind: count %d next %d", h.count, h.parts[0].next)
	}
	for _, r := range []*heldRecord{rec(0, 10, 5), rec(0, 11, 50), rec(0, 12, 6)} {
		if res := h.add(r); res != added {
			t.Errorf("offset %d read again: %v", r.pos.offset, res)
		}
	}
	if got := h.popDue(10, 10, 1<<20); len(got) != 2 {
		t.Fatalf("released %d after the rewind, want 2", len(got))
	}
}

// A record of a refused release of several is released alone, so that the broker's refusal of
// one record's batch does not dead-letter its batch-mates (TestRefusedReleaseIsDeadLettered
// is the same on a broker).
func TestHoldingReleasesSuspectsAlone(t *testing.T) {
	h := newHolding()
	h.assign(0, commitPoint{offset: -1})
	h.assign(1, commitPoint{offset: -1})
	suspect := rec(1, 20, 6)
	suspect.alone = true
	for _, r := range []*heldRecord{rec(0, 10, 5), suspect, rec(0, 11, 7), rec(1, 21, 8)} {
		h.add(r)
	}
	var batches [][]int64
	for {
		got := h.popDue(10, 10, 1<<20)
		if len(got) == 0 {
			break
		}
		var offs []int64
		for _, r := range got {
			offs = append(offs, r.pos.offset)
		}
		batches = append(batches, offs)
	}
	if fmt.Sprint(batches) != "[[10] [20] [11 21]]" {
		t.Fatalf("batches %v, want [[10] [20] [11 21]]", batches)
	}
}

// TestHoldingAcrossRestarts replays random tier traffic through sessions that crash at random
// between releases, each new session starting from what the previous one committed, and checks
// that every record is released exactly once, never before it is due.
func TestHoldingAcrossRestarts(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		sim := newTierSim(rng, 4, 400)
		sim.lookAhead = 5 + rng.IntN(60)
		sim.run(t, rng, true)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

// TestHoldingAcrossRestartsAnywhere crashes also between two batches of one release pass
// (overdue records read late still waiting) and before a session has read again all its
// predecessor released. While rules stay within maxRuleSteps this is exactly once too.
func TestHoldingAcrossRestartsAnywhere(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		sim := newTierSim(rng, 3, 300)
		sim.lookAhead = 5 + rng.IntN(30)
		sim.batch = 1 + rng.IntN(4)
		sim.run(t, rng, false)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

// TestHoldingAcrossRestartsCutRules lets rules outgrow maxRuleSteps (a large look-ahead with
// small release batches): cut rules may release a record twice after a crash, never lose one.
func TestHoldingAcrossRestartsCutRules(t *testing.T) {
	dups, records, cut := 0, 0, false
	for seed := uint64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewPCG(seed, 13))
		// Waits shrinking over runs of 150 records: every held record of a run is a step.
		sim := newTierSimWith(rng, 2, 600, func(i int) int64 { return 1000 - 6*int64(i%150) })
		sim.lookAhead = 500
		sim.batch = 4
		sim.allowDups = true
		dups += sim.run(t, rng, false)
		records += 1200
		cut = cut || sim.longestRule > maxRuleSteps
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
	if !cut {
		t.Fatal("no rule outgrew maxRuleSteps: the test does not test cutting")
	}
	t.Logf("%d duplicates over %d records with cut rules and crashes anywhere", dups, records)
}

type simRecord struct {
	produced, due int64
}

// tierSim is one tier topic and the sessions that consume it.
type tierSim struct {
	log       [][]simRecord // per partition, by offset
	lookAhead int
	batch     int
	committed map[int32]commitPoint
	released  map[[2]int64]int
	allowDups bool
	// longestRule is the most steps a commit point needed before cutting.
	longestRule int
}

func newTierSim(rng *rand.Rand, partitions, perPartition int) *tierSim {
	// The tier's delay is 100; it holds waits up to the next tier's, 1000.
	return newTierSimWith(rng, partitions, perPartition, func(int) int64 { return 100 + int64(rng.IntN(900)) })
}

func newTierSimWith(rng *rand.Rand, partitions, perPartition int, wait func(i int) int64) *tierSim {
	s := &tierSim{batch: 1 << 30, committed: map[int32]commitPoint{}, released: map[[2]int64]int{}}
	for p := 0; p < partitions; p++ {
		var recs []simRecord
		at := int64(0)
		for i := 0; i < perPartition; i++ {
			at += int64(rng.IntN(3))
			recs = append(recs, simRecord{produced: at, due: at + wait(i)})
		}
		s.log = append(s.log, recs)
		s.committed[int32(p)] = commitPoint{offset: -1}
	}
	return s
}

// run plays sessions until every record is released and returns the number of duplicates.
// caughtUpCrashes crashes only between release passes of a session that has read again all its
// predecessor released.
func (s *tierSim) run(t *testing.T, rng *rand.Rand, caughtUpCrashes bool) int {
	total := 0
	for _, recs := range s.log {
		total += len(recs)
	}
	now := int64(0)
	for sessions := 0; len(s.released) < total; sessions++ {
		if sessions > 10000 {
			t.Fatalf("%d of %d records released after %d sessions", len(s.released), total, sessions)
		}
		h := newHolding()
		read := map[int32]int64{}
		catchUp := map[int32]int64{}
		for p, cp := range s.committed {
			h.assign(p, cp)
			read[p] = max(cp.offset, 0)
			catchUp[p] = cp.rule.end
		}
		for step := 0; ; step++ {
			now += int64(1 + rng.IntN(20))
			// Poll: read what is produced by now, while the look-ahead has room.
			for p, recs := range s.log {
				pp := int32(p)
				for read[pp] < int64(len(recs)) && recs[read[pp]].produced <= now && h.count < s.lookAhead {
					r := recs[read[pp]]
					h.add(rec(pp, read[pp], r.due))
					read[pp]++
				}
			}
			// Release every due record in batches, each committed, sometimes aborted.
			for {
				batch := h.popDue(now, s.batch, 1<<30)
				if len(batch) == 0 {
					break
				}
				touched := map[int32]bool{}
				for _, r := range batch {
					touched[r.partition] = true
					if r.pos.due > now {
						t.Fatalf("released offset %d due %d at %d", r.pos.offset, r.pos.due, now)
					}
				}
				for p := range touched {
					s.longestRule = max(s.longestRule, h.parts[p].staircaseLen())
				}
				points := h.commitPoints(touched)
				if rng.IntN(20) == 0 { // aborted: the consumer rewinds to the committed offsets
					h.rewind()
					for p, ph := range h.parts {
						read[p] = max(ph.committed.offset, 0)
					}
					break
				}
				for _, r := range batch {
					s.released[[2]int64{int64(r.partition), r.pos.offset}]++
				}
				h.committedAt(points)
				for p, cp := range points {
					s.committed[p] = cp
				}
				if !caughtUpCrashes && rng.IntN(10) == 0 {
					break // crash between two batches of one release pass
				}
			}
			caughtUp := true
			for p, end := range catchUp {
				caughtUp = caughtUp && read[p] >= end
			}
			if (caughtUp || !caughtUpCrashes) && rng.IntN(8) == 0 {
				break // crash (or stop) here; the next session starts from the commits
			}
			if len(s.released) == total {
				break
			}
		}
	}
	dups := 0
	for p, recs := range s.log {
		for off := range recs {
			n := s.released[[2]int64{int64(p), int64(off)}]
			if n == 0 {
				t.Errorf("partition %d offset %d never released", p, off)
			}
			if n > 1 {
				dups += n - 1
				if !s.allowDups {
					t.Errorf("partition %d offset %d released %d times", p, off, n)
				}
			}
		}
	}
	return dups
}

// staircaseLen counts the steps of the partition's own staircase, before any cut.
func (ph *partitionHolding) staircaseLen() int {
	n := 0
	var min position
	for _, r := range ph.byOffset {
		if !r.released && (n == 0 || r.pos.before(min)) {
			min = r.pos
			n++
		}
	}
	return n
}

// recOf is rec with a retry id.
func recOf(off, due int64, id string) *heldRecord {
	r := rec(0, off, due)
	r.id = id
	return r
}

// popAll pops every record due by now and says, per offset, whether it was released ("R") or
// dropped as a copy ("C"); a committed release remembers what it released.
func popAll(h *holding, now int64, commit bool) string {
	got := h.popDue(now, 100, 1<<20)
	out := ""
	for _, r := range got {
		kind := "R"
		if r.copy {
			kind = "C"
		}
		out += fmt.Sprintf("%d%s ", r.pos.offset, kind)
	}
	if commit {
		h.committedAt(h.commitPoints(map[int32]bool{0: true}))
		h.rememberReleased(got)
	}
	return out
}

// Two records of one retry (a repeated Schedule: due times a jitter apart) are released once;
// a copy written after the release at the released due time is dropped too; the sender's next
// hand-off of the same retry after the release (a deferral, due later) is released.
func TestHoldingReleasesARetryOnce(t *testing.T) {
	h := newHolding()
	h.assign(0, commitPoint{offset: 0})
	h.add(recOf(0, 12, "a")) // the first write, due later
	h.add(recOf(1, 10, "a")) // its copy, due earlier: released first
	h.add(recOf(2, 11, "b"))
	if got := popAll(h, 20, true); got != "1R 2R 0C " {
		t.Fatalf("released %q, want 1R 2R 0C", got)
	}
	h.add(recOf(3, 10, "a")) // a copy read after the release, at the released due time
	h.add(recOf(4, 30, "a")) // the sender's next hand-off, read after the release
	h.add(recOf(5, 31, "c"))
	if got := popAll(h, 40, true); got != "3C 4R 5R " {
		t.Fatalf("released %q, want 3C 4R 5R", got)
	}

	// An aborted release forgets nothing it did not commit: both records are read again and
	// one of them is released.
	h = newHolding()
	h.assign(0, commitPoint{offset: 0})
	h.add(recOf(0, 10, "a"))
	h.add(recOf(1, 11, "a"))
	if got := popAll(h, 20, false); got != "0R 1C " {
		t.Fatalf("released %q, want 0R 1C", got)
	}
	h.rewind()
	h.add(recOf(0, 10, "a"))
	h.add(recOf(1, 11, "a"))
	if got := popAll(h, 10, true); got != "0R " {
		t.Fatalf("after the rewind released %q, want 0R", got)
	}
	if got := popAll(h, 20, true); got != "1C " {
		t.Fatalf("after the rewind released %q, want 1C", got)
	}

	// A new session learns a released retry from the committed rule.
	h = newHolding()
	h.assign(0, commitPoint{offset: 0, rule: releasedRule{end: 3, steps: []ruleStep{step(0, 50, 0)}}})
	h.add(recOf(0, 50, "b"))
	h.add(recOf(1, 10, "a")) // released by the previous session
	h.add(recOf(3, 10, "a")) // its copy
	if got := popAll(h, 60, true); got != "3C 0R " {
		t.Fatalf("released %q, want 3C 0R", got)
	}
}

// What a tier remembers of released retries is bounded; a forgotten retry's late copy is
// released (at least once, never lost).
func TestHoldingRemembersABoundedNumber(t *testing.T) {
	h := newHoldingOf(3)
	h.assign(0, commitPoint{offset: 0})
	for i := range int64(5) {
		h.add(recOf(i, i, fmt.Sprint("r", i)))
	}
	popAll(h, 10, true)
	if n := len(h.parts[0].released); n != 3 {
		t.Fatalf("remembers %d released retries, want 3", n)
	}
	h.add(recOf(5, 0, "r0")) // r0 was forgotten
	h.add(recOf(6, 4, "r4"))
	if got := popAll(h, 10, true); got != "5R 6C " {
		t.Fatalf("released %q, want 5R 6C", got)
	}
}
