package sender

// Ordered endpoints: the held head, its two modes (bounded and strict), the hold's statement in
// the attempt records and its gauges (design.md section 7).

import (
	"time"

	"github.com/hookstream/hookstream/internal/records"
)

// Why an ordered endpoint's order gave way (hookstream_sender_order_breaks_total).
const (
	breakMaxHold      = "max_hold"      // bounded: the head was held for OrderedMaxHold
	breakFinalFailure = "final_failure" // strict: the head failed for good (dead-lettered or not retryable)
	breakOverflow     = "overflow"      // a record beyond the endpoint's queue was deferred
)

var breakReasons = []string{breakMaxHold, breakFinalFailure, breakOverflow}

// orderHold is the hold of one ordered endpoint's head by its lane's single worker.
type orderHold struct {
	l     *lane
	since time.Time // the head's first failed attempt; zero while it is not held
}

// state is the hold as an attempt states it, read at now; held says whether the head is still
// held after the attempt.
func (h *orderHold) state(now time.Time, held bool) *records.OrderHold {
	h.l.mu.Lock()
	n := len(h.l.queue) + h.l.waiting
	h.l.mu.Unlock()
	o := &records.OrderHold{Held: n, At: now.UTC()}
	if held && !h.since.IsZero() {
		since := h.since.UTC()
		o.HeadSince = &since
	}
	return o
}

// deliverOrdered delivers w to an ordered endpoint: one request at a time, in offset order
// (the lane has a single worker), and a failing record holds back the endpoint's later ones
// instead of being overtaken (design.md section 7). The failing head is retried in process,
// each attempt reported as retrying with its next attempt time. Its offset stays unfinished
// meanwhile, so a crash or a rebalance redelivers it first.
//
// Two modes. Bounded (ordered): the wait doubles from OrderedBackoff up to OrderedMaxBackoff (or
// the receiver's Retry-After if longer), and the hold lasts at most OrderedMaxHold; then the head
// is handed to the retry tiers like any failure and the next record proceeds, so an outage
// longer than that breaks the order. Strict (ordered with strict_order): the waits and the
// number of attempts are the endpoint's retry schedule (Retrier.Next), with no time limit; the
// order gives way only when the head fails for good (its schedule exhausted and the dead letter
// written, or a failure that is not retried), and that attempt says so (order_broken), which
// the recorder turns into the partner's endpoint.order_broken event.
//
// Limits: while a head is held, the partition's committed offset cannot pass it, so a restart
// redelivers what other endpoints of the partition finished meanwhile (duplicates, which the
// contract allows). Records beyond the endpoint's queue are deferred to a retry tier and can
// come back out of order (counted as reason overflow); size QueueSize for the bursts of
// ordered endpoints. A held head abandoned by a rebalance or restart is delivered again by the
// next owner with its original attempt number, and its hold starts again.
func (s *Sender) deliverOrdered(l *lane, w *work) bool {
	d := w.d
	hold := &orderHold{l: l}
	defer s.unhold(hold)
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
			a := s.refusalAttempt(d, ref)
			a.Order = hold.state(s.now(), false)
			return s.produceAttempt(w.part.ctx, a)
		}
		res, _, ok := s.attemptOnce(l, w, ep, d)
		if !ok {
			return false
		}
		if res.failure == nil || !res.failure.Retryable {
			return s.conclude(w, ep, d, res, hold)
		}
		if hold.since.IsZero() {
			hold.since = res.started
			s.holding(hold)
		}
		var wait time.Duration
		if ep.StrictOrder {
			next, final := s.retrier.Next(d, res.failure.RetryAfter, ep.RetryPolicy)
			if final {
				return s.conclude(w, ep, d, res, hold) // dead-lettered: the order gives way
			}
			wait = next
		} else {
			wait = jitter(backoff)
			if ra := res.failure.RetryAfter; ra > wait {
				wait = ra
			}
			if s.now().Add(wait).Sub(hold.since) > s.cfg.OrderedMaxHold {
				s.m.orderBreaks.WithLabelValues(breakMaxHold).Inc()
				return s.conclude(w, ep, d, res, hold) // to the retry tiers; the order gives way
			}
			backoff = min(backoff*2, s.cfg.OrderedMaxBackoff)
		}
		a := attemptOf(d, res)
		next := s.now().Add(wait).UTC()
		a.Outcome, a.NextAttemptAt = records.OutcomeRetrying, &next
		a.Order = hold.state(s.now(), true)
		if !s.produceAttempt(w.part.ctx, a) {
			return false
		}
		if !sleep(w.part.stopCtx, wait) {
			return false
		}
		d.AttemptNo++
		d.Trigger = records.TriggerRetry
	}
}

// endHold states the hold in a, the attempt that ends the head's handling; a strict
// endpoint's head that failed for good breaks the order, visibly: a says so.
func (s *Sender) endHold(hold *orderHold, ep *records.Endpoint, a *records.Attempt) {
	held := a.Outcome == records.OutcomeRetrying // bounded: handed to the tiers, no longer held
	a.Order = hold.state(s.now(), held)
	if ep.StrictOrder && a.Outcome == records.OutcomeFailed {
		a.OrderBroken = true
		s.m.orderBreaks.WithLabelValues(breakFinalFailure).Inc()
		s.log.Warn("strict order broken: the head failed for good and the records held behind it go on",
			"endpoint_id", a.EndpointID, "delivery_id", a.DeliveryID, "attempt_no", a.AttemptNo,
			"held_since", hold.since, "held", a.Order.Held)
	}
}

// holding counts hold among the heads held now; unhold forgets it.
func (s *Sender) holding(hold *orderHold) {
	s.holdsMu.Lock()
	s.holds[hold] = struct{}{}
	s.holdsMu.Unlock()
}

func (s *Sender) unhold(hold *orderHold) {
	s.holdsMu.Lock()
	delete(s.holds, hold)
	s.holdsMu.Unlock()
}

// measureHolds sets the gauges of held heads: how many records wait behind them, and the age
// of the oldest. They are aggregates: the sender's metrics carry no endpoint label.
func (s *Sender) measureHolds(now time.Time) {
	s.holdsMu.Lock()
	held, oldest := 0, time.Time{}
	for h := range s.holds {
		h.l.mu.Lock()
		held += len(h.l.queue) + h.l.waiting
		h.l.mu.Unlock()
		if oldest.IsZero() || h.since.Before(oldest) {
			oldest = h.since
		}
	}
	heads := len(s.holds)
	s.holdsMu.Unlock()
	s.m.orderHeads.Set(float64(heads))
	s.m.orderHeld.Set(float64(held))
	age := 0.0
	if !oldest.IsZero() {
		age = now.Sub(oldest).Seconds()
	}
	s.m.orderHeadAge.Set(age)
}
