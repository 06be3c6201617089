package sender

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/webhook"
)

// work is one delivery record on its way through the sender.
type work struct {
	part   *partition
	lane   *lane // the endpoint's lane, once intake has routed the record to it
	offset int64
	d      records.Delivery
	head   envelopeHead
	size   int64 // bytes of the record value, against Config.MaxBufferedBytes
	// unrecorded: w holds a slot of maxUnrecorded, from its answered request until its end
	unrecorded bool
	// partner: w counts against its partner's share of the buffer (takeShare) until released
	partner *partnerState
}

// lane is one endpoint's share of the sender (R21): a bounded FIFO queue, an adaptive number of
// workers never above max_in_flight (one for an ordered endpoint), an optional rate limit and a
// circuit breaker. Workers start when work arrives and exit when the queue is empty, so an idle
// endpoint costs no goroutine. Lanes are created and removed only by the poll loop, so an
// endpoint never has two.
type lane struct {
	id string

	mu         sync.Mutex
	queue      []*work
	running    int // workers
	busy       int // workers holding an item
	conc       concurrency
	ordered    bool
	limiter    *rate.Limiter // nil: no rate limit
	ratePerSec float64
	configured *records.Endpoint // the view's value the settings were taken from
	breaker    breaker
	signerKey  string
	signer     *webhook.Signer
	access     *access // the endpoint's request options, opened (requestoptions.go)
	lastUsed   time.Time
	waiting    int // records routed here that their partition's feeder has not offered yet
	// recordWaits: workers holding an answered request while every slot of maxUnrecorded is
	// taken (holdUnrecorded). Meanwhile the lane's lack of room is Kafka's, not the endpoint's,
	// so intake neither times its wait nor judges the lane slow. A lane whose own requests
	// hang has none, however far behind the recording of other lanes is.
	recordWaits int
	// partnerWaits: workers waiting for their partner's gate (enterGate); the same holds.
	partnerWaits int

	ewma      time.Duration // smoothed request time
	gap       time.Duration // smoothed time between request ends while work waited
	lastDone  time.Time     // when a request last ended
	busySince time.Time     // when the lane last went from no item held to one
	doneBusy  bool          // work was waiting when the last request ended
	deferring bool          // overflow is deferred at once until the queue drains to half
	room      chan struct{} // closed when a queued item is taken; intake may wait on it
	slowSince time.Time     // when the lane's current episode of slowness began (zero: none)
	slowSeen  time.Time     // when it was last judged slow
	loggedAt  time.Time     // when its overflow's deferral was last logged

	// Requests out and since when, to tell stragglers (see stragglerFloor).
	clock        func() time.Time
	out          map[*work]time.Time
	stragglers   int       // of out, counted at stragglersAt
	stragglersAt time.Time // zero: to count
}

// Stragglers. A receiver that answers fast but leaves an occasional request hanging until the
// sender's timeout would otherwise lose a slot of its concurrency for the whole timeout per
// hanging request: at 500 requests/s, one in 500 hanging for 15 s holds 15 slots, more than the
// limit usually is, and the endpoint stalls although it answers the rest in milliseconds. A
// request out for longer than stragglerFactor times the endpoint's baseline latency, and at
// least stragglerFloor, is a straggler: it no longer counts against the adaptive limit, so
// another request may start in its place, never above max_in_flight. An endpoint slow for every
// request has a baseline as slow, so its requests are not stragglers and its limit binds.
const (
	stragglerFloor  = time.Second
	stragglerFactor = 20
	// stragglerRecount bounds how stale the straggler count may be.
	stragglerRecount = 10 * time.Millisecond
)

// countStragglers returns how many requests out are stragglers, counted at most every
// stragglerRecount.
func (l *lane) countStragglers() int {
	if len(l.out) == 0 {
		return 0
	}
	now := l.clock()
	if !l.stragglersAt.IsZero() && now.Sub(l.stragglersAt) < stragglerRecount {
		return l.stragglers
	}
	after := max(stragglerFloor, stragglerFactor*l.conc.baseline)
	n := 0
	for _, since := range l.out {
		if now.Sub(since) > after {
			n++
		}
	}
	l.stragglers, l.stragglersAt = n, now
	return n
}

// sent marks w as a request out from now; done marks it ended.
func (l *lane) sent(w *work, now time.Time) {
	if l.out == nil {
		l.out = map[*work]time.Time{}
	}
	l.out[w] = now
}

func (l *lane) done(w *work) {
	if _, ok := l.out[w]; ok {
		delete(l.out, w)
		l.stragglersAt = time.Time{}
	}
}

// configure takes the endpoint's limits from its current record; nil (not in the view) keeps
// the previous settings, or the defaults for a new lane. The concurrency starts at initial
// (or max_in_flight if lower) and adapts below max_in_flight.
func (l *lane) configure(ep *records.Endpoint, initial int) {
	if ep == nil {
		if l.conc.ceiling == 0 {
			l.conc.reset(initial, initial)
		}
		return
	}
	if ep == l.configured {
		return
	}
	l.configured = ep
	ceiling := ep.MaxInFlight
	if ceiling <= 0 {
		ceiling = initial
	}
	if l.conc.ceiling == 0 {
		l.conc.reset(initial, ceiling)
	} else {
		l.conc.setCeiling(ceiling)
	}
	l.ordered = ep.Ordered
	switch r := ep.RateLimitPerSec; {
	case r == nil || *r <= 0:
		l.limiter, l.ratePerSec = nil, 0
	case l.limiter == nil:
		// A burst of one: never more than one request ahead of the rate.
		l.limiter, l.ratePerSec = rate.NewLimiter(rate.Limit(*r), 1), *r
	case *r != l.ratePerSec:
		l.limiter.SetLimit(rate.Limit(*r))
		l.ratePerSec = *r
	}
}

// limit is the number of workers the lane may run now: the adaptive limit, plus a worker for
// each straggler, never above max_in_flight.
func (l *lane) limit() int {
	if l.ordered {
		return 1
	}
	return min(l.conc.current()+l.countStragglers(), l.conc.ceiling)
}

// full reports whether the lane's queue holds queueSize records waiting for a worker. Records
// taken by a worker are not waiting, nor are records a just-started worker has yet to take.
func (l *lane) full(queueSize int) bool {
	return len(l.queue)+l.busy >= queueSize+l.limit()
}

// observe takes the outcome of a request that was sent: it feeds the smoothed request time, the
// smoothed gap between request ends while work waits (the lane's service rate), and the
// adaptive concurrency, and returns what it changed of the latter (concurrency.observe).
func (l *lane) observe(latency time.Duration, failed bool, now time.Time) string {
	l.ewma = smooth(l.ewma, latency)
	waiting := len(l.queue) > 0
	if waiting && l.doneBusy {
		l.gap = smooth(l.gap, now.Sub(l.lastDone))
	}
	l.lastDone, l.doneBusy = now, waiting
	return l.conc.observe(latency, failed, waiting, now)
}

// smooth folds sample into the moving average avg (zero: none yet).
func smooth(avg, sample time.Duration) time.Duration {
	if avg == 0 {
		return sample
	}
	return avg + time.Duration(ewmaWeight*float64(sample-avg))
}

// Why a lane is slow (slowBecause).
const (
	slowDeferring   = "deferring its overflow"
	slowRateLimited = "rate limited"
	slowStalled     = "stalled"
	slowService     = "slow service"
)

// slowBecause says why waiting for room in the lane's full queue would hold intake back ("" when
// it would not): the lane is deferring its overflow already (a wait for room timed out and its
// queue has not drained to half since); or it is rate limited below maxSlotWait; or it has
// requests out and none has ended for stallAfter (a hanging receiver, caught before its first
// timeout); or a slot frees less often than every maxSlotWait. The service rate is measured as
// the gap between request ends while work waited; before there is a measure, it is estimated
// from the request time over the concurrency.
func (l *lane) slowBecause(now time.Time, maxSlotWait, stallAfter time.Duration) string {
	switch {
	case l.deferring:
		return slowDeferring
	case l.limiter != nil && time.Duration(float64(time.Second)/l.ratePerSec) > maxSlotWait:
		return slowRateLimited
	case l.busy > 0 && now.Sub(latest(l.lastDone, l.busySince)) > stallAfter:
		return slowStalled
	case l.gap > 0 && l.gap > maxSlotWait, l.gap == 0 && l.ewma/time.Duration(l.limit()) > maxSlotWait:
		return slowService
	}
	return ""
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// roomSignal returns a channel closed when a worker next takes a queued item.
func (l *lane) roomSignal() <-chan struct{} {
	if l.room == nil {
		l.room = make(chan struct{})
	}
	return l.room
}

// signalRoom wakes intake waiting for room.
func (l *lane) signalRoom() {
	if l.room != nil {
		close(l.room)
		l.room = nil
	}
}

// signerFor returns a signer for the endpoint's active secrets (expires_at unset or in the
// future), newest first, opened with the processes' keyring. It is rebuilt only when the set of
// active secrets or the endpoint record changes.
func (l *lane) signerFor(ep *records.Endpoint, keys secretbox.Keyring, now time.Time) (*webhook.Signer, error) {
	active := make([]records.Secret, 0, len(ep.Secrets))
	for _, s := range ep.Secrets {
		if s.ExpiresAt == nil || s.ExpiresAt.After(now) {
			active = append(active, s)
		}
	}
	if len(active) == 0 {
		return nil, fmt.Errorf("endpoint has no active signing secret")
	}
	slices.SortStableFunc(active, func(a, b records.Secret) int { return b.CreatedAt.Compare(a.CreatedAt) })
	ids := make([]string, len(active))
	for i, s := range active {
		ids[i] = s.ID
	}
	cacheKey := strconv.FormatUint(uint64(ep.LSN), 10) + "/" + strings.Join(ids, ",")

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.signer != nil && l.signerKey == cacheKey {
		return l.signer, nil
	}
	plain := make([]string, len(active))
	for i, s := range active {
		p, err := keys.Open(s.Ciphertext, secretbox.AAD(ep.ID, s.ID))
		if err != nil {
			// Never sign with a subset: receivers mid-rotation might hold only the other one.
			return nil, fmt.Errorf("secret %s cannot be opened (check HOOKSTREAM_SECRET_KEY and HOOKSTREAM_SECRET_KEYS): %w", s.ID, err)
		}
		plain[i] = string(p)
	}
	signer, err := webhook.NewSigner(plain...)
	if err != nil {
		return nil, fmt.Errorf("endpoint secrets: %w", err)
	}
	l.signer, l.signerKey = signer, cacheKey
	return signer, nil
}
