package sender

import (
	"math"
	"time"
)

// Adaptive concurrency (AIMD on latency). The numbers are policy, documented in doc.go.
const (
	// latencyTolerance is added to twice the baseline before a round counts as slowed, so that
	// a receiver answering in well under a millisecond is not judged by scheduling noise: on a
	// busy host the latency of a fast receiver is mostly the run queues of both ends, and it
	// grows with the concurrency without the receiver slowing down.
	latencyTolerance = 10 * time.Millisecond
	// baselineWindow: the baseline (the lowest latency seen) is taken afresh after this long,
	// so an endpoint that got slower for good is judged against its new normal.
	baselineWindow = 30 * time.Second
	// slowedFactor and failedFactor shrink the limit after a round whose successes slowed down,
	// or more than half of which failed; once per round, so a burst of failures in flight
	// halves it once.
	slowedFactor = 0.9
	failedFactor = 0.5
	// ewmaWeight is the weight of a new sample in the lane's smoothed request time.
	ewmaWeight = 0.2
	// demandWindow is the span over which an endpoint's demand (records offered to it a second)
	// is counted.
	demandWindow = time.Second
)

// concurrency is an endpoint's adaptive limit of requests in flight: additive increase while
// the endpoint answers as fast as its baseline and work is waiting, multiplicative decrease when
// its latency rises (down to the starting limit) or a request fails (down to 1). It never
// leaves [1, ceiling]. Requests are judged in rounds of `limit` completions, about one round
// trip of the whole window. The caller serialises access (lane.mu).
type concurrency struct {
	limit   float64
	ceiling int
	// floor is the starting limit, below which latency alone never cuts: it is the pressure
	// every endpoint gets before anything is measured, and on a busy host a fast receiver's
	// latency rises with the host's stalls, not with our requests (make bench c: a steady
	// 1,000 requests a second, cut hundreds of times a minute below the 8 that carried it with
	// no request waiting, queued behind the cuts). Failures still halve the limit down to 1.
	floor float64

	// The endpoint's demand: records offered to it a second, counted over demandWindow. Latency
	// alone never cuts below what carries the demand at the latency a round may have before it
	// counts as slowed (demandFloor): a cut below it only moves the wait from the receiver into
	// the lane's queue (make bench c2: a steady 2,000 requests a second on a saturated host,
	// cut hundreds of times a minute to 8, whose p99 was that queue).
	demand       float64
	offered      int
	offeredSince time.Time

	baseline   time.Duration // lowest latency in the current window
	baselineAt time.Time     // when the window began

	roundN         int
	roundOK        int           // requests of this round that succeeded
	roundSum       time.Duration // their latency
	roundFailed    int
	roundSaturated bool // work was waiting when a request of this round ended
}

// reset sets the starting limit and the ceiling (an endpoint's max_in_flight).
func (c *concurrency) reset(initial, ceiling int) {
	c.ceiling = max(1, ceiling)
	c.limit = float64(min(max(1, initial), c.ceiling))
	c.floor = c.limit
	c.newRound()
}

// setCeiling changes the ceiling, keeping what was learned below it.
func (c *concurrency) setCeiling(ceiling int) {
	c.ceiling = max(1, ceiling)
	c.limit = min(c.limit, float64(c.ceiling))
	c.floor = min(c.floor, float64(c.ceiling))
}

// current is the number of requests allowed in flight now.
func (c *concurrency) current() int { return int(c.limit) }

// offer counts a record offered to the endpoint, for its demand.
func (c *concurrency) offer(now time.Time) {
	if c.offeredSince.IsZero() {
		c.offeredSince = now
	}
	if span := now.Sub(c.offeredSince); span >= demandWindow {
		c.demand = float64(c.offered) / span.Seconds()
		c.offered, c.offeredSince = 0, now
	}
	c.offered++
}

// demandFloor is the concurrency that carries the endpoint's demand at the slowest latency a
// round may have without counting as slowed (Little's law), never above the ceiling.
func (c *concurrency) demandFloor() float64 {
	tolerated := 2*c.baseline + latencyTolerance
	return min(math.Ceil(c.demand*tolerated.Seconds()), float64(c.ceiling))
}

// observe takes the outcome of one request: its latency, whether it failed, and whether work
// was waiting for a slot when it ended (only a limit that binds is worth raising).
//
// A round is judged when it ends: more than half of it failed (an endpoint down or shedding
// load) halves the limit; otherwise the mean latency of its successes above twice the baseline
// plus latencyTolerance cuts it by 10 %, never below the starting limit (floor) nor the
// demand's (demandFloor); otherwise, if work waited, it rises by one. Single failures among
// successes (a receiver's occasional 500 or timeout) do not cut it, and a failure's latency (a
// timeout's is the request timeout) never counts as the endpoint slowing: an endpoint answering
// 10 % of requests with errors keeps its concurrency (the breaker and the retry schedule handle
// the failures).
//
// It returns what the round's end changed ("" when nothing): the sender counts the changes by
// kind (hookstream_sender_concurrency_changes_total).
func (c *concurrency) observe(latency time.Duration, failed, saturated bool, now time.Time) string {
	if failed {
		c.roundFailed++
	} else {
		c.roundOK++
		c.roundSum += latency
		if c.baseline == 0 || latency < c.baseline || now.Sub(c.baselineAt) > baselineWindow {
			c.baseline, c.baselineAt = latency, now
		}
	}
	c.roundN++
	c.roundSaturated = c.roundSaturated || saturated
	if c.roundN < c.current() {
		return ""
	}
	next, change := c.limit, ""
	switch {
	case 2*c.roundFailed > c.roundN:
		next, change = max(1, c.limit*failedFactor), changeFailed
	case c.roundOK > 0 && c.roundSum/time.Duration(c.roundOK) > 2*c.baseline+latencyTolerance:
		next, change = min(c.limit, max(c.floor, c.demandFloor(), c.limit*slowedFactor)), changeSlowed
	case c.roundSaturated:
		next, change = min(c.limit+1, float64(c.ceiling)), changeRaised
	}
	c.newRound()
	if next == c.limit {
		return "" // at the floor or the ceiling already
	}
	c.limit = next
	return change
}

// The changes a round's end makes to an endpoint's limit: cut by half (most of the round
// failed), cut by 10 % (its successes slowed down), raised by one (answered at the baseline
// with work waiting); none at the floor of 1 or the ceiling.
const (
	changeFailed = "failed"
	changeSlowed = "slowed"
	changeRaised = "raised"
)

var concurrencyChanges = []string{changeFailed, changeSlowed, changeRaised}

func (c *concurrency) newRound() {
	c.roundN, c.roundOK, c.roundSum, c.roundFailed, c.roundSaturated = 0, 0, 0, 0, false
}
