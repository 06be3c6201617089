package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// ErrOffsetExpired: the asked-for offset is older than the log's start (retention removed it).
var ErrOffsetExpired = errors.New("offset is before the start of the log")

// ErrUnavailable marks a failure of Kafka a caller may retry.
var ErrUnavailable = errors.New("dependency unavailable")

const (
	// scanIdle is how long a scan waits for records it knows exist before deciding that the
	// rest of the range was cleaned away (when the broker answered) or failing (when not).
	scanIdle = 5 * time.Second
	// ClockSlack covers clock differences between the platform (event ids), PostgreSQL (commit
	// times) and the producer (record timestamps) when a time is turned into an offset.
	ClockSlack = 5 * time.Minute
	// defaultCountTTL is how long the partition count is kept when Config.CountTTL is 0.
	defaultCountTTL = 30 * time.Second
)

// Config configures a Log.
type Config struct {
	// Topic is the events topic (topics.Names.Events).
	Topic string
	// Checkpoints is cdc's checkpoint topic (topics.Names.Checkpoints), whose newest checkpoint
	// says the partition count cdc publishes with; "" (or no such checkpoint yet): the events
	// topic's own count.
	Checkpoints string
	// Brokers are the Kafka seed brokers of the readers; KafkaOptions extra franz-go options of
	// each (e.g. for tests).
	Brokers      []string
	KafkaOptions []kgo.Opt
	// Admin lists the topic's partitions and offsets.
	Admin *kadm.Client
	// CountTTL is how long Partitions keeps the count it read; 0: 30 seconds.
	CountTTL time.Duration
	// MaxReaders bounds the concurrent reads (Acquire) and the readers kept for continuations.
	MaxReaders int
	// LookupWindow is how long after its id was made an event may reach the events topic (Find).
	LookupWindow time.Duration
	// Scanned counts the records reads examine; nil counts nothing.
	Scanned prometheus.Counter
}

// Log reads the events topic: one partner's partition, from an offset, committed records only.
// Each read uses a short-lived direct consumer, so reads never share a position; at most
// MaxReaders run at once.
type Log struct {
	cfg   Config
	topic string
	sem   chan struct{}

	mu          sync.Mutex
	parts       int32 // PartitionCounts
	partsBefore int32
	partsAt     time.Time
	readers     map[readerKey]*reader // kept for continuations
	closed      bool
}

// New returns a Log of cfg.Topic. It does not contact Kafka until a read needs it.
func New(cfg Config) *Log {
	return &Log{cfg: cfg, topic: cfg.Topic, sem: make(chan struct{}, cfg.MaxReaders), readers: map[readerKey]*reader{}}
}

// Acquire takes a reader slot, waiting at most 10 seconds.
func (l *Log) Acquire(ctx context.Context) (release func(), err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	select {
	case l.sem <- struct{}{}:
		return func() { <-l.sem }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: every events-topic reader is busy", ErrUnavailable)
	}
}

// Partitions is the partition count records.EventPartition needs: the count cdc publishes
// with (PartitionCounts).
func (l *Log) Partitions(ctx context.Context) (int32, error) {
	n, _, err := l.PartitionCounts(ctx)
	return n, err
}

// PartitionCounts is the partition count cdc publishes with, from its newest checkpoint, or the
// events topic's count when no checkpoint names one, and the count cdc published with before
// the last change (0: none known). The topic's count and cdc's differ after partitions were
// added and before cdc's next session, when every partner's events still go where they went
// (design.md section 5). Kept for CountTTL: a stale count only keeps a reader on a partition
// cdc has left, never ahead of cdc.
func (l *Log) PartitionCounts(ctx context.Context) (now, before int32, err error) {
	ttl := l.cfg.CountTTL
	if ttl <= 0 {
		ttl = defaultCountTTL
	}
	l.mu.Lock()
	if l.parts > 0 && time.Since(l.partsAt) < ttl {
		now, before = l.parts, l.partsBefore
		l.mu.Unlock()
		return now, before, nil
	}
	l.mu.Unlock()
	now, before, err = l.publishedPartitions(ctx)
	if err != nil {
		return 0, 0, err
	}
	if now == 0 {
		if now, err = l.topicPartitions(ctx); err != nil {
			return 0, 0, err
		}
	}
	l.mu.Lock()
	l.parts, l.partsBefore, l.partsAt = now, before, time.Now()
	l.mu.Unlock()
	return now, before, nil
}

// topicPartitions is the events topic's partition count in the broker's metadata.
func (l *Log) topicPartitions(ctx context.Context) (int32, error) {
	details, err := l.cfg.Admin.ListTopics(ctx, l.topic)
	if err != nil {
		return 0, fmt.Errorf("%w: describe %s: %v", ErrUnavailable, l.topic, err)
	}
	d, ok := details[l.topic]
	if !ok || d.Err != nil || len(d.Partitions) == 0 {
		return 0, fmt.Errorf("%w: topic %s is missing (run `hookstream topics create`)", ErrUnavailable, l.topic)
	}
	return int32(len(d.Partitions)), nil
}

// checkpointTail is how many offsets before the checkpoint topic's end publishedPartitions
// reads: every cdc transaction ends with a checkpoint and a commit marker, so the newest
// checkpoint is among the last few.
const checkpointTail = 32

// publishedPartitions is EventsPartitions and EventsPartitionsBefore of the newest committed
// checkpoint near the end of the checkpoint topic; 0 when there is none (no Checkpoints topic
// configured, no checkpoint yet, or checkpoints of a cdc that did not write the count).
func (l *Log) publishedPartitions(ctx context.Context) (now, before int32, err error) {
	topic := l.cfg.Checkpoints
	if topic == "" {
		return 0, 0, nil
	}
	starts, err := l.cfg.Admin.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: start offsets of %s: %v", ErrUnavailable, topic, err)
	}
	ends, err := l.cfg.Admin.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: stable offsets of %s: %v", ErrUnavailable, topic, err)
	}
	s, ok1 := starts.Lookup(topic, 0)
	e, ok2 := ends.Lookup(topic, 0)
	if !ok1 || !ok2 || s.Err != nil || e.Err != nil {
		return 0, 0, fmt.Errorf("%w: offsets of %s unavailable", ErrUnavailable, topic)
	}
	if e.Offset <= s.Offset {
		return 0, 0, nil
	}
	from := max(s.Offset, e.Offset-checkpointTail)
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(l.cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(from)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(250 * time.Millisecond),
	}, l.cfg.KafkaOptions...)...)
	if err != nil {
		return 0, 0, fmt.Errorf("eventlog: checkpoint reader: %w", err)
	}
	defer cl.Close()
	for next := from; next < e.Offset; {
		pctx, cancel := context.WithTimeout(ctx, scanIdle)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && ferr == nil {
				ferr = err
			}
		})
		if ferr != nil {
			return 0, 0, fmt.Errorf("%w: read %s: %v", ErrUnavailable, topic, ferr)
		}
		if fs.NumRecords() == 0 {
			if next == from {
				// Not even the commit markers came: the broker did not answer. The topic's
				// count may be ahead of cdc's, so it is no answer either.
				return 0, 0, fmt.Errorf("%w: %s did not answer fetches within %s", ErrUnavailable, topic, scanIdle)
			}
			break // the rest was removed by the cleaner: what was read decides
		}
		for _, r := range fs.Records() {
			next = r.Offset + 1
			if r.Attrs.IsControl() || r.Offset >= e.Offset {
				continue
			}
			var cp records.Checkpoint
			if json.Unmarshal(r.Value, &cp) == nil && cp.EventsPartitions > 0 {
				now, before = cp.EventsPartitions, cp.EventsPartitionsBefore
			}
		}
	}
	return now, before, nil
}

// PartitionOf is the partner's partition and the partition count it was computed with.
func (l *Log) PartitionOf(ctx context.Context, partnerID string) (p, n int32, err error) {
	n, err = l.Partitions(ctx)
	if err != nil {
		return 0, 0, err
	}
	return records.EventPartition(partnerID, n), n, nil
}

// Bounds returns the partition's first offset and its last stable offset: the end of what a
// read_committed reader can see now.
func (l *Log) Bounds(ctx context.Context, p int32) (start, end int64, err error) {
	starts, err := l.cfg.Admin.ListStartOffsets(ctx, l.topic)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: start offsets of %s: %v", ErrUnavailable, l.topic, err)
	}
	ends, err := l.cfg.Admin.ListCommittedOffsets(ctx, l.topic)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: stable offsets of %s: %v", ErrUnavailable, l.topic, err)
	}
	s, ok1 := starts.Lookup(l.topic, p)
	e, ok2 := ends.Lookup(l.topic, p)
	if !ok1 || !ok2 || s.Err != nil || e.Err != nil {
		return 0, 0, fmt.Errorf("%w: offsets of %s/%d unavailable", ErrUnavailable, l.topic, p)
	}
	return s.Offset, e.Offset, nil
}

// OffsetAt is the first offset of partition p whose record was written at or after t (the end
// offset when none was).
func (l *Log) OffsetAt(ctx context.Context, p int32, t time.Time) (int64, error) {
	listed, err := l.cfg.Admin.ListOffsetsAfterMilli(ctx, t.UnixMilli(), l.topic)
	if err != nil {
		return 0, fmt.Errorf("%w: offsets of %s after %s: %v", ErrUnavailable, l.topic, t, err)
	}
	o, ok := listed.Lookup(l.topic, p)
	if !ok || o.Err != nil {
		return 0, fmt.Errorf("%w: offsets of %s/%d after %s unavailable", ErrUnavailable, l.topic, p, t)
	}
	return o.Offset, nil
}

// Scan reads partition p from offset from up to (not including) end, calling fn for each
// committed event record until fn returns false. It returns the offset after the last record it
// examined, so a caller can resume there: control records and aborted records are passed over,
// and a range whose rest holds nothing visible (compacted or aborted) ends at end.
//
// The reader is kept for a while afterwards, positioned at the returned offset with what it
// already fetched: the next page of a feed, or the next step of a log replay, continues where
// this one stopped without fetching and decoding the same record batches again.
func (l *Log) Scan(ctx context.Context, p int32, from, end int64, fn func(*kgo.Record) bool) (int64, error) {
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
		if l.cfg.Scanned != nil {
			l.cfg.Scanned.Add(float64(scanned))
		}
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
				return rd.next, ErrOffsetExpired
			}
			if ferr != nil {
				return rd.next, fmt.Errorf("%w: read %s/%d: %v", ErrUnavailable, l.topic, p, ferr)
			}
			if fs.NumRecords() == 0 {
				// Below the stable offset a fetch returns at once whatever exists. If the broker
				// kept answering fetches and none held a record, the rest of the range is gone
				// (transaction markers and aborted data the cleaner removed): skip to its end.
				// If it did not answer, nothing may be skipped: the read fails instead.
				if rd.fetches.Load()-answered < 2 {
					return rd.next, fmt.Errorf("%w: %s/%d did not answer fetches within %s", ErrUnavailable, l.topic, p, scanIdle)
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

// ReaderIdle is how long a reader is kept for a continuation.
const ReaderIdle = 30 * time.Second

// take returns the kept reader positioned at (p, from), or a new one.
func (l *Log) take(p int32, from int64) (*reader, error) {
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
		kgo.SeedBrokers(l.cfg.Brokers...),
		kgo.WithHooks(rd),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{l.topic: {p: kgo.NewOffset().At(from)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(250 * time.Millisecond),
		kgo.FetchMaxBytes(1 << 20),
		kgo.FetchMaxPartitionBytes(1 << 20),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
	}, l.cfg.KafkaOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("eventlog: reader: %w", err)
	}
	rd.cl = cl
	return rd, nil
}

// put keeps a reader for a continuation at its position, closing readers idle too long and
// the oldest beyond MaxReaders.
func (l *Log) put(rd *reader) {
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

// expireLocked removes the readers idle longer than ReaderIdle and the oldest beyond the cap;
// the caller closes them outside the lock.
func (l *Log) expireLocked(now time.Time) []*reader {
	var out []*reader
	for k, r := range l.readers {
		if now.Sub(r.idle) > ReaderIdle {
			out = append(out, r)
			delete(l.readers, k)
		}
	}
	for len(l.readers) > l.cfg.MaxReaders {
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

// Sweep closes the readers kept too long without a continuation; the owner calls it now and
// then (the admin API's janitor does) until Close.
func (l *Log) Sweep() {
	l.mu.Lock()
	closing := l.expireLocked(time.Now())
	l.mu.Unlock()
	for _, r := range closing {
		r.cl.Close()
	}
}

// Close closes every kept reader; later puts close theirs at once.
func (l *Log) Close() {
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

// Find looks events of one partner up in the events topic by id. The topic has no index by
// key, but an event id is a ULID made inside the transaction that committed the event, so its
// record was written between the id's time and LookupWindow after it: Find reads the
// partner's partition over that span only. Ids not found there are absent from the result
// (older than the feed retention, or never published).
func (l *Log) Find(ctx context.Context, partnerID string, ids []string) (map[string]Event, error) {
	out := map[string]Event{}
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
	release, err := l.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	p, _, err := l.PartitionOf(ctx, partnerID)
	if err != nil {
		return nil, err
	}
	start, end, err := l.Bounds(ctx, p)
	if err != nil {
		return nil, err
	}
	from, err := l.OffsetAt(ctx, p, first.Add(-ClockSlack))
	if err != nil {
		return nil, err
	}
	from = max(from, start)
	stopAfter := last.Add(l.cfg.LookupWindow + ClockSlack)
	_, err = l.Scan(ctx, p, from, end, func(r *kgo.Record) bool {
		if r.Timestamp.After(stopAfter) {
			return false
		}
		if !want[string(r.Key)] {
			return true
		}
		ev, ok := FromRecord(r)
		if ok && ev.PartnerID == partnerID && ev.BodyAgrees() {
			out[ev.EventID] = ev
			delete(want, ev.EventID)
		}
		return len(want) > 0
	})
	if errors.Is(err, ErrOffsetExpired) {
		err = nil // retention moved on while reading: what was found stands
	}
	return out, err
}
