package retrytopics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/internal/periodic"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/internal/tracing"
)

// Tier consumes one retry tier topic and releases each record to the deliveries topic once it
// is due, never before (design.md section 8).
//
// Holding: records wait in a bounded look-ahead buffer sorted by due time; a partition whose
// share of the buffer is full is paused, so records beyond the buffer stay in Kafka. The poll
// loop never sleeps: each poll's deadline is the next due time (at most MaxPollWait).
//
// Releasing: released records and the tier's offsets are written in one Kafka transaction of a
// franz-go GroupTransactSession, so a crash between the two releases nothing twice. The
// committed offset of a partition is its lowest held offset; the commit's metadata says which
// records above it were already released (see holding.go), so a restart or rebalance neither
// loses a held record nor releases a released one again. A transaction aborted by a rebalance
// rewinds the tier to its committed offsets and the records are read again.
type Tier struct {
	cfg   Config
	route tierRoute
	names topics.Names
	group string
	txnID string
	log   *slog.Logger
	m     *retryMetrics
	// tracer is nil when tracing is off.
	tracer *tracing.Tracer

	mu       sync.Mutex
	hold     *holding
	assigned map[int32]bool
	paused   map[int32]bool
	held     int64 // buffered plus unread, as of the last refresh
	// refused counts, per record, releases the deliveries topic (then the dlq) refused
	// outright; such a record goes to the dlq next time (whole, then without its value).
	refused map[recordRef]int
	// suspect are the records of a refused release of several: the broker refuses a whole
	// batch for one bad record, so each is released alone next time, and only a record
	// refused alone counts as refused.
	suspect map[recordRef]bool

	topicID [16]byte // owned by the poll loop
}

type recordRef struct {
	partition int32
	offset    int64
}

// TierStats describes what a tier holds.
type TierStats struct {
	Tier          string
	Topic         string
	Assigned      int   // partitions this process owns
	Buffered      int   // records in the look-ahead buffer
	BufferedBytes int   // their approximate memory
	Held          int64 // records waiting in the tier (buffered plus not yet read), as of the last refresh
}

// NewTier returns the consumer of one tier of cfg.TierDelays.
func NewTier(cfg Config, tier string) (*Tier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, r := range cfg.routes() {
		if r.name == tier {
			return newTier(cfg, r, newMetrics(cfg.Registerer).forTier(r), cfg.instanceID()), nil
		}
	}
	return nil, fmt.Errorf("retrytopics: tier %q is not configured", tier)
}

func newTier(cfg Config, r tierRoute, m *retryMetrics, instance string) *Tier {
	return &Tier{
		cfg:      cfg,
		route:    r,
		names:    topics.For(cfg.Prefix),
		group:    r.topic,
		txnID:    r.topic + "." + instance,
		log:      cfg.Logger.With("component", "retry-tier", "tier", r.name),
		m:        m,
		tracer:   tracing.New(cfg.TracerProvider),
		hold:     newHoldingOf(cfg.LookAheadRecords),
		assigned: map[int32]bool{},
		paused:   map[int32]bool{},
		refused:  map[recordRef]int{},
		suspect:  map[recordRef]bool{},
	}
}

// Topic is the tier's topic.
func (t *Tier) Topic() string { return t.route.topic }

// Group is the consumer group of the tier's topic.
func (t *Tier) Group() string { return t.group }

// Name is the tier's name ("5s", "1m", ...).
func (t *Tier) Name() string { return t.route.name }

// Stats returns what the tier holds now.
func (t *Tier) Stats() TierStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return TierStats{
		Tier: t.route.name, Topic: t.route.topic, Assigned: len(t.assigned),
		Buffered: t.hold.count, BufferedBytes: t.hold.bytes, Held: max(t.held, int64(t.hold.count)),
	}
}

// Run consumes the tier until ctx ends. A failed Kafka session is closed and a new one started
// after RetryInterval; everything held is read again from the committed offsets. Shutdown is
// ordered: the poll stops, a release in flight finishes its transaction, then the consumer
// leaves its group (a static member, with an InstanceID, stays in it until its session times
// out, so that its restart takes its partitions back without a rebalance). Run returns nil when
// ctx ends, an error only for an unusable configuration.
func (t *Tier) Run(ctx context.Context) error {
	for {
		err := t.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fe fatalError
		if errors.As(err, &fe) {
			return err
		}
		t.m.restarts.WithLabelValues(t.route.name).Inc()
		t.log.Error("tier session failed; starting a new one", "err", err, "after", t.cfg.RetryInterval)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(t.cfg.RetryInterval):
		}
	}
}

type fatalError struct{ error }

func (e fatalError) Unwrap() error { return e.error }

func (t *Tier) kafkaOptions() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ConsumerGroup(t.group),
		kgo.ConsumeTopics(t.route.topic),
		kgo.TransactionalID(t.txnID),
		kgo.TransactionTimeout(t.cfg.TransactionTimeout),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		// Rebalance callbacks then run only while the loop is inside a poll, never while it
		// holds polled records or releases them.
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(t.cfg.FetchMaxWait),
		kgo.FetchMaxBytes(t.cfg.FetchMaxBytes),
		kgo.FetchMaxPartitionBytes(min(t.cfg.FetchMaxBytes, 256<<10)),
		kgo.ProducerLinger(0),
		// Under KIP-890 a release produced right after the previous transaction ended can be
		// answered CONCURRENT_TRANSACTIONS while the broker finishes that one. franz-go retries
		// after a backoff (250 ms at first by default) and a metadata refresh (every client
		// refreshes within 100 ms, component.Base.ClientOptions): the backoff would show as
		// release lateness.
		kgo.RetryBackoffFn(func(fails int) time.Duration {
			return min(time.Duration(max(fails, 1))*20*time.Millisecond, time.Second)
		}),
		kgo.OnPartitionsAssigned(t.onAssigned),
		kgo.OnPartitionsRevoked(t.onRevoked),
		kgo.OnPartitionsLost(t.onRevoked),
		kgo.OnOffsetsFetched(t.onOffsetsFetched),
	}
	if t.cfg.InstanceID != "" {
		// Static membership: a restarted replica takes its partitions back at once.
		opts = append(opts, kgo.InstanceID(t.cfg.InstanceID))
	}
	return t.cfg.ClientOptions(t.log, opts...)
}

// session runs one Kafka session: a group member with a transactional producer.
func (t *Tier) session(ctx context.Context) error {
	s, err := kgo.NewGroupTransactSession(t.kafkaOptions()...)
	if err != nil {
		return fatalError{fmt.Errorf("retrytopics: tier %s: kafka client: %w", t.route.name, err)}
	}
	t.mu.Lock()
	t.hold.dropAll()
	clear(t.assigned)
	clear(t.paused)
	t.mu.Unlock()
	// Fence our previous incarnation now (same transactional id after a restart): its open
	// transaction is aborted at once, instead of holding the group's offsets, and so this
	// consumer's first offset fetch, until the transaction times out.
	if _, _, err := s.Client().ProducerID(ctx); err != nil {
		s.Close()
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("init transactional producer: %w", err)
	}

	sctx, stopStats := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.refreshHeld(sctx, s.Client())
	}()
	defer func() {
		stopStats()
		wg.Wait()
		s.CloseAllowingRebalance() // leaves the group unless static; the revoke callback drops what is held
		t.mu.Lock()
		t.hold.dropAll()
		t.publishLocked()
		t.mu.Unlock()
	}()

	for {
		if err := t.releaseDue(ctx, s); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		t.adjustFetching(s.Client())
		room, wait := t.pollPlan()
		s.AllowRebalance()
		var fs kgo.Fetches
		if wait <= 0 {
			// Something is due already: take what is buffered without waiting.
			fs = s.PollRecords(nil, room) //nolint:staticcheck // a nil context polls without blocking
		} else {
			pctx, cancel := context.WithTimeout(ctx, wait)
			fs = s.PollRecords(pctx, room)
			cancel()
		}
		if ctx.Err() != nil {
			return nil
		}
		if fs.IsClientClosed() {
			return errors.New("kafka client closed")
		}
		fs.EachError(func(_ string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				t.log.Warn("fetch error", "partition", p, "err", err)
			}
		})
		t.intake(fs)
	}
}

// pollPlan returns how many records the next poll may take and how long it may wait: until
// the earliest held record is due (zero when one is due already), at most MaxPollWait. The
// poll's deadline is the timer of the next due time; nothing sleeps.
func (t *Tier) pollPlan() (room int, wait time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// When the buffer is full every partition is paused and the poll returns nothing. The room
	// in bytes is estimated from the records held (fetch sizes are compressed sizes).
	room = t.cfg.LookAheadRecords - t.hold.count
	avg := 1024
	if t.hold.count > 0 {
		avg = max(t.hold.bytes/t.hold.count, recordOverhead)
	}
	room = max(1, min(room, (t.cfg.LookAheadBytes-t.hold.bytes)/avg))
	wait = t.cfg.MaxPollWait
	if due, ok := t.hold.nextDue(); ok {
		wait = min(wait, max(time.Until(time.Unix(0, due).Add(t.cfg.ReleaseLinger)), 0))
	}
	return room, wait
}

// adjustFetching pauses the partitions whose share of the look-ahead buffer is full and
// resumes those with room again. A partition may use more than its share while the buffer is
// less than half full.
func (t *Tier) adjustFetching(cl *kgo.Client) {
	t.mu.Lock()
	n := max(1, len(t.assigned))
	share, shareBytes := max(1, t.cfg.LookAheadRecords/n), max(1, t.cfg.LookAheadBytes/n)
	full := t.hold.count >= t.cfg.LookAheadRecords || t.hold.bytes >= t.cfg.LookAheadBytes
	crowded := 2*t.hold.count >= t.cfg.LookAheadRecords || 2*t.hold.bytes >= t.cfg.LookAheadBytes
	var pause, resume []int32
	for p := range t.assigned {
		want := full
		if ph := t.hold.parts[p]; ph != nil && crowded && (len(ph.byDue) >= share || ph.bytes >= shareBytes) {
			want = true
		}
		switch {
		case want && !t.paused[p]:
			pause = append(pause, p)
			t.paused[p] = true
		case !want && t.paused[p]:
			resume = append(resume, p)
			delete(t.paused, p)
		}
	}
	for p := range t.paused {
		if !t.assigned[p] {
			resume = append(resume, p)
			delete(t.paused, p)
		}
	}
	t.mu.Unlock()
	if len(pause) > 0 {
		cl.PauseFetchPartitions(map[string][]int32{t.route.topic: pause})
	}
	if len(resume) > 0 {
		cl.ResumeFetchPartitions(map[string][]int32{t.route.topic: resume})
	}
}

// intake puts polled records into the look-ahead buffer.
func (t *Tier) intake(fs kgo.Fetches) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	fs.EachTopic(func(ft kgo.FetchTopic) {
		if ft.TopicID != ([16]byte{}) {
			t.topicID = ft.TopicID
		}
	})
	fs.EachRecord(func(r *kgo.Record) {
		h := &heldRecord{partition: r.Partition, key: r.Key, value: r.Value, headers: r.Headers}
		due, problem := t.dueOf(r, now)
		if n := t.refused[recordRef{r.Partition, r.Offset}]; n > 0 {
			problem = "the deliveries topic refused the record"
			h.deadBare = n > 1
		}
		h.alone = t.suspect[recordRef{r.Partition, r.Offset}]
		if problem != "" {
			h.deadReason, due = problem, 0
		} else {
			h.id = retryID(r.Value)
		}
		h.pos = position{due: due, offset: r.Offset}
		h.size = recordOverhead + len(r.Key) + len(r.Value)
		for _, hd := range r.Headers {
			h.size += len(hd.Key) + len(hd.Value) + 32
		}
		if t.hold.add(h) != added {
			return
		}
		// Copy what is kept: the fetched slices pin the whole fetch response in memory.
		h.key, h.value = bytes.Clone(r.Key), bytes.Clone(r.Value)
		h.headers = make([]kgo.RecordHeader, len(r.Headers))
		for i, hd := range r.Headers {
			h.headers[i] = kgo.RecordHeader{Key: hd.Key, Value: bytes.Clone(hd.Value)}
		}
	})
	t.publishLocked()
}

// retryID identifies the scheduled retry a tier record asks for: (delivery id, attempt number,
// trigger, deferrals). Every record the sender writes for one retry, including a repeated
// write after an unseen acknowledgement, has the same; the sender's next hand-off of a retry
// after its release has the same too, which is why only records read before a release count as
// its copies (holding.go). Empty when the value is not a delivery.
func retryID(value []byte) string {
	d, err := records.UnmarshalDelivery(value)
	if err != nil || d.DeliveryID == "" {
		return ""
	}
	return d.DeliveryID + "/" + strconv.Itoa(d.AttemptNo) + "/" + d.Trigger + "/" + strconv.Itoa(d.Deferrals)
}

// dueOf reads a tier record's due time (unix ns; 0 for "now"), from its header or else from its
// value, or says why the record cannot be held.
func (t *Tier) dueOf(r *kgo.Record, now time.Time) (int64, string) {
	var due time.Time
	found := false
	for _, h := range r.Headers {
		if h.Key == HeaderDueAt {
			if ts, err := time.Parse(time.RFC3339Nano, string(h.Value)); err == nil {
				due, found = ts, true
			}
			break
		}
	}
	if !found {
		var v struct {
			V     int       `json:"v"`
			DueAt time.Time `json:"due_at"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.V == 0 {
			return 0, "retry tier record is not a delivery with a due_at"
		}
		due = v.DueAt
	}
	switch {
	case due.IsZero() || due.Year() < 1970:
		return 0, ""
	case due.Sub(now) > t.cfg.MaxHold:
		return 0, fmt.Sprintf("due_at %s is more than the max hold %s away", due.Format(time.RFC3339), t.cfg.MaxHold)
	}
	return due.UnixNano(), ""
}

// releaseDue releases the records due now, at most ReleaseBatch of them in one transaction,
// once the earliest of them has been due for ReleaseLinger (so that a stream of due records
// shares transactions). Records falling due meanwhile wait for the next turn of the loop, so a
// steady stream of due records never starves the poll.
func (t *Tier) releaseDue(ctx context.Context, s *kgo.GroupTransactSession) error {
	now := time.Now()
	t.mu.Lock()
	if due, ok := t.hold.nextDue(); !ok || now.UnixNano()-due < int64(t.cfg.ReleaseLinger) {
		t.mu.Unlock()
		return nil
	}
	batch := t.hold.popDue(now.UnixNano(), t.cfg.ReleaseBatch, 4<<20)
	if len(batch) == 0 {
		t.mu.Unlock()
		return nil
	}
	touched := map[int32]bool{}
	for _, r := range batch {
		touched[r.partition] = true
	}
	points := t.hold.commitPoints(touched)
	t.mu.Unlock()

	committed, err := t.release(ctx, s, batch, points, now)
	t.mu.Lock()
	if committed {
		t.hold.committedAt(points)
		t.hold.rememberReleased(batch)
		for _, r := range batch {
			delete(t.refused, recordRef{r.partition, r.pos.offset})
			delete(t.suspect, recordRef{r.partition, r.pos.offset})
		}
	} else {
		// The transaction aborted and franz-go rewound the consumer to the committed offsets:
		// hold again from there.
		t.hold.rewind()
	}
	t.publishLocked()
	t.mu.Unlock()
	var refused refusedRelease
	if errors.As(err, &refused) {
		// The session goes on: the abort rewound the consumer, and the records read again are
		// released alone (suspect) or dead-lettered (refused alone), without a rejoin of the group.
		t.m.aborted.WithLabelValues(t.route.name).Inc()
		t.log.Warn("the deliveries topic refused a release; reading the tier again from its committed offsets", "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	if !committed {
		t.m.aborted.WithLabelValues(t.route.name).Inc()
		t.log.Info("release transaction aborted (rebalance); reading the tier again from its committed offsets")
		return nil
	}
	t.observe(batch, now)
	return nil
}

// release writes batch to the deliveries topic (or the dlq) and commits points, in one
// transaction. It returns whether the transaction committed.
func (t *Tier) release(ctx context.Context, s *kgo.GroupTransactSession, batch []*heldRecord, points map[int32]commitPoint, now time.Time) (bool, error) {
	// A transaction is finished even when ctx ends: an abandoned one would hold the group's
	// offsets until its timeout.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.cfg.TransactionTimeout)
	defer cancel()
	if err := s.Begin(); err != nil {
		return false, fmt.Errorf("begin transaction: %w", err)
	}
	var mu sync.Mutex
	var failed []error
	stamp := []byte(now.UTC().Format(time.RFC3339Nano))
	for _, r := range batch {
		if r.copy {
			continue // committed as released with the others, written nowhere
		}
		s.Produce(tctx, t.outgoing(r, now, stamp), func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				failed = append(failed, err)
				if refusedOutright(err) {
					ref := recordRef{r.partition, r.pos.offset}
					t.mu.Lock()
					if len(batch) == 1 {
						t.refused[ref]++
					} else {
						t.suspect[ref] = true
					}
					t.mu.Unlock()
				}
				mu.Unlock()
			}
		})
	}
	if err := s.Client().Flush(tctx); err != nil {
		_, _ = s.End(tctx, kgo.TryAbort)
		return false, fmt.Errorf("flush release: %w", err)
	}
	if len(failed) > 0 {
		if _, err := s.End(tctx, kgo.TryAbort); err != nil {
			return false, fmt.Errorf("abort release: %w", err)
		}
		err := fmt.Errorf("release of %d records: %w", len(batch), errors.Join(failed...))
		if all(failed, refusedOutright) {
			err = refusedRelease{err}
		}
		return false, err
	}
	fill := func(req *kmsg.TxnOffsetCommitRequest) error {
		t.fillCommit(req, points)
		return nil
	}
	committed, err := s.End(kgo.PreTxnCommitFnContext(tctx, fill), kgo.TryCommit)
	if err != nil {
		return false, fmt.Errorf("end release transaction: %w", err)
	}
	return committed, nil
}

// fillCommit replaces the offsets franz-go would commit (the polled position, which is past
// records still held) by the tier's commit points and their released-record rules.
func (t *Tier) fillCommit(req *kmsg.TxnOffsetCommitRequest, points map[int32]commitPoint) {
	topic := kmsg.NewTxnOffsetCommitRequestTopic()
	topic.Topic, topic.TopicID = t.route.topic, t.topicID
	for _, rt := range req.Topics {
		if rt.Topic == t.route.topic {
			topic.TopicID = rt.TopicID
		}
	}
	for p, cp := range points {
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = p, cp.offset, -1
		meta := cp.rule.encode()
		rp.Metadata = &meta
		topic.Partitions = append(topic.Partitions, rp)
	}
	req.Topics = nil
	if len(topic.Partitions) > 0 {
		req.Topics = []kmsg.TxnOffsetCommitRequestTopic{topic}
	}
}

// refusedOutright reports a produce error that retrying the same record cannot cure.
// refusedRelease is a release the deliveries topic refused for the records in it (refusedOutright),
// not for a fault of the session.
type refusedRelease struct{ error }

func (e refusedRelease) Unwrap() error { return e.error }

func all(errs []error, is func(error) bool) bool {
	for _, err := range errs {
		if !is(err) {
			return false
		}
	}
	return true
}

func refusedOutright(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge) ||
		errors.Is(err, kerr.InvalidRecord) || errors.Is(err, kerr.CorruptMessage)
}

// outgoing is the record a held record is released as: itself, on the deliveries topic, with
// its release time; or a dead letter.
func (t *Tier) outgoing(r *heldRecord, now time.Time, stamp []byte) *kgo.Record {
	if r.deadReason != "" {
		return t.deadLetter(r, now)
	}
	headers := make([]kgo.RecordHeader, 0, len(r.headers)+1)
	for _, h := range r.headers {
		if h.Key != HeaderReleasedAt {
			headers = append(headers, h)
		}
	}
	headers = append(headers, kgo.RecordHeader{Key: HeaderReleasedAt, Value: stamp})
	out := &kgo.Record{Topic: t.names.Deliveries, Key: r.key, Value: r.value, Headers: headers}
	if t.tracer != nil {
		t.traceRelease(out)
	}
	return out
}

// traceRelease makes the span of a release, the child of the span that wrote the record (the
// failed attempt, or the deferral), and hands its context on with the released record.
func (t *Tier) traceRelease(out *kgo.Record) {
	var hop tracing.Hop
	if d, err := records.UnmarshalDelivery(out.Value); err == nil {
		hop = tracing.DeliveryHop(d)
	}
	span := t.tracer.Start(tracing.Header(out.Headers), tracing.SpanRetryRelease, trace.SpanKindProducer, hop)
	span.Set(tracing.AttrRetryTier.String(t.route.name))
	tracing.SetHeader(out, span.Traceparent())
	span.End()
}

// deadLetter wraps a tier record that cannot be released into a dlq record.
func (t *Tier) deadLetter(r *heldRecord, now time.Time) *kgo.Record {
	var ids struct {
		EventID   string `json:"event_id"`
		PartnerID string `json:"partner_id"`
	}
	_ = json.Unmarshal(r.value, &ids) // best effort: the reason says what is wrong
	reason := fmt.Sprintf("%s (tier %s, partition %d, offset %d)", r.deadReason, t.route.name, r.partition, r.pos.offset)
	original := r.value
	if r.deadBare {
		reason += "; value of " + fmt.Sprint(len(r.value)) + " bytes omitted"
		original = nil
	}
	dl := records.NewDeadLetter("retry", reason, original)
	dl.EventID, dl.Partner, dl.At = ids.EventID, ids.PartnerID, now.UTC()
	return records.DeadLetterRecord(t.names.DLQ, string(r.key), dl)
}

// observe records the metrics of a committed release.
func (t *Tier) observe(batch []*heldRecord, now time.Time) {
	lateness := t.m.lateness.WithLabelValues(t.route.name)
	released := 0
	for _, r := range batch {
		switch {
		case r.copy:
			t.log.Info("copy of a released retry dropped", "retry", r.id, "partition", r.partition, "offset", r.pos.offset)
		case r.deadReason != "":
			reason := reasonUnreadable
			if t.refusedReason(r) {
				reason = reasonRefused
			}
			t.m.deadLetters.WithLabelValues(reason).Inc()
			t.log.Warn("tier record dead-lettered", "partition", r.partition, "offset", r.pos.offset, "reason", r.deadReason)
		default:
			released++
			lateness.Observe(now.Sub(time.Unix(0, r.pos.due)).Seconds())
		}
	}
	t.m.released.WithLabelValues(t.route.name).Add(float64(released))
}

func (t *Tier) refusedReason(r *heldRecord) bool {
	return r.deadReason == "the deliveries topic refused the record"
}

// publishLocked updates the buffer gauges; t.mu is held.
func (t *Tier) publishLocked() {
	t.m.buffered.WithLabelValues(t.route.name).Set(float64(t.hold.count))
	t.m.bufferedBytes.WithLabelValues(t.route.name).Set(float64(t.hold.bytes))
}

// refreshHeld updates the held-records gauge every StatsInterval: the buffer plus what the
// assigned partitions hold beyond the read position.
func (t *Tier) refreshHeld(ctx context.Context, cl *kgo.Client) {
	adm := kadm.NewClient(cl)
	periodic.Every(ctx, t.cfg.StatsInterval, func(ctx context.Context) {
		lctx, cancel := context.WithTimeout(ctx, t.cfg.StatsInterval)
		ends, err := adm.ListEndOffsets(lctx, t.route.topic)
		var starts kadm.ListedOffsets
		if err == nil {
			starts, err = adm.ListStartOffsets(lctx, t.route.topic)
		}
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				t.log.Debug("held records: list offsets", "err", err)
			}
			return
		}
		t.mu.Lock()
		held := int64(t.hold.count)
		for p := range t.assigned {
			end, ok := ends.Lookup(t.route.topic, p)
			if !ok || end.Err != nil {
				continue
			}
			pos := int64(-1)
			if ph := t.hold.parts[p]; ph != nil {
				pos = ph.next
			}
			if pos < 0 {
				if start, ok := starts.Lookup(t.route.topic, p); ok && start.Err == nil {
					pos = start.Offset
				}
			}
			if pos >= 0 && end.Offset > pos {
				held += end.Offset - pos
			}
		}
		t.held = held
		t.mu.Unlock()
		t.m.held.WithLabelValues(t.route.name).Set(float64(held))
	})
}

// onAssigned notes new partitions; their holding starts in onOffsetsFetched.
func (t *Tier) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range assigned[t.route.topic] {
		t.assigned[p] = true
	}
	if len(assigned[t.route.topic]) > 0 {
		t.log.Info("partitions assigned", "partitions", assigned[t.route.topic])
	}
}

// onRevoked forgets revoked or lost partitions without committing anything for them: what they
// held is read again, by whoever owns them next, from the committed offsets.
func (t *Tier) onRevoked(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps := revoked[t.route.topic]
	t.hold.drop(ps...)
	for _, p := range ps {
		delete(t.assigned, p)
	}
	t.publishLocked()
	if len(ps) > 0 {
		t.log.Info("partitions revoked", "partitions", ps)
	}
}

// onOffsetsFetched starts holding newly assigned partitions from their committed offsets and
// released-record rules. franz-go calls it before it fetches those partitions.
func (t *Tier) onOffsetsFetched(_ context.Context, _ *kgo.Client, resp *kmsg.OffsetFetchResponse) error {
	type fetched struct {
		partition int32
		offset    int64
		metadata  *string
	}
	var got []fetched
	for _, g := range resp.Groups {
		for _, rt := range g.Topics {
			if rt.Topic != "" && rt.Topic != t.route.topic {
				continue
			}
			for _, p := range rt.Partitions {
				if p.ErrorCode == 0 {
					got = append(got, fetched{p.Partition, p.Offset, p.Metadata})
				}
			}
		}
	}
	if len(resp.Groups) == 0 {
		for _, rt := range resp.Topics {
			if rt.Topic != t.route.topic {
				continue
			}
			for _, p := range rt.Partitions {
				if p.ErrorCode == 0 {
					got = append(got, fetched{p.Partition, p.Offset, p.Metadata})
				}
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range got {
		cp := commitPoint{offset: -1}
		if f.offset >= 0 {
			cp.offset = f.offset
			if f.metadata != nil {
				rule, err := decodeRule(*f.metadata)
				if err != nil {
					t.log.Warn("committed offset without a released-record rule; records above it are read as not yet released",
						"partition", f.partition, "offset", f.offset, "err", err)
				}
				if rule.end > cp.offset {
					cp.rule = rule
				}
			}
		}
		t.hold.assign(f.partition, cp)
	}
	return nil
}
