package sender

// Delivery and outcomes: the signed request, its classification, and the attempt record, retry
// or deferral that finishes a record durably in Kafka.

import (
	"cmp"
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
	"github.com/hookstream/hookstream/internal/tracing"
)

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
	l.mu.Lock()
	l.recordWaits++
	l.mu.Unlock()
	select {
	case s.unrecorded <- struct{}{}:
		w.unrecorded = true
	case <-w.part.stopCtx.Done():
	}
	// The wait was Kafka's: the lane's next request end is no measure of the endpoint's
	// service rate, and the lane has not stalled.
	l.mu.Lock()
	l.recordWaits--
	l.lastDone, l.doneBusy = s.now(), false
	l.mu.Unlock()
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
	res, sent, ok := s.attemptOnce(l, w, ep, w.d)
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
			s.end(w, s.conclude(w, ep, w.d, res, nil))
		}()
		return
	}
	s.produceAttemptAsync(w, attemptOf(w.d, res))
}

// attemptOnce signs and sends d, w's delivery, to ep after waiting for the rate limit and its
// partner's gate. sent is false when no request was made (the secrets could not be opened); ok
// is false when the work was abandoned.
func (s *Sender) attemptOnce(l *lane, w *work, ep *records.Endpoint, d records.Delivery) (res result, sent, ok bool) {
	part := w.part
	now := s.now()
	signer, err := l.signerFor(ep, s.cfg.SecretKeys, now)
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
	leave, ok := s.enterGate(part.stopCtx, l, w.partner, d.PartnerID)
	if !ok {
		return res, false, false
	}
	s.m.inFlight.Inc()
	ctx, span := s.startAttempt(part.ctx, &d)
	res = s.poster.post(ctx, ep.URL, signer, d.EventID, d.Body, acc)
	endAttempt(span, &res)
	s.m.inFlight.Dec()
	leave()
	if res.abandoned {
		return res, false, false
	}
	if f := res.failure; f != nil && f.ClientError {
		// The endpoint's policy for other 4xx, per event type, over the deployment's (R20).
		f.Retryable = retrypolicy.RetryClientErrors(ep.RetryPolicy, d.EventType, s.cfg.RetryClientErrors)
	}
	s.m.latency.Observe(res.latency.Seconds())
	if res.failure == nil {
		s.m.delivered(&d, s.now())
	}
	l.mu.Lock()
	change := l.observe(res.latency, res.failure != nil, s.now())
	l.mu.Unlock()
	if change != "" {
		s.m.concurrencyChanges.WithLabelValues(change).Inc()
	}
	return res, true, true
}

// conclude reports a finished attempt: a retryable failure is first handed to the retrier (the
// attempt it sees has outcome failed and no next attempt time), whose answer decides between
// retrying (with the next attempt time) and failed (exhausted), by the endpoint's retry policy.
// hold is the ordered endpoint's hold the attempt ends (nil: not ordered; ordering.go).
func (s *Sender) conclude(w *work, ep *records.Endpoint, d records.Delivery, res result, hold *orderHold) bool {
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
	if hold != nil {
		s.endHold(hold, ep, &a)
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
		LatencyUS:       res.latency.Microseconds(),
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
	if reason == deferQueueFull || reason == deferPartnerShare {
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
	r := records.DeadLetterRecord(s.names.DLQ, string(key), deadLetterOf(value, w.d, reason, s.now()))
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
