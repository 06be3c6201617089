package sender

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/internal/tracing"
)

// Deferral reasons, the label of the deferrals metric.
const (
	deferCircuitOpen = "circuit_open"
	deferQueueFull   = "queue_full"
	deferNotDue      = "not_due"
	// deferStaleView: a test or replay record asks for an endpoint version the view did not
	// reach within catchUpTimeout; it comes back from a retry tier rather than being sent with
	// the older configuration.
	deferStaleView = "stale_view"
)

const (
	// maxPollRecords bounds one poll, so intake checks the buffer caps often.
	maxPollRecords = 500
	// laneIdleTTL: a lane with nothing queued or running and a quiet circuit is forgotten
	// after this long, so memory follows the endpoints in use, not all endpoints ever seen.
	laneIdleTTL = 10 * time.Minute
	// catchUpTimeout bounds one wait for the endpoint view before refusing a delivery.
	catchUpTimeout = 10 * time.Second
	// staleViewRetry is when a record deferred for a view behind its endpoint version is due.
	staleViewRetry = 5 * time.Second
	// attemptLinger batches attempt records. Waiting for a record's ack holds no request slot,
	// only the offset commit, and bigger batches cost the brokers far fewer requests (a real
	// broker on the sender's machine used about a third less CPU than with no linger).
	attemptLinger = 5 * time.Millisecond
	// maxUnrecorded bounds the answered requests whose attempt records Kafka has not yet
	// acknowledged, across the sender. A crash loses the records of those, and the history
	// never hears of their requests (design.md section 7): with the bound, a sender killed
	// during a broker outage leaves at most its requests in flight and these out, instead of
	// every request it answered from its buffer while the broker was away. At the bound, a
	// lane waits with its answered request before it makes another. That wait is the
	// recording's, not the endpoint's: it counts neither in the lane's service rate nor
	// against its stall rule, and intake waits for room instead of deferring meanwhile.
	maxUnrecorded = 1024
	// fetchMaxBytes bounds one fetch, which the Kafka client may hold beside the buffered records.
	fetchMaxBytes = 16 << 20
	// finalCommitTimeout bounds the commit at shutdown.
	finalCommitTimeout = 10 * time.Second
	// intakeRecheck: intake waiting for room in a lane judges the lane again this often.
	intakeRecheck = 10 * time.Millisecond
	// slowEpisodeGap: judgements of a lane as slow further apart than this are separate
	// episodes, each of which must last Config.MaxIntakeWait before the lane's overflow is
	// deferred.
	slowEpisodeGap = 100 * time.Millisecond
	// overflowLogEvery bounds the log lines of one lane deferring its overflow.
	overflowLogEvery = 10 * time.Second
)

// EndpointView is what the sender needs of a view of the endpoints topic; *endpoints.View is
// one, run by the caller.
type EndpointView interface {
	// Get returns the endpoint with id. The value is shared: the sender never modifies it.
	Get(id string) (*records.Endpoint, bool)
	// CatchUp waits until the view holds every endpoint record committed before the call.
	CatchUp(ctx context.Context) error
	// WaitVersion waits until the view holds endpoint id at version or later.
	WaitVersion(ctx context.Context, id string, version int64) error
}

// Sender delivers the records of the deliveries topic. Build it with New and call Run once.
type Sender struct {
	cfg     Config
	view    EndpointView
	retrier Retrier
	poster  *poster
	routes  *routes
	m       *senderMetrics
	log     *slog.Logger
	names   topics.Names
	now     func() time.Time
	tracer  *tracing.Tracer // nil: tracing off
	started atomic.Bool

	consumer *kgo.Client
	producer *kgo.Client
	// workCtx is the parent of every partition's context; it outlives Run's ctx so that work
	// in flight can finish during the shutdown grace.
	workCtx    context.Context
	cancelWork context.CancelFunc
	wg         sync.WaitGroup // every goroutine that handles work

	partsMu sync.Mutex
	parts   map[int32]*partition

	lanesMu sync.Mutex
	lanes   map[string]*lane

	tokensMu sync.Mutex
	tokens   map[string]*tokenSource // by endpoint id: OAuth tokens outlive idle lanes

	buffered      atomic.Int64
	bufferedBytes atomic.Int64
	unrecorded    chan struct{} // a slot per answered request whose attempt record is not yet acknowledged
	pauseMu       sync.Mutex
	paused        chan struct{} // non-nil while intake waits at the buffer caps; closed to resume

	commitMu sync.Mutex
}

// New checks cfg and returns a Sender that reads endpoints from view (which the caller runs) and
// hands retries and deferrals to retrier. It connects to nothing until Run.
func New(cfg Config, view EndpointView, retrier Retrier) (*Sender, error) {
	if view == nil {
		return nil, errors.New("sender: endpoint view is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if retrier == nil {
		return nil, errors.New("sender: retrier is nil")
	}
	guard, err := egress.New(cfg.Egress)
	if err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	s := &Sender{
		cfg:     cfg,
		view:    view,
		retrier: retrier,
		m:       newMetrics(cfg.Registerer),
		log:     cfg.Logger.With("component", "sender"),
		names:   topics.For(cfg.Prefix),
		now:     time.Now,
		tracer:  tracing.New(cfg.TracerProvider),
		parts:   map[int32]*partition{},
		lanes:   map[string]*lane{},
		tokens:  map[string]*tokenSource{},

		unrecorded: make(chan struct{}, maxUnrecorded),
	}
	s.routes = &routes{guard: guard, def: guard.Client(), byProxy: map[string]*http.Client{}}
	s.poster = &poster{
		userAgent:   cfg.UserAgent,
		policy:      Policy{RetryClientErrors: cfg.RetryClientErrors, MaxRetryAfter: cfg.MaxRetryAfter},
		maxResponse: cfg.Egress.MaxResponseBytes,
		now:         s.now,
	}
	return s, nil
}

// Group is the consumer group of the deliveries topic.
func (s *Sender) Group() string { return s.cfg.group() }

// Run delivers until ctx ends, then shuts down in order: it stops taking records, lets the
// requests in flight finish (up to Config.ShutdownGrace; the rest are abandoned and delivered
// again after a restart), commits the offsets of finished work and closes (a dynamic member
// leaves the group; a static one, with an InstanceID, keeps its place until its session ends).
// It waits for the endpoint view to catch up before consuming, so the caller must be running
// the view. Run returns nil after a clean shutdown.
func (s *Sender) Run(ctx context.Context) error {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("sender: Run called twice")
	}
	// A broker that is down (or not up yet) is waited for, not a reason to exit: a supervisor
	// would only restart the process into the same wait.
	if !s.persist(ctx, "catch up with the endpoints topic before consuming", s.view.CatchUp) {
		return nil
	}
	s.workCtx, s.cancelWork = context.WithCancel(context.WithoutCancel(ctx))
	defer s.cancelWork()

	var err error
	s.producer, err = kgo.NewClient(s.cfg.ClientOptions(s.log, kgo.ProducerLinger(attemptLinger))...)
	if err != nil {
		return fmt.Errorf("sender: kafka producer: %w", err)
	}
	defer s.producer.Close()
	consumerOpts := s.cfg.ClientOptions(s.log, []kgo.Opt{
		kgo.ConsumerGroup(s.cfg.group()),
		kgo.ConsumeTopics(s.names.Deliveries),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// Fanout writes deliveries in transactions; aborted ones must never be sent.
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(s.onAssigned),
		kgo.OnPartitionsRevoked(s.onRevoked),
		kgo.OnPartitionsLost(s.onLost),
		// An empty fetch waits at most this long on the broker; a revoke waits for it, and so
		// does a partition resumed after its backlog paused it (feed), which joins the next
		// fetch request only: with a second, a burst to one endpoint flowed in steps.
		kgo.FetchMaxWait(100 * time.Millisecond),
		kgo.FetchMaxBytes(fetchMaxBytes),
	}...)
	if s.cfg.InstanceID != "" {
		// Static membership: a restarted sender takes its partitions back at once.
		consumerOpts = append(consumerOpts, kgo.InstanceID(s.cfg.InstanceID))
	}
	s.consumer, err = kgo.NewClient(consumerOpts...)
	if err != nil {
		return fmt.Errorf("sender: kafka consumer: %w", err)
	}

	commitCtx, stopCommits := context.WithCancel(context.Background())
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		s.commitLoop(commitCtx)
	}()

	s.log.Info("sender started", "group", s.cfg.group(), "topic", s.names.Deliveries)
	s.poll(ctx)

	// Ordered shutdown: stop intake, finish or abandon work, commit, close.
	parts := s.detachAll()
	s.retire(parts, time.Now().Add(s.cfg.ShutdownGrace))
	s.cancelWork()
	s.wg.Wait()
	stopCommits()
	<-committed
	commitCtx, cancel := context.WithTimeout(context.Background(), finalCommitTimeout)
	s.commit(commitCtx, s.consumer, parts)
	cancel()
	s.consumer.Close() // nothing is assigned any more
	s.routes.closeIdle()
	s.log.Info("sender stopped")
	return nil
}

// poll takes records until ctx ends.
func (s *Sender) poll(ctx context.Context) {
	lastSweep := s.now()
	for {
		if !s.waitForRoom(ctx) {
			return
		}
		n := s.cfg.MaxBuffered - int(s.buffered.Load())
		n = max(1, min(n, maxPollRecords))
		fs := s.consumer.PollRecords(ctx, n)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return
		}
		var failed bool
		fs.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			failed = true
			s.log.Warn("fetch failed", "topic", topic, "partition", p, "err", err)
		})
		fs.EachRecord(func(r *kgo.Record) { s.intake(ctx, r) })
		if now := s.now(); now.Sub(lastSweep) > time.Minute {
			s.sweepLanes(now)
			lastSweep = now
		}
		if failed && fs.NumRecords() == 0 {
			select { // an injected error returns at once: do not spin on it
			case <-ctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// intake routes one record. It never waits: everything that waits runs in the endpoint's
// lane, in its partition's feeder (the wait for room in a fast endpoint's lane, offer) or in a
// goroutine of its own, bounded by Config.MaxBuffered and MaxBufferedBytes, at which the poll
// loop stops taking records: that is the backpressure that paces intake to the endpoints' rate.
func (s *Sender) intake(ctx context.Context, r *kgo.Record) {
	part := s.partitionOf(r.Partition)
	if part == nil || !part.add(r) {
		// Revoked meanwhile: the next owner reads it.
		s.log.Debug("record of a partition no longer assigned left alone", "partition", r.Partition, "offset", r.Offset)
		return
	}
	d, head, reason := decodeDelivery(r.Value, s.cfg.MaxBodyBytes)
	d.Traceparent = s.tracer.Parent(r) // "" when tracing is off
	w := &work{part: part, offset: r.Offset, d: d, head: head, size: int64(len(r.Value))}
	s.hold(w)
	if reason != "" {
		// A malformed record cannot be delivered; it must not block the partition either.
		s.m.badRecords.Inc()
		s.log.Error("delivery record not understood; sent to the dlq topic",
			"partition", r.Partition, "offset", r.Offset, "reason", reason)
		key, value := r.Key, r.Value
		s.goHandle(w, func(w *work) bool { return s.deadLetter(w, key, value, reason) })
		return
	}
	now := s.now()
	if d.DueAt.After(now.Add(s.cfg.DueTolerance)) {
		after := d.DueAt.Sub(now)
		s.goHandle(w, func(w *work) bool { return s.deferWork(w, deferNotDue, after) })
		return
	}
	w.lane = s.laneFor(d.EndpointID)
	w.lane.mu.Lock()
	w.lane.waiting++
	w.lane.mu.Unlock()
	s.feed(ctx, w)
}

// feed hands w to its partition's feeder, which offers the partition's records to their lanes
// in offset order. Intake itself never waits for a lane: a full lane holds back the records of
// its own partition only, while every other partition's records flow to their endpoints.
// Memory stays bounded by the buffer caps, which every waiting record counts against.
func (s *Sender) feed(ctx context.Context, w *work) {
	p := w.part
	p.feedMu.Lock()
	p.queueFeed(w)
	start := !p.feeding
	p.feeding = true
	if len(p.feedQ) >= s.partitionWaitCap() && !p.fetchPaused {
		// One partition's backlog must not take the whole buffer from the others: its fetching
		// pauses until its feeder has offered half of what waits. What the client had fetched
		// for it and not handed out is fetched again on resume, never handed out twice.
		p.fetchPaused = true
		s.consumer.PauseFetchPartitions(map[string][]int32{p.topic: {p.id}})
	}
	p.feedMu.Unlock()
	if start {
		s.wg.Add(1)
		go s.runFeeder(ctx, p)
	}
}

// runFeeder offers p's waiting records until none is left; the next record starts a new one.
func (s *Sender) runFeeder(ctx context.Context, p *partition) {
	defer s.wg.Done()
	for {
		p.feedMu.Lock()
		if len(p.feedQ) == 0 {
			p.feeding = false
			p.feedQ = nil
			p.feedMu.Unlock()
			return
		}
		w := p.takeFeed()
		if p.fetchPaused && len(p.feedQ) <= s.partitionWaitCap()/2 && !p.isStopped() {
			p.fetchPaused = false
			s.consumer.ResumeFetchPartitions(map[string][]int32{p.topic: {p.id}})
		}
		p.feedMu.Unlock()
		if p.isStopped() {
			s.unroute(w)
			s.release(w) // unfinished: the partition's next owner delivers it
			continue
		}
		s.offer(ctx, w.lane, w)
	}
}

// partitionWaitCap is how many records of one partition may wait for their lanes before its
// fetching pauses: half the buffer, so the other partitions always keep the other half. Not
// less: a resumed partition is fetched again only with the consumer's next fetch request, and
// pausing at a few lanes' queues stalled a burst to ten endpoints in steps (make bench, b).
func (s *Sender) partitionWaitCap() int {
	return max(1, s.cfg.MaxBuffered/2)
}

// unroute takes w off its lane's count of records waiting to be offered.
func (s *Sender) unroute(w *work) {
	w.lane.mu.Lock()
	w.lane.waiting--
	w.lane.mu.Unlock()
}

// offer queues w on its endpoint's lane (R21). The flow control tells a busy endpoint from a
// bad one: while the lane's circuit is open, w is deferred to a retry tier; when its queue is
// full and the endpoint keeps up (a slot frees at least every Config.MaxSlotWait), it waits for
// room (holding back its partition's feeder only), so a burst flows at the rate the endpoint
// accepts; when the endpoint is slow, or no
// room comes within Config.MaxIntakeWait, or whose requests out have not ended for
// Config.StallAfter, w is deferred, and so is the lane's overflow after it until its queue has
// drained to half, so one endpoint's backlog never holds the others of the
// partition back. offer returns once w is queued, handed off, or (ctx or the
// partition ended) left unfinished for the next owner.
func (s *Sender) offer(ctx context.Context, l *lane, w *work) {
	defer s.unroute(w)
	ep, _ := s.view.Get(w.d.EndpointID)
	var (
		waitStart time.Time
		timer     *time.Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		now := s.now()
		l.mu.Lock()
		l.configure(ep, s.cfg.InitialInFlight)
		l.lastUsed = now
		if !l.ordered && l.breaker.rejects(now) {
			after := l.breaker.remaining(now)
			l.mu.Unlock()
			s.goHandle(w, func(w *work) bool { return s.deferWork(w, deferCircuitOpen, after) })
			return
		}
		if !l.full(s.cfg.QueueSize) {
			s.enqueue(l, w) // unlocks
			return
		}
		if s.recordingBehind() { // waiting for Kafka to acknowledge attempts is not the endpoint's doing
			waitStart, l.slowSince = now, time.Time{}
		} else if waitStart.IsZero() {
			waitStart = now
		}
		if why := s.overflows(l, w, now, waitStart); why != "" {
			l.mu.Unlock()
			after := s.deferDelay(w.d)
			s.goHandle(w, func(w *work) bool { return s.deferWork(w, deferQueueFull, after) })
			return
		}
		room := l.roomSignal()
		l.mu.Unlock()
		// Wake on room, or soon anyway: a lane that stops making progress is judged again.
		if timer == nil {
			timer = time.NewTimer(intakeRecheck)
		} else {
			timer.Reset(intakeRecheck)
		}
		select {
		case <-room:
		case <-timer.C:
		case <-w.part.stopCtx.Done():
			s.release(w) // unfinished: the partition's next owner delivers it
			return
		case <-ctx.Done():
			s.release(w)
			return
		}
	}
}

// overflows decides, for w meeting its lane l full (l.mu held), whether w is deferred rather
// than wait for room, and says why ("" to wait). Waiting is the rule: a deferral costs a round
// through a retry tier and only helps when the wait would hold back another endpoint's records
// of w's partition (partition.holdsBack). Then w is deferred when the lane has had no room for
// Config.MaxIntakeWait (and its overflow is deferred at once until its queue drains to half),
// when it is deferring its overflow already or rate limited below the slot wait, or when it has
// been judged slow (lane.slowBecause) without a break for Config.MaxIntakeWait: a moment's
// slowness, such as the whole machine stalling for a few hundred milliseconds, is ridden out.
func (s *Sender) overflows(l *lane, w *work, now, waitStart time.Time) string {
	if !w.part.holdsBack(w.d.EndpointID) {
		l.slowSince = time.Time{}
		return ""
	}
	why := ""
	switch slow := l.slowBecause(now, s.cfg.MaxSlotWait, s.cfg.StallAfter); {
	case now.Sub(waitStart) >= s.cfg.MaxIntakeWait:
		why = "no room for " + s.cfg.MaxIntakeWait.String()
		l.deferring = true
	case slow == slowDeferring || slow == slowRateLimited:
		why = slow
	case slow == "":
		l.slowSince = time.Time{}
	default:
		if l.slowSince.IsZero() || now.Sub(l.slowSeen) > slowEpisodeGap {
			l.slowSince = now
		}
		l.slowSeen = now
		if now.Sub(l.slowSince) >= s.cfg.MaxIntakeWait {
			why = slow
		}
	}
	if why != "" && now.Sub(l.loggedAt) >= overflowLogEvery {
		l.loggedAt = now
		s.log.Info("deferring the overflow of a full endpoint queue", "endpoint_id", l.id, "why", why,
			"request_time", l.ewma, "gap_between_ends", l.gap, "in_flight_limit", l.limit(), "queued", len(l.queue))
	}
	return why
}

// enqueue appends w to l's queue and starts a worker if the lane may run another. The caller
// holds l.mu; enqueue releases it.
func (s *Sender) enqueue(l *lane, w *work) {
	l.queue = append(l.queue, w)
	start := l.running < l.limit()
	if start {
		l.running++
		s.wg.Add(1)
	}
	l.mu.Unlock()
	if start {
		go s.runLane(l)
	}
}

// deferDelay is the delay for work deferred from a full queue: DeferDelay doubled for each
// earlier deferral of the record from a full queue (Deferrals), up to MaxDeferDelay.
func (s *Sender) deferDelay(d records.Delivery) time.Duration {
	delay := s.cfg.DeferDelay
	for i := 0; i < d.Deferrals && delay < s.cfg.MaxDeferDelay; i++ {
		delay *= 2
	}
	return min(delay, s.cfg.MaxDeferDelay)
}

// goHandle runs fn for w in a goroutine of its own. fn reports whether w finished.
func (s *Sender) goHandle(w *work, fn func(*work) bool) {
	if !w.part.begin() {
		s.release(w)
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.end(w, fn(w))
	}()
}

// holdUnrecorded takes a slot of maxUnrecorded for w's answered request, waiting while they are
// all taken; its end gives it back. A partition that stops meanwhile lets w go on without one:
// its attempt is still recorded if Kafka allows.
func (s *Sender) holdUnrecorded(l *lane, w *work) {
	select {
	case s.unrecorded <- struct{}{}:
		w.unrecorded = true
		return
	default:
	}
	select {
	case s.unrecorded <- struct{}{}:
		w.unrecorded = true
	case <-w.part.stopCtx.Done():
	}
	// The wait was Kafka's: the lane's next request end is no measure of the endpoint's
	// service rate, and the lane has not stalled.
	l.mu.Lock()
	l.lastDone, l.doneBusy = s.now(), false
	l.mu.Unlock()
}

// recordingBehind reports whether the answered requests waiting for their attempt records'
// acknowledgement are at maxUnrecorded: the lanes then wait for Kafka, whatever their
// endpoints' pace, and none of them is slow for that.
func (s *Sender) recordingBehind() bool {
	return len(s.unrecorded) == cap(s.unrecorded)
}

// end closes the handling of w: finished records may be committed past; abandoned ones not.
func (s *Sender) end(w *work, finished bool) {
	if w.unrecorded {
		w.unrecorded = false
		<-s.unrecorded
	}
	if finished {
		w.part.finish(w.offset)
	} else {
		w.part.abandon()
	}
	s.release(w)
}

// hold counts an intaken record against the buffer caps.
func (s *Sender) hold(w *work) {
	s.m.buffered.Set(float64(s.buffered.Add(1)))
	s.bufferedBytes.Add(w.size)
}

// release forgets a buffered record and lets intake go on once both the records and their
// bytes are down to half their caps.
func (s *Sender) release(w *work) {
	n := s.buffered.Add(-1)
	b := s.bufferedBytes.Add(-w.size)
	s.m.buffered.Set(float64(n))
	if n > int64(s.cfg.MaxBuffered/2) || b > s.cfg.MaxBufferedBytes/2 {
		return
	}
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	if s.paused != nil {
		close(s.paused)
		s.paused = nil
		s.m.paused.Set(0)
		s.log.Debug("intake resumed", "buffered", n, "bytes", b)
	}
}

// waitForRoom holds intake while the buffered records or their bytes are at a cap, until
// release has brought both down to half, so memory stays bounded however large the backlog;
// false when ctx ends first. Holding intake is simply not polling: the client then keeps the
// one fetch it has buffered and fetches nothing more until that is consumed. (Pausing the
// topic instead would make the client drop what it has fetched, to fetch and decompress it
// all again after resuming.)
func (s *Sender) waitForRoom(ctx context.Context) bool {
	s.pauseMu.Lock()
	if s.buffered.Load() < int64(s.cfg.MaxBuffered) && s.bufferedBytes.Load() < s.cfg.MaxBufferedBytes {
		s.pauseMu.Unlock()
		return true
	}
	resume := make(chan struct{})
	s.paused = resume
	s.m.paused.Set(1)
	s.pauseMu.Unlock()
	s.log.Debug("intake held at the buffer cap", "buffered", s.buffered.Load(), "bytes", s.bufferedBytes.Load())
	select {
	case <-ctx.Done():
		return false
	case <-resume:
		return true
	}
}

func (s *Sender) laneFor(endpointID string) *lane {
	s.lanesMu.Lock()
	defer s.lanesMu.Unlock()
	l := s.lanes[endpointID]
	if l == nil {
		l = &lane{id: endpointID, clock: s.now, breaker: breaker{
			threshold: s.cfg.BreakerFailures,
			cooldown:  s.cfg.BreakerCooldown,
			onChange: func(open bool) {
				if open {
					s.m.circuitsOpen.Inc()
				} else {
					s.m.circuitsOpen.Dec()
				}
			},
		}}
		s.lanes[endpointID] = l
	}
	return l
}

// sweepLanes forgets idle lanes. It runs on the poll loop, the only creator of lanes, so a lane
// is never forgotten while the poll loop is about to offer it work.
func (s *Sender) sweepLanes(now time.Time) {
	s.lanesMu.Lock()
	defer s.lanesMu.Unlock()
	for id, l := range s.lanes {
		l.mu.Lock()
		idle := len(l.queue) == 0 && l.waiting == 0 && l.running == 0 && l.breaker.quiet() && now.Sub(l.lastUsed) > laneIdleTTL
		acc := l.access
		l.mu.Unlock()
		if idle {
			delete(s.lanes, id)
			if acc != nil && acc.own {
				acc.client.CloseIdleConnections()
			}
		}
	}
}

// dropQueued removes queued work of stopped partitions from every lane. It stays unfinished,
// so no commit passes it, and the partition's next owner delivers it.
func (s *Sender) dropQueued() {
	var dropped []*work
	s.lanesMu.Lock()
	for _, l := range s.lanes {
		l.mu.Lock()
		kept := l.queue[:0]
		for _, w := range l.queue {
			if w.part.isStopped() {
				dropped = append(dropped, w)
				continue
			}
			kept = append(kept, w)
		}
		clear(l.queue[len(kept):])
		l.queue = kept
		l.signalRoom()
		l.mu.Unlock()
	}
	s.lanesMu.Unlock()
	for _, w := range dropped {
		s.release(w)
	}
}

// runLane is a lane worker: it takes work in FIFO order until the queue is empty.
func (s *Sender) runLane(l *lane) {
	defer s.wg.Done()
	var prev *work
	for {
		w, ordered, probe, deferFor := s.next(l, prev)
		prev = w
		switch {
		case w == nil:
			return
		case deferFor > 0:
			s.end(w, s.deferWork(w, deferCircuitOpen, deferFor))
		case ordered:
			s.end(w, s.deliverOrdered(l, w))
		default:
			s.deliver(l, w, probe)
		}
	}
}

// next ends the worker's previous item (prev, nil for none) and pops the next one, begun.
// deferFor > 0 says the circuit refuses it. A nil item means the worker should exit: the queue
// is empty or the lane has more workers than its (possibly lowered) limit.
func (s *Sender) next(l *lane, prev *work) (w *work, ordered, probe bool, deferFor time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev != nil {
		l.busy--
		l.done(prev)
	}
	for {
		if len(l.queue) == 0 || l.running > l.limit() {
			l.running--
			l.lastUsed = s.now()
			return nil, false, false, 0
		}
		w = l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		if len(l.queue) == 0 {
			l.queue = nil // let the backing array go
		}
		l.signalRoom()
		if l.deferring && len(l.queue) <= s.cfg.QueueSize/2 {
			l.deferring = false // caught up: a full queue makes intake wait again
		}
		if !w.part.begin() {
			s.release(w)
			continue
		}
		if l.busy == 0 {
			l.busySince = s.now()
		}
		l.busy++
		if l.ordered {
			// The in-process hold is an ordered endpoint's breaker: deferring would let later
			// records overtake.
			return w, true, false, 0
		}
		now := s.now()
		ok, probe := l.breaker.acquire(now)
		if !ok {
			return w, false, false, l.breaker.remaining(now)
		}
		l.sent(w, now)
		return w, false, probe, 0
	}
}

// refusal is a delivery the sender will not send, recorded as a failed attempt (R13).
type refusal struct {
	category string
	reason   string
	// catchUp: the refusal may come from a view that lags behind the endpoints topic, so it
	// is checked again after catching up. A wrong owner or a foreign body is final at once.
	catchUp bool
}

// staleView is admit's answer when the view has not reached the endpoint version the record
// asks for: the record is deferred, not refused.
var staleView = &refusal{category: records.CategoryInternal, reason: "the endpoint view is behind the record's endpoint version"}

// admit re-checks tenancy, status and subscription at the sender's boundary (R13), against
// the current endpoint record. ok is false when the work was abandoned meanwhile.
//
// A delivery for another partner's endpoint (or an unknown one), or whose body is another
// partner's event, is refused with category tenant_mismatch and never sent. A disabled or
// paused endpoint, or one no longer subscribed to the type, is refused with category internal
// and the reason in the excerpt: the history shows why nothing was sent, and it is not
// retried (re-enabling an endpoint does not resurrect deliveries refused meanwhile; replay
// does). Test deliveries skip only the subscription check (R25).
func (s *Sender) admit(w *work) (ep *records.Endpoint, ref *refusal, ok bool) {
	check := func(ep *records.Endpoint) *refusal {
		d := w.d
		if endpoints.Receives(ep, d.PartnerID, d.EventType) && w.head.PartnerID == d.PartnerID {
			return nil
		}
		switch { // why not
		case ep == nil || ep.PartnerID != d.PartnerID:
			return &refusal{records.CategoryTenantMismatch,
				fmt.Sprintf("not sent: endpoint %s is not an endpoint of partner %s", d.EndpointID, d.PartnerID), ep == nil}
		case w.head.PartnerID != d.PartnerID:
			return &refusal{records.CategoryTenantMismatch, "not sent: the event body belongs to another partner", false}
		case ep.Status != "active":
			reason := "not sent: endpoint is " + ep.Status
			if ep.DisabledReason != "" {
				reason += " (" + ep.DisabledReason + ")"
			}
			return &refusal{records.CategoryInternal, reason, true}
		case !endpoints.Subscribed(ep.EventTypes, d.EventType):
			if d.Trigger == records.TriggerTest {
				return nil // a test event goes to the endpoint it is for (R25)
			}
			return &refusal{records.CategoryInternal, "not sent: endpoint is not subscribed to " + d.EventType, true}
		}
		return &refusal{records.CategoryInternal, "not sent: refused by the tenancy rule", true}
	}
	if v := w.d.EndpointVersion; v > 0 {
		// Read-your-writes (design.md section 7): a test or replay is made with the endpoint as it was when
		// the API answered, or later, never earlier; the view is waited for, bounded.
		if cur, _ := s.view.Get(w.d.EndpointID); cur == nil || cur.Version < v {
			ctx, cancel := context.WithTimeout(w.part.ctx, catchUpTimeout)
			err := s.view.WaitVersion(ctx, w.d.EndpointID, v)
			cancel()
			if w.part.ctx.Err() != nil {
				return nil, nil, false
			}
			if cur, _ := s.view.Get(w.d.EndpointID); err != nil && cur != nil && cur.Version < v {
				s.log.Warn("endpoint view behind the version a delivery asks for; deferred",
					"endpoint_id", w.d.EndpointID, "view_version", cur.Version, "version", v)
				return nil, staleView, true
			}
			// Not in the view at all: deleted, or never this partner's; the checks below say so.
		}
	}
	ep, _ = s.view.Get(w.d.EndpointID)
	ref = check(ep)
	if ref == nil || !ref.catchUp {
		return ep, ref, true
	}
	if !s.persist(w.part.ctx, "catch up with the endpoints topic", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
		defer cancel()
		return s.view.CatchUp(ctx)
	}) {
		return nil, nil, false
	}
	ep, _ = s.view.Get(w.d.EndpointID)
	return ep, check(ep), true
}

// deliver makes one attempt of w and hands the outcome to report, which does not hold one of
// the endpoint's max_in_flight slots: the slots bound requests, not acknowledgements. Those
// are bounded sender-wide by maxUnrecorded (holdUnrecorded), so a crash loses few.
func (s *Sender) deliver(l *lane, w *work, probe bool) {
	releaseProbe := func() {
		l.mu.Lock()
		l.breaker.release(probe)
		l.mu.Unlock()
	}
	ep, ref, ok := s.admit(w)
	if !ok {
		releaseProbe()
		s.end(w, false)
		return
	}
	if ref == staleView {
		releaseProbe()
		s.goHandle(w, func(w *work) bool { return s.deferWork(w, deferStaleView, staleViewRetry) })
		return
	}
	if ref != nil {
		releaseProbe()
		s.produceAttemptAsync(w, s.refusalAttempt(w.d, ref))
		return
	}
	res, sent, ok := s.attemptOnce(l, w.part, ep, w.d)
	if !ok {
		releaseProbe()
		s.end(w, false)
		return
	}
	if !sent {
		releaseProbe()
	} else {
		s.holdUnrecorded(l, w)
		l.mu.Lock()
		l.breaker.record(res.failure == nil, probe, s.now())
		res.circuit, res.circuitProbeAt = l.breaker.report()
		at := s.now().UTC()
		res.circuitAt = &at
		l.mu.Unlock()
	}
	s.report(w, ep, res)
}

// report ends w with the outcome of its attempt. A retryable failure goes to the retrier first,
// which may wait on Kafka, in a goroutine of its own; any other outcome only needs its attempt
// record, produced asynchronously.
func (s *Sender) report(w *work, ep *records.Endpoint, res result) {
	if f := res.failure; f != nil && f.Retryable {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.end(w, s.conclude(w, ep, w.d, res))
		}()
		return
	}
	s.produceAttemptAsync(w, attemptOf(w.d, res))
}

// attemptOnce signs and sends d to ep after waiting for the rate limit. sent is false when no
// request was made (the secrets could not be opened); ok is false when the work was abandoned.
func (s *Sender) attemptOnce(l *lane, part *partition, ep *records.Endpoint, d records.Delivery) (res result, sent, ok bool) {
	now := s.now()
	signer, err := l.signerFor(ep, s.cfg.SecretKey, now)
	if err != nil {
		s.log.Error("cannot sign for endpoint", "endpoint_id", ep.ID, "err", err)
		return result{started: now, failure: &Failure{Category: records.CategoryInternal, Retryable: true, Err: err},
			excerpt: excerpt([]byte("not sent: " + err.Error()))}, false, true
	}
	acc, err := s.accessFor(l, ep)
	if err != nil {
		s.log.Error("cannot open the endpoint's request options", "endpoint_id", ep.ID, "err", err)
		return result{started: now, failure: &Failure{Category: records.CategoryInternal, Retryable: true, Err: err},
			excerpt: excerpt([]byte("not sent: " + err.Error()))}, false, true
	}
	l.mu.Lock()
	limiter := l.limiter
	l.mu.Unlock()
	if limiter != nil && limiter.Wait(part.stopCtx) != nil {
		return res, false, false
	}
	s.m.inFlight.Inc()
	ctx, span := s.startAttempt(part.ctx, &d)
	res = s.poster.post(ctx, ep.URL, signer, d.EventID, d.Body, acc)
	endAttempt(span, &res)
	s.m.inFlight.Dec()
	if res.abandoned {
		return res, false, false
	}
	if f := res.failure; f != nil && f.ClientError {
		// The endpoint's policy for other 4xx, per event type, over the deployment's (R20).
		f.Retryable = retrypolicy.RetryClientErrors(ep.RetryPolicy, d.EventType, s.cfg.RetryClientErrors)
	}
	s.m.latency.Observe(res.latency.Seconds())
	l.mu.Lock()
	l.observe(res.latency, res.failure != nil, s.now())
	l.mu.Unlock()
	return res, true, true
}

// deliverOrdered delivers w to an ordered endpoint: one request at a time, in offset order
// (the lane has a single worker), and a failing record holds back the endpoint's later ones
// instead of being overtaken (design.md section 7). The failing head is retried in process,
// each attempt reported as retrying with its next attempt time, with a backoff doubling from
// OrderedBackoff up to OrderedMaxBackoff (or the receiver's Retry-After if longer). Its offset
// stays unfinished meanwhile, so a crash or a rebalance redelivers it first.
//
// Limits: the hold lasts at most OrderedMaxHold; after that the head is handed to the retry
// tiers like any failure and the next record proceeds, so an outage longer than that breaks
// the order. While a head is held, the partition's committed offset cannot pass it, so a
// restart redelivers what other endpoints of the partition finished meanwhile (duplicates,
// which the contract allows). Records beyond the endpoint's queue are deferred to a retry
// tier and can come back out of order; size QueueSize for the bursts of ordered endpoints.
// A held head abandoned by a rebalance is delivered again by the next owner with its
// original attempt number.
func (s *Sender) deliverOrdered(l *lane, w *work) bool {
	d := w.d
	heldSince := s.now()
	backoff := s.cfg.OrderedBackoff
	for {
		ep, ref, ok := s.admit(w)
		if !ok {
			return false
		}
		if ref == staleView {
			return s.deferWork(w, deferStaleView, staleViewRetry)
		}
		if ref != nil {
			return s.produceAttempt(w.part.ctx, s.refusalAttempt(d, ref))
		}
		res, _, ok := s.attemptOnce(l, w.part, ep, d)
		if !ok {
			return false
		}
		if res.failure == nil || !res.failure.Retryable {
			return s.conclude(w, ep, d, res)
		}
		wait := jitter(backoff)
		if ra := res.failure.RetryAfter; ra > wait {
			wait = ra
		}
		if s.now().Add(wait).Sub(heldSince) > s.cfg.OrderedMaxHold {
			return s.conclude(w, ep, d, res) // to the retry tiers; the order gives way
		}
		a := attemptOf(d, res)
		next := s.now().Add(wait).UTC()
		a.Outcome, a.NextAttemptAt = records.OutcomeRetrying, &next
		if !s.produceAttempt(w.part.ctx, a) {
			return false
		}
		if !sleep(w.part.stopCtx, wait) {
			return false
		}
		d.AttemptNo++
		d.Trigger = records.TriggerRetry
		backoff = min(backoff*2, s.cfg.OrderedMaxBackoff)
	}
}

// conclude reports a finished attempt: a retryable failure is first handed to the retrier (the
// attempt it sees has outcome failed and no next attempt time), whose answer decides between
// retrying (with the next attempt time) and failed (exhausted), by the endpoint's retry policy.
func (s *Sender) conclude(w *work, ep *records.Endpoint, d records.Delivery, res result) bool {
	a := attemptOf(d, res)
	if f := res.failure; f != nil && f.Retryable {
		var (
			next  time.Time
			final bool
		)
		if !s.persist(w.part.ctx, "schedule a retry", func(ctx context.Context) error {
			var err error
			next, final, err = s.retrier.Schedule(ctx, d, a, f.RetryAfter, ep.RetryPolicy)
			return err
		}) {
			return false
		}
		if final {
			a.Outcome = records.OutcomeFailed
		} else {
			next = next.UTC()
			a.Outcome, a.NextAttemptAt = records.OutcomeRetrying, &next
		}
	}
	return s.produceAttempt(w.part.ctx, a)
}

// refusalAttempt logs a delivery that is not sent and returns the attempt record that says why.
func (s *Sender) refusalAttempt(d records.Delivery, ref *refusal) records.Attempt {
	s.log.Warn("delivery refused", "delivery_id", d.DeliveryID, "endpoint_id", d.EndpointID,
		"partner_id", d.PartnerID, "category", ref.category, "reason", ref.reason)
	return attemptOf(d, result{started: s.now(), failure: &Failure{Category: ref.category}, excerpt: ref.reason})
}

// attemptOf builds the evidence of an attempt (design.md section 7); the outcome is delivered
// or failed until conclude says otherwise.
func attemptOf(d records.Delivery, res result) records.Attempt {
	a := records.Attempt{
		V:               records.AttemptVersion,
		DeliveryID:      d.DeliveryID,
		EventID:         d.EventID,
		EndpointID:      d.EndpointID,
		PartnerID:       d.PartnerID,
		EventType:       d.EventType,
		AttemptNo:       d.AttemptNo,
		Trigger:         d.Trigger,
		StartedAt:       res.started.UTC(),
		Status:          res.status,
		LatencyMS:       res.latency.Milliseconds(),
		Outcome:         records.OutcomeDelivered,
		ResponseExcerpt: res.excerpt,
		Traceparent:     cmp.Or(res.traceparent, d.Traceparent),
		Circuit:         res.circuit,
		CircuitProbeAt:  res.circuitProbeAt,
		CircuitAt:       res.circuitAt,
	}
	if res.failure != nil {
		a.Outcome = records.OutcomeFailed
		a.ErrorCategory = res.failure.Category
	}
	return a
}

// produceAttempt writes a to the attempts topic (key delivery_id) and waits for the ack.
func (s *Sender) produceAttempt(ctx context.Context, a records.Attempt) bool {
	r := s.attemptRecord(a)
	if !s.persist(ctx, "produce an attempt record", func(ctx context.Context) error {
		return s.producer.ProduceSync(ctx, r).FirstErr()
	}) {
		return false
	}
	s.countAttempt(a)
	return true
}

// produceAttemptAsync ends w once a is in the attempts topic. The common case costs no goroutine:
// the producer's callback ends w. A failed produce falls back to produceAttempt's retries.
func (s *Sender) produceAttemptAsync(w *work, a records.Attempt) {
	r := s.attemptRecord(a)
	s.wg.Add(1)
	s.producer.Produce(w.part.ctx, r, func(_ *kgo.Record, err error) {
		if err == nil {
			s.countAttempt(a)
			s.end(w, true)
			s.wg.Done()
			return
		}
		go func() {
			defer s.wg.Done()
			s.end(w, s.produceAttempt(w.part.ctx, a))
		}()
	})
}

func (s *Sender) attemptRecord(a records.Attempt) *kgo.Record {
	r := &kgo.Record{Topic: s.names.Attempts, Key: []byte(a.DeliveryID), Value: a.AppendJSON(nil)}
	tracing.SetHeader(r, a.Traceparent)
	return r
}

func (s *Sender) countAttempt(a records.Attempt) {
	category := a.ErrorCategory
	if category == "" {
		category = "none"
	}
	s.m.attempts.WithLabelValues(a.Outcome, category).Inc()
}

// deferWork hands w to the retrier without an attempt. A deferral from a full queue counts in
// the record's Deferrals, on which the next one's delay backs off (deferDelay); one while the
// circuit is open does not: its delay is the circuit's, and counting it put a record that met a
// full queue as its endpoint recovered off for a minute.
func (s *Sender) deferWork(w *work, reason string, after time.Duration) bool {
	d := w.d
	if reason == deferQueueFull {
		d.Deferrals++
	}
	if !s.persist(w.part.ctx, "defer a delivery", func(ctx context.Context) error {
		return s.retrier.Defer(ctx, d, after)
	}) {
		return false
	}
	s.m.deferrals.WithLabelValues(reason).Inc()
	return true
}

// deadLetter writes an undeliverable record to the dlq topic with the reason.
func (s *Sender) deadLetter(w *work, key, value []byte, reason string) bool {
	v, err := deadLetterValue(value, w.d, reason, s.now())
	if err != nil {
		s.log.Error("dead letter", "err", err)
		return false
	}
	r := &kgo.Record{Topic: s.names.DLQ, Key: key, Value: v}
	return s.persist(w.part.ctx, "produce a dead letter", func(ctx context.Context) error {
		return s.producer.ProduceSync(ctx, r).FirstErr()
	})
}

// persist runs fn until it succeeds, backing off between failures, or until ctx ends (false).
// A Kafka write that keeps failing holds its record unfinished rather than losing it.
func (s *Sender) persist(ctx context.Context, what string, fn func(context.Context) error) bool {
	backoff := 100 * time.Millisecond
	for {
		err := fn(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		s.log.Warn("cannot "+what+"; retrying", "err", err, "in", backoff)
		if !sleep(ctx, backoff) {
			return false
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// --- partitions and commits ---

func (s *Sender) partitionOf(id int32) *partition {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	return s.parts[id]
}

func (s *Sender) onAssigned(_ context.Context, cl *kgo.Client, assigned map[string][]int32) {
	// A pause of an earlier assignment's feeder (feed) must not outlive it: the new owner
	// starts fetching.
	cl.ResumeFetchPartitions(assigned)
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	for _, id := range assigned[s.names.Deliveries] {
		if old := s.parts[id]; old != nil {
			old.stop()
			old.cancel()
		}
		s.parts[id] = newPartition(s.workCtx, s.names.Deliveries, id)
	}
	s.m.partitions.Set(float64(len(s.parts)))
	s.log.Info("partitions assigned", "partitions", assigned[s.names.Deliveries])
}

// onRevoked stops the revoked partitions, lets their requests in flight finish (up to
// ShutdownGrace), and commits each up to its lowest unfinished record before the rebalance
// goes on: nothing unfinished is committed, so the next owner delivers it (at least once).
func (s *Sender) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	parts := s.detach(revoked[s.names.Deliveries])
	if len(parts) == 0 {
		return
	}
	s.log.Info("partitions revoked", "partitions", revoked[s.names.Deliveries])
	s.retire(parts, time.Now().Add(s.cfg.ShutdownGrace))
	s.commit(ctx, cl, parts)
	for _, p := range parts {
		p.cancel()
	}
}

// onLost drops lost partitions at once: another member owns them and a commit would fail.
func (s *Sender) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	parts := s.detach(lost[s.names.Deliveries])
	for _, p := range parts {
		p.stop()
		p.cancel()
	}
	s.dropQueued()
	if len(parts) > 0 {
		s.log.Warn("partitions lost", "partitions", lost[s.names.Deliveries])
	}
}

// detach removes the given partitions from the assignment and returns them. franz-go calls
// the revoke callback with no partitions at the end of a cooperative session: that detaches
// nothing.
func (s *Sender) detach(ids []int32) []*partition {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	var out []*partition
	for _, id := range ids {
		if p := s.parts[id]; p != nil {
			out = append(out, p)
			delete(s.parts, id)
		}
	}
	s.m.partitions.Set(float64(len(s.parts)))
	return out
}

// detachAll removes every partition from the assignment and returns them (shutdown).
func (s *Sender) detachAll() []*partition {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	out := make([]*partition, 0, len(s.parts))
	for id, p := range s.parts {
		out = append(out, p)
		delete(s.parts, id)
	}
	s.m.partitions.Set(0)
	return out
}

// retire stops parts, drops their queued work and waits until their running work finishes or
// the deadline passes; then what still runs is cancelled and stays unfinished.
func (s *Sender) retire(parts []*partition, deadline time.Time) {
	for _, p := range parts {
		p.stop()
	}
	s.dropQueued()
	for _, p := range parts {
		if !p.waitIdle(deadline) {
			s.log.Warn("work still running after the grace period is abandoned uncommitted", "partition", p.id)
			p.cancel()
		}
	}
}

// commitLoop commits the marks of the assigned partitions every CommitInterval.
func (s *Sender) commitLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.CommitInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.partsMu.Lock()
		parts := make([]*partition, 0, len(s.parts))
		for _, p := range s.parts {
			parts = append(parts, p)
		}
		s.partsMu.Unlock()
		s.commit(ctx, s.consumer, parts)
	}
}

// commit commits each partition up to its mark, the lowest unfinished record.
func (s *Sender) commit(ctx context.Context, cl *kgo.Client, parts []*partition) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	offsets := map[int32]kgo.EpochOffset{}
	byID := map[int32]*partition{}
	for _, p := range parts {
		if eo, ok := p.mark(); ok {
			offsets[p.id] = eo
			byID[p.id] = p
		}
	}
	if len(offsets) == 0 {
		return
	}
	cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{s.names.Deliveries: offsets},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				if ctx.Err() == nil {
					s.m.commitErrors.Inc()
					s.log.Warn("offset commit failed", "err", err)
				}
				return
			}
			for _, t := range resp.Topics {
				for _, rp := range t.Partitions {
					if rp.ErrorCode != 0 {
						s.m.commitErrors.Inc()
						s.log.Warn("offset commit refused", "partition", rp.Partition, "code", rp.ErrorCode)
						continue
					}
					if p := byID[rp.Partition]; p != nil {
						p.committedAt(offsets[rp.Partition].Offset)
					}
				}
			}
		})
}

// sleep waits for d or until ctx ends; it reports whether the whole wait passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// jitter spreads d by ±20 %, as the retry schedule does (design.md section 8).
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}
