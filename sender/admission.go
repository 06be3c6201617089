package sender

// Admission: a lane's workers take its queued work in order and decide whether it may be sent
// now: the circuit, the endpoint's state in the view and its version.

import (
	"context"
	"fmt"
	"time"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/records"
)

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
// partner's event, is refused with category tenant_mismatch and never sent. A disabled endpoint
// is refused with category endpoint_disabled (the receiver's side, never hookstream's fault), one
// no longer subscribed to the type with category internal, each with the reason in the excerpt: the history shows why nothing was sent, and it is not
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
			return &refusal{records.CategoryEndpointDisabled, reason, true}
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
