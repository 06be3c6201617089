package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// errOffsetExpired: the asked-for offset is older than the log's start (retention removed it).
var errOffsetExpired = errors.New("offset is before the start of the log")

const (
	// scanIdle is how long a scan waits for records it knows exist before deciding that the
	// rest of the range was cleaned away (when the broker answered) or failing (when not).
	scanIdle = 5 * time.Second
	// clockSlack covers clock differences between the platform (event ids), PostgreSQL (commit
	// times) and the producer (record timestamps) when a time is turned into an offset.
	clockSlack = 5 * time.Minute
	// partitionsTTL is how long the events topic's partition count is cached.
	partitionsTTL = 30 * time.Second
)

// eventLog reads the events topic: one partner's partition, from an offset, committed records
// only. Each read uses a short-lived direct consumer, so reads never share a position; at most
// MaxLogReaders run at once.
type eventLog struct {
	a     *API
	topic string
	sem   chan struct{}

	mu      sync.Mutex
	parts   int32
	partsAt time.Time
	readers map[readerKey]*reader // kept for continuations
	closed  bool
}

func newEventLog(a *API, topic string) *eventLog {
	return &eventLog{a: a, topic: topic, sem: make(chan struct{}, a.cfg.MaxLogReaders), readers: map[readerKey]*reader{}}
}

// acquire takes a reader slot, waiting at most 10 seconds.
func (l *eventLog) acquire(ctx context.Context) (release func(), err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	select {
	case l.sem <- struct{}{}:
		return func() { <-l.sem }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: every events-topic reader is busy", errUnavailable)
	}
}

// partitions is the events topic's partition count, which EventPartition needs.
func (l *eventLog) partitions(ctx context.Context) (int32, error) {
	l.mu.Lock()
	if l.parts > 0 && time.Since(l.partsAt) < partitionsTTL {
		n := l.parts
		l.mu.Unlock()
		return n, nil
	}
	l.mu.Unlock()
	details, err := l.a.adm.ListTopics(ctx, l.topic)
	if err != nil {
		return 0, fmt.Errorf("%w: describe %s: %v", errUnavailable, l.topic, err)
	}
	d, ok := details[l.topic]
	if !ok || d.Err != nil || len(d.Partitions) == 0 {
		return 0, fmt.Errorf("%w: topic %s is missing (run `hookstream topics create`)", errUnavailable, l.topic)
	}
	n := int32(len(d.Partitions))
	l.mu.Lock()
	l.parts, l.partsAt = n, time.Now()
	l.mu.Unlock()
	return n, nil
}

// partitionOf is the partner's partition and the partition count it was computed with.
func (l *eventLog) partitionOf(ctx context.Context, partnerID string) (p, n int32, err error) {
	n, err = l.partitions(ctx)
	if err != nil {
		return 0, 0, err
	}
	return records.EventPartition(partnerID, n), n, nil
}

// bounds returns the partition's first offset and its last stable offset: the end of what a
// read_committed reader can see now.
func (l *eventLog) bounds(ctx context.Context, p int32) (start, end int64, err error) {
	starts, err := l.a.adm.ListStartOffsets(ctx, l.topic)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: start offsets of %s: %v", errUnavailable, l.topic, err)
	}
	ends, err := l.a.adm.ListCommittedOffsets(ctx, l.topic)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: stable offsets of %s: %v", errUnavailable, l.topic, err)
	}
	s, ok1 := starts.Lookup(l.topic, p)
	e, ok2 := ends.Lookup(l.topic, p)
	if !ok1 || !ok2 || s.Err != nil || e.Err != nil {
		return 0, 0, fmt.Errorf("%w: offsets of %s/%d unavailable", errUnavailable, l.topic, p)
	}
	return s.Offset, e.Offset, nil
}

// offsetAt is the first offset of partition p whose record was written at or after t (the end
// offset when none was).
func (l *eventLog) offsetAt(ctx context.Context, p int32, t time.Time) (int64, error) {
	listed, err := l.a.adm.ListOffsetsAfterMilli(ctx, t.UnixMilli(), l.topic)
	if err != nil {
		return 0, fmt.Errorf("%w: offsets of %s after %s: %v", errUnavailable, l.topic, t, err)
	}
	o, ok := listed.Lookup(l.topic, p)
	if !ok || o.Err != nil {
		return 0, fmt.Errorf("%w: offsets of %s/%d after %s unavailable", errUnavailable, l.topic, p, t)
	}
	return o.Offset, nil
}

// scan reads partition p from offset from up to (not including) end, calling fn for each
// committed event record until fn returns false. It returns the offset after the last record it
// examined, so a caller can resume there: control records and aborted records are passed over,
// and a range whose rest holds nothing visible (compacted or aborted) ends at end.
//
// The reader is kept for a while afterwards, positioned at the returned offset with what it
// already fetched: the next page of a feed, or the next step of a log replay, continues where
// this one stopped without fetching and decoding the same record batches again.
func (l *eventLog) scan(ctx context.Context, p int32, from, end int64, fn func(*kgo.Record) bool) (int64, error) {
	if from >= end {
		return from, nil
	}
	rd, err := l.take(p, from)
	if err != nil {
		return from, err
	}
	keep := false
	scanned := 0
	defer func() {
		l.a.metrics.feedRecs.Add(float64(scanned))
		if keep {
			l.put(rd)
		} else {
			rd.cl.Close()
		}
	}()
	for rd.next < end {
		if len(rd.pending) == 0 {
			answered := rd.fetches.Load()
			pctx, cancel := context.WithTimeout(ctx, scanIdle)
			fs := rd.cl.PollFetches(pctx)
			cancel()
			if err := ctx.Err(); err != nil {
				return rd.next, err
			}
			var ferr error
			fs.EachError(func(_ string, _ int32, err error) {
				if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && ferr == nil {
					ferr = err
				}
			})
			if errors.Is(ferr, kerr.OffsetOutOfRange) {
				return rd.next, errOffsetExpired
			}
			if ferr != nil {
				return rd.next, fmt.Errorf("%w: read %s/%d: %v", errUnavailable, l.topic, p, ferr)
			}
			if fs.NumRecords() == 0 {
				// Below the stable offset a fetch returns at once whatever exists. If the broker
				// kept answering fetches and none held a record, the rest of the range is gone
				// (transaction markers and aborted data the cleaner removed): skip to its end.
				// If it did not answer, nothing may be skipped: the read fails instead.
				if rd.fetches.Load()-answered < 2 {
					return rd.next, fmt.Errorf("%w: %s/%d did not answer fetches within %s", errUnavailable, l.topic, p, scanIdle)
				}
				rd.next = end
				break
			}
			rd.pending = fs.Records()
		}
		for len(rd.pending) > 0 {
			r := rd.pending[0]
			if r.Offset < rd.next {
				rd.pending = rd.pending[1:]
				continue
			}
			if r.Offset >= end {
				keep = true
				return rd.next, nil
			}
			rd.pending = rd.pending[1:]
			rd.next = r.Offset + 1
			scanned++
			if !r.Attrs.IsControl() && !fn(r) {
				keep = true
				return rd.next, nil
			}
		}
	}
	keep = true
	return rd.next, nil
}

// reader is a direct consumer of one partition; next is the offset of the next record it
// yields, pending the records it fetched and has not yielded yet.
type reader struct {
	cl      *kgo.Client
	p       int32
	next    int64
	pending []*kgo.Record
	idle    time.Time
	fetches atomic.Int64 // fetch responses read from the broker
}

// OnBrokerRead counts fetch responses (kgo.HookBrokerRead).
func (rd *reader) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == fetchKey && err == nil {
		rd.fetches.Add(1)
	}
}

// fetchKey is the Kafka protocol's API key of Fetch.
const fetchKey = 1

type readerKey struct {
	p    int32
	next int64
}

// readerIdle is how long a reader is kept for a continuation.
const readerIdle = 30 * time.Second

// take returns the kept reader positioned at (p, from), or a new one.
func (l *eventLog) take(p int32, from int64) (*reader, error) {
	l.mu.Lock()
	rd, ok := l.readers[readerKey{p, from}]
	if ok {
		delete(l.readers, readerKey{p, from})
	}
	l.mu.Unlock()
	if ok {
		return rd, nil
	}
	rd = &reader{p: p, next: from}
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(l.a.cfg.Brokers...),
		kgo.WithHooks(rd),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{l.topic: {p: kgo.NewOffset().At(from)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(250 * time.Millisecond),
		kgo.FetchMaxBytes(1 << 20),
		kgo.FetchMaxPartitionBytes(1 << 20),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
	}, l.a.cfg.KafkaOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("admin: events reader: %w", err)
	}
	rd.cl = cl
	return rd, nil
}

// put keeps a reader for a continuation at its position, closing readers idle too long and
// the oldest beyond MaxLogReaders.
func (l *eventLog) put(rd *reader) {
	rd.idle = time.Now()
	var closing []*reader
	l.mu.Lock()
	if l.closed {
		closing = append(closing, rd)
	} else if old, ok := l.readers[readerKey{rd.p, rd.next}]; ok && old != rd {
		closing = append(closing, rd) // another reader already waits there
	} else {
		l.readers[readerKey{rd.p, rd.next}] = rd
	}
	closing = append(closing, l.expireLocked(time.Now())...)
	l.mu.Unlock()
	for _, r := range closing {
		r.cl.Close()
	}
}

// expireLocked removes the readers idle longer than readerIdle and the oldest beyond the cap;
// the caller closes them outside the lock.
func (l *eventLog) expireLocked(now time.Time) []*reader {
	var out []*reader
	for k, r := range l.readers {
		if now.Sub(r.idle) > readerIdle {
			out = append(out, r)
			delete(l.readers, k)
		}
	}
	for len(l.readers) > l.a.cfg.MaxLogReaders {
		var oldest readerKey
		first := true
		for k, r := range l.readers {
			if first || r.idle.Before(l.readers[oldest].idle) {
				oldest, first = k, false
			}
		}
		out = append(out, l.readers[oldest])
		delete(l.readers, oldest)
	}
	return out
}

// sweep closes idle readers; New's janitor calls it until Close.
func (l *eventLog) sweep() {
	l.mu.Lock()
	closing := l.expireLocked(time.Now())
	l.mu.Unlock()
	for _, r := range closing {
		r.cl.Close()
	}
}

// close closes every kept reader; later puts close theirs at once.
func (l *eventLog) close() {
	l.mu.Lock()
	l.closed = true
	readers := l.readers
	l.readers = map[readerKey]*reader{}
	l.mu.Unlock()
	for _, r := range readers {
		r.cl.Close()
	}
}

// eventTime is when an event id was made: its ULID's millisecond.
func eventTime(eventID string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(eventID, "evt_")
	if !ok {
		return time.Time{}, false
	}
	id, err := ulid.ParseStrict(rest)
	if err != nil {
		return time.Time{}, false
	}
	return ulid.Time(id.Time()), true
}

// find looks events of one partner up in the events topic by id. The topic has no index by
// key, but an event id is a ULID made inside the transaction that committed the event, so its
// record was written between the id's time and EventLookupWindow after it: find reads the
// partner's partition over that span only. Ids not found there are absent from the result
// (older than the feed retention, or never published).
func (l *eventLog) find(ctx context.Context, partnerID string, ids []string) (map[string]storedEvent, error) {
	out := map[string]storedEvent{}
	want := map[string]bool{}
	var first, last time.Time
	for _, id := range ids {
		t, ok := eventTime(id)
		if !ok {
			continue
		}
		want[id] = true
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	release, err := l.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	p, _, err := l.partitionOf(ctx, partnerID)
	if err != nil {
		return nil, err
	}
	start, end, err := l.bounds(ctx, p)
	if err != nil {
		return nil, err
	}
	from, err := l.offsetAt(ctx, p, first.Add(-clockSlack))
	if err != nil {
		return nil, err
	}
	from = max(from, start)
	stopAfter := last.Add(l.a.cfg.EventLookupWindow + clockSlack)
	_, err = l.scan(ctx, p, from, end, func(r *kgo.Record) bool {
		if r.Timestamp.After(stopAfter) {
			return false
		}
		if !want[string(r.Key)] {
			return true
		}
		ev, ok := eventFromRecord(r)
		if ok && ev.PartnerID == partnerID && bodyAgrees(ev) {
			out[ev.EventID] = ev
			delete(want, ev.EventID)
		}
		return len(want) > 0
	})
	if errors.Is(err, errOffsetExpired) {
		err = nil // retention moved on while reading: what was found stands
	}
	return out, err
}
