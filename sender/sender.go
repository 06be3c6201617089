package sender

import (
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

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/records"
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
	// deferPartnerShare: the record's partner holds its share of the buffer and the partition
	// carries another partner's records, which pausing it would hold back (partners.go).
	deferPartnerShare = "partner_share"
)

// deferReasons lists the deferral reasons: the deferrals metric exports each at 0 from the start.
var deferReasons = []string{deferCircuitOpen, deferQueueFull, deferNotDue, deferStaleView, deferPartnerShare}

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
	// lostHold is how long the work of a lost partition may go on (its requests answered, its
	// attempt records waiting for the broker to come back) before it is abandoned; lostWait,
	// how long an assignment of the partition again waits for that work to end.
	lostHold = time.Minute
	lostWait = 5 * time.Second
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
	// txns: each partition's transaction watch, kept across its assignments (uncommitted.go).
	txns map[int32]*txnWatch
	// lost: partitions the group session lost (a broker or coordinator outage, mostly), whose
	// running work goes on; if one is assigned again, what it finished is not sent again
	// (assignment.go, onLost).
	lost map[int32]*partition

	lanesMu sync.Mutex
	lanes   map[string]*lane
	// holds are the ordered endpoints' heads held now (ordering.go).
	holdsMu sync.Mutex
	holds   map[*orderHold]struct{}

	// partnersMu guards partners and activePartners (partners.go); it is taken before any
	// partition's feedMu, never after.
	partnersMu     sync.Mutex
	partners       map[string]*partnerState
	activePartners int // partners with records buffered

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
		lost:    map[int32]*partition{},
		lanes:   map[string]*lane{},
		holds:   map[*orderHold]struct{}{},
		tokens:  map[string]*tokenSource{},

		partners: map[string]*partnerState{},

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
		// cdc and fanout write deliveries in transactions; the sender takes them as they are
		// written, and passes over the copy of a record whose transaction aborted
		// (uncommitted.go, design.md section 6).
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		kgo.KeepControlRecords(),
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
			s.sweepPartners(now)
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
