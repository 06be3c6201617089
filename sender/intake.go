package sender

// Intake and flow control: records taken from Kafka, routed to their endpoint's lane by their
// partition's feeder, and offered to the lane, waiting for room or deferred (doc.go, design.md
// section 6); the buffer caps; the lanes' lifecycle.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// intake routes one record. It never waits: everything that waits runs in the endpoint's
// lane, in its partition's feeder (the wait for room in a fast endpoint's lane, offer) or in a
// goroutine of its own, bounded by Config.MaxBuffered and MaxBufferedBytes, at which the poll
// loop stops taking records: that is the backpressure that paces intake to the endpoints' rate.
func (s *Sender) intake(ctx context.Context, r *kgo.Record) {
	part := s.partitionOf(r.Partition)
	if part == nil {
		s.log.Debug("record of a partition no longer assigned left alone", "partition", r.Partition, "offset", r.Offset)
		return
	}
	if r.Attrs.IsControl() {
		// A transaction's marker (uncommitted.go): no delivery; its offset is passed over as
		// read_committed readers pass it.
		if n := part.txns.control(r); n > 0 {
			s.m.abortedTaken.Add(float64(n))
		}
		part.txnEnded(r.ProducerID)
		return
	}
	taken, done := part.add(r)
	if !taken {
		// Revoked meanwhile: the next owner reads it.
		s.log.Debug("record of a partition no longer assigned left alone", "partition", r.Partition, "offset", r.Offset)
		return
	}
	d, head, reason := decodeDelivery(r.Value, s.cfg.MaxBodyBytes)
	var repeat bool
	if reason == "" && r.Attrs.IsTransactional() {
		// Registered even when done: should its transaction abort, its copy is passed over.
		var open bool
		repeat, open = part.txns.taken(r.ProducerID, r.Offset, d)
		if open {
			part.txnRecord(r.ProducerID, r.Offset)
		}
	}
	if done {
		// Its previous owner finished it and said so in its commit (finished.go).
		return
	}
	if repeat {
		// The copy of a record taken from a transaction that aborted: that one is delivered.
		s.m.abortedCopies.Inc()
		part.pass(r.Offset)
		return
	}
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
	if s.takeShare(w) {
		// Over its partner's share, on a partition another partner uses (partners.go).
		after := s.deferDelay(d)
		s.goHandle(w, func(w *work) bool { return s.deferWork(w, deferPartnerShare, after) })
		return
	}
	w.lane = s.laneFor(d.EndpointID)
	w.lane.mu.Lock()
	w.lane.waiting++
	w.lane.mu.Unlock()
	s.feed(ctx, w)
}

// feed hands w to its partner's feeder in its partition, which offers the partner's records of
// the partition to their lanes in offset order. Intake itself never waits for a lane: a full
// lane holds back its partner's records of its own partition only, while every other
// partition's records, and every other partner's, flow to their endpoints. An endpoint's
// records all have its partner's feeder, so they reach its lane in offset order. Memory stays
// bounded by the buffer caps, which every waiting record counts against.
func (s *Sender) feed(ctx context.Context, w *work) {
	p := w.part
	p.feedMu.Lock()
	f, start := p.queueFeed(w)
	if p.feedLen >= s.partitionWaitCap() && !p.feedPaused {
		// One partition's backlog must not take the whole buffer from the others: its fetching
		// pauses until its feeders have offered half of what waits. What the client had fetched
		// for it and not handed out is fetched again on resume, never handed out twice.
		p.feedPaused = true
		s.applyPause(p)
	}
	p.feedMu.Unlock()
	if start {
		s.wg.Add(1)
		go s.runFeeder(ctx, p, w.d.PartnerID, f)
	}
}

// runFeeder offers f's waiting records until none is left; the partner's next record starts a
// new one.
func (s *Sender) runFeeder(ctx context.Context, p *partition, partner string, f *feed) {
	defer s.wg.Done()
	for {
		p.feedMu.Lock()
		w := p.takeFeed(partner, f)
		if w == nil {
			p.feedMu.Unlock()
			return
		}
		if p.feedPaused && p.feedLen <= s.partitionWaitCap()/2 {
			p.feedPaused = false
			s.applyPause(p)
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
			l.conc.offer(now)
			s.enqueue(l, w) // unlocks
			return
		}
		if l.recordWaits > 0 || l.partnerWaits > 0 {
			// A worker waiting for Kafka to acknowledge attempts, or for its partner's gate,
			// is not the endpoint's doing.
			waitStart, l.slowSince = now, time.Time{}
		} else if waitStart.IsZero() {
			waitStart = now
		}
		if why := s.overflows(l, w, now, waitStart); why != "" {
			if l.ordered {
				s.m.orderBreaks.WithLabelValues(breakOverflow).Inc()
			}
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
// through a retry tier and helps only when the wait holds others back.
//   - When the wait holds back other endpoints' records of w's partition (partition.holdsBack),
//     w is deferred when the lane has had no room for Config.MaxIntakeWait (and from then its
//     overflow at once, until its queue drains to half), when it is rate limited below the slot
//     wait, or when it has been judged slow (lane.slowBecause) without a break for
//     Config.MaxIntakeWait, so that a moment's slowness, such as the whole machine stalling
//     for a few hundred milliseconds, is ridden out.
//   - Otherwise only a stalled lane (requests out and none ended for Config.StallAfter: a
//     hanging receiver) defers, once stalled for Config.MaxIntakeWait without a break, and its
//     overflow at once from then: a hanging endpoint alone on its partition must not fill the
//     buffer that every other partition needs (its fetching pauses at half the buffer, but the
//     client still hands out what it had fetched), while a slow endpoint's burst that still
//     makes progress waits for room.
func (s *Sender) overflows(l *lane, w *work, now, waitStart time.Time) string {
	neighbours := w.part.holdsBack(w)
	slow := l.slowBecause(now, s.cfg.MaxSlotWait, s.cfg.StallAfter)
	if !neighbours && slow != slowStalled && slow != slowDeferring {
		l.slowSince = time.Time{}
		return ""
	}
	why := ""
	switch {
	case neighbours && now.Sub(waitStart) >= s.cfg.MaxIntakeWait:
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
			l.deferring = l.deferring || !neighbours
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

// hold counts an intaken record against the buffer caps.
func (s *Sender) hold(w *work) {
	s.m.buffered.Set(float64(s.buffered.Add(1)))
	s.bufferedBytes.Add(w.size)
}

// release forgets a buffered record and lets intake go on once both the records and their
// bytes are down to half their caps.
func (s *Sender) release(w *work) {
	s.releaseShare(w)
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
