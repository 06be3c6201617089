package sender

// Finished work above the commit mark, carried in the offset commit's metadata so that a
// partition's next owner does not send it again (design.md section 7, R21).
//
// The committed offset is the lowest unfinished record: records finish out of order across
// endpoints, and one slow or backlogged endpoint's record holds the mark while its partition's
// other endpoints finish thousands of later records. Committing the offset alone, a sender killed
// then made its successor send all of those again: seconds of work whose answers it already had.
// Each commit therefore also states which records from the mark up to the newest taken one are
// finished, as alternating run lengths (unfinished, finished, unfinished, ...; the first is
// empty when the mark is held at a finished record of an open transaction, uncommitted.go), in
// the commit's metadata; the next owner reads it when the partition is assigned and finishes those records
// at intake without sending them. So a killed sender costs what it had in flight, and what
// finished after its last commit (Config.CommitInterval).
//
// Brokers bound the metadata (offset.metadata.max.bytes, 4,096 bytes by default): the runs
// stop at commitMetadataMax, and what lies past the last run is sent again, as before. Where
// finished and unfinished records alternate (endpoints sharing a partition, one of them slow),
// runs cost a few bytes a record; then a bitmap, a bit a record in base64 (about 23,000 records
// in the bound), is written instead, whichever says more. Both name the offset they start from,
// and a reader takes them only when it is the committed offset, so stale or foreign metadata is
// never read as finished work.

import (
	"cmp"
	"encoding/base64"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

const (
	// finishedPrefix begins the metadata of a commit carrying finished runs.
	finishedPrefix = "hookstream.finished.v1:"
	// finishedBitsPrefix begins the metadata of a commit carrying a bitmap of finished records:
	// the mark, a comma, then base64 (URL alphabet, unpadded) of bytes whose bit i (least
	// significant first) says whether offset mark+8×byte+i is finished.
	finishedBitsPrefix = "hookstream.finished.b1:"
	// commitMetadataMax bounds the metadata below the brokers' default limit of 4,096 bytes.
	commitMetadataMax = 4000
)

// offsetRange is the offsets [from, to).
type offsetRange struct{ from, to int64 }

// has reports whether o is a member.
func (s *offsetSet) has(o int64) bool {
	i := o - s.origin
	return s.count > 0 && i >= 0 && i/64 < int64(len(s.words)) && s.words[i/64]&(1<<(i%64)) != 0
}

// runEnd returns the first offset after o, at most to, whose membership differs from o's.
// o must not be below the set's origin (the commit mark, its lowest member, never is).
func (s *offsetSet) runEnd(o, to int64) int64 {
	member := s.has(o)
	for o < to {
		i := o - s.origin
		w := i / 64
		if i < 0 || w >= int64(len(s.words)) {
			if member {
				return o
			}
			if i < 0 {
				o = s.origin
				continue
			}
			return to
		}
		word := s.words[w]
		if !member {
			word = ^word
		}
		shift := uint(i % 64)
		run := bits.TrailingZeros64(^(word >> shift)) // members (or non-members) from o on, in this word
		if run < 64-int(shift) {
			return min(o+int64(run), to)
		}
		o += int64(64 - shift)
	}
	return to
}

// finishedRuns encodes which offsets in [mark, next) are finished, for a commit at mark; ""
// when none is (mark is next): as runs, or as a bitmap where that covers more offsets. The
// caller holds p.mu.
func (p *partition) finishedRuns(mark int64) string {
	next := p.next.Offset
	if mark >= next {
		return ""
	}
	var b strings.Builder
	b.WriteString(finishedPrefix)
	b.WriteString(strconv.FormatInt(mark, 10))
	o := mark
	if !p.unfinished.has(mark) {
		// The mark is held at a finished record of an open transaction (partition.mark): the
		// runs begin with an unfinished one, here empty.
		b.WriteString(",0")
	}
	for o < next {
		end := p.unfinished.runEnd(o, next)
		n := strconv.FormatInt(end-o, 10)
		if b.Len()+1+len(n) > commitMetadataMax {
			break
		}
		b.WriteByte(',')
		b.WriteString(n)
		o = end
	}
	if o < next {
		if bitmap, covered := p.finishedBits(mark, next); covered > o-mark {
			return bitmap
		}
	}
	return b.String()
}

// finishedBits encodes [mark, next) as a bitmap of finished offsets, as many as fit under
// commitMetadataMax, and returns it with how many offsets it covers. The caller holds p.mu.
func (p *partition) finishedBits(mark, next int64) (string, int64) {
	head := finishedBitsPrefix + strconv.FormatInt(mark, 10) + ","
	maxBytes := int64(base64.RawURLEncoding.DecodedLen(commitMetadataMax - len(head)))
	n := min(next-mark, maxBytes*8)
	raw := make([]byte, (n+7)/8)
	for o := mark; o < mark+n; {
		end := p.unfinished.runEnd(o, mark+n)
		if !p.unfinished.has(o) {
			for i := o - mark; i < end-mark; i++ {
				raw[i/8] |= 1 << (i % 8)
			}
		}
		o = end
	}
	return head + base64.RawURLEncoding.EncodeToString(raw), n
}

// parseFinished reads the finished ranges a commit at committed carries in meta; nil when meta
// is not such a commit's (another format, another offset, malformed).
func parseFinished(meta string, committed int64) []offsetRange {
	if rest, ok := strings.CutPrefix(meta, finishedBitsPrefix); ok {
		return parseFinishedBits(rest, committed)
	}
	rest, ok := strings.CutPrefix(meta, finishedPrefix)
	if !ok {
		return nil
	}
	fields := strings.Split(rest, ",")
	if from, err := strconv.ParseInt(fields[0], 10, 64); err != nil || from != committed {
		return nil
	}
	var out []offsetRange
	o := committed
	for i, f := range fields[1:] {
		n, err := strconv.ParseInt(f, 10, 64)
		// Only the first run, the unfinished one at the mark, may be empty.
		if err != nil || n < 0 || (n == 0 && i > 0) || n > 1<<40 {
			return nil
		}
		if i%2 == 1 { // runs alternate unfinished, finished, ...
			out = append(out, offsetRange{o, o + n})
		}
		o += n
	}
	return out
}

// parseFinishedBits reads a bitmap of finished offsets (finishedBitsPrefix) of a commit at
// committed as ranges; nil when it is not one.
func parseFinishedBits(rest string, committed int64) []offsetRange {
	mark, bitmap, ok := strings.Cut(rest, ",")
	if !ok {
		return nil
	}
	if from, err := strconv.ParseInt(mark, 10, 64); err != nil || from != committed {
		return nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(bitmap)
	if err != nil {
		return nil
	}
	var out []offsetRange
	for i := int64(0); i < int64(len(raw))*8; i++ {
		if raw[i/8]&(1<<(i%8)) == 0 {
			continue
		}
		o := committed + i
		if k := len(out) - 1; k >= 0 && out[k].to == o {
			out[k].to = o + 1
		} else {
			out = append(out, offsetRange{o, o + 1})
		}
	}
	return out
}

// finishedBefore reports whether the previous owner committed offset o as finished, dropping the
// ranges intake has passed (offsets come in increasing order). The caller holds p.mu.
func (p *partition) finishedBefore(o int64) bool {
	for len(p.done) > 0 && p.done[0].to <= o {
		p.done = p.done[1:]
	}
	return len(p.done) > 0 && p.done[0].from <= o
}

// finishedRanges returns the offsets this owner took and finished (or passed over as finished
// by its predecessor), from its first record on: what need not be sent again.
func (p *partition) finishedRanges() []offsetRange {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []offsetRange
	for o := p.first; o >= 0 && o < p.next.Offset; {
		end := p.unfinished.runEnd(o, p.next.Offset)
		if !p.unfinished.has(o) {
			out = append(out, offsetRange{o, end})
		}
		o = end
	}
	return out
}

// mergeRanges returns the union of a and b, sorted and without overlaps.
func mergeRanges(a, b []offsetRange) []offsetRange {
	all := append(slices.Clone(a), b...)
	slices.SortFunc(all, func(x, y offsetRange) int { return cmp.Compare(x.from, y.from) })
	var out []offsetRange
	for _, r := range all {
		if k := len(out) - 1; k >= 0 && r.from <= out[k].to {
			out[k].to = max(out[k].to, r.to)
			continue
		}
		out = append(out, r)
	}
	return out
}
