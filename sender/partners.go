package sender

// Partners: the fair share between partners (design.md section 7). Each partner has a feeder of
// its own in every partition (intake.go), a share of the buffer, and a gate every request of its
// endpoints passes: at most Config.PartnerMaxInFlight requests out at once and, when
// Config.PartnerRatePerSec is set, at most that many requests a second, in this sender process.

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// partnerSeenWindow: a partition on which another partner's record was taken within this long
// is shared with that partner, and a partner over its share of the buffer has its overflow there
// deferred rather than the partition's fetching paused, which would hold the other partner back.
const partnerSeenWindow = time.Minute

// partnerState is one partner's share of the sender. s.partnersMu guards every field but the
// gate's channel and limiter, which are safe for concurrent use and never replaced.
type partnerState struct {
	id string
	// buffered: the partner's records taken from Kafka and routed to a lane, not yet finished.
	buffered int
	// paused: partitions whose fetching pauses while the partner is over its share, resumed
	// when its buffered records are down to half of it.
	paused   []*partition
	lastUsed time.Time

	slots   chan struct{} // one per request out, Config.PartnerMaxInFlight in all
	limiter *rate.Limiter // nil: no rate limit
}

// partnerFor returns id's state, made on first use. The caller holds s.partnersMu.
func (s *Sender) partnerFor(id string) *partnerState {
	ps := s.partners[id]
	if ps == nil {
		ps = &partnerState{id: id, slots: make(chan struct{}, s.cfg.PartnerMaxInFlight)}
		if r := s.cfg.PartnerRatePerSec; r > 0 {
			ps.limiter = rate.NewLimiter(rate.Limit(r), partnerBurst(r))
		}
		s.partners[id] = ps
	}
	ps.lastUsed = s.now()
	return ps
}

// partnerBurst is the partner limiter's burst: 20 ms of its rate, at least one request, so a
// high rate does not cost a timer per request and a low one is never exceeded by more than one.
func partnerBurst(perSec float64) int {
	return max(1, int(perSec/50))
}

// partnerShare is the most records one partner may hold in the buffer before its overflow waits
// in Kafka or is deferred: an equal part of Config.MaxBuffered for each partner holding records
// and one more, so a partner with nothing buffered always finds room (no lower than
// Config.QueueSize, one endpoint's queue). The caller holds s.partnersMu.
func (s *Sender) partnerShare() int {
	return max(s.cfg.QueueSize, s.cfg.MaxBuffered/(s.activePartners+1))
}

// crowded says whether the buffer's free room is below one partner's share, in records or in
// bytes. Until then a partner over its share holds nobody back (a partner that comes finds its
// share free) and its records are taken as any others: deferring them would only send a
// backlog round a retry tier while the buffer had room for it. The caller holds s.partnersMu.
func (s *Sender) crowded() bool {
	n := int64(s.activePartners + 1)
	return int64(s.cfg.MaxBuffered)-s.buffered.Load() < int64(s.partnerShare()) ||
		s.cfg.MaxBufferedBytes-s.bufferedBytes.Load() < s.cfg.MaxBufferedBytes/n
}

// takeShare counts w, routed to a lane, against its partner's share of the buffer. A partner
// over its share while the buffer is crowded has its overflow deferred (true) where the partition carries another partner's
// records, and otherwise queued while the partition's fetching pauses until the partner's
// buffered records are down to half its share: so one partner's backlog never takes the buffer,
// nor its feeder, from another, and a backlog alone on its partitions waits in Kafka, not in a
// retry tier.
func (s *Sender) takeShare(w *work) (deferIt bool) {
	others := w.part.seePartner(w.d.PartnerID, s.now())
	s.partnersMu.Lock()
	defer s.partnersMu.Unlock()
	ps := s.partnerFor(w.d.PartnerID)
	over := ps.buffered >= s.partnerShare() && s.crowded()
	if over && others {
		return true
	}
	if ps.buffered == 0 {
		s.activePartners++
	}
	ps.buffered++
	w.partner = ps
	if over {
		p := w.part
		p.feedMu.Lock()
		if !p.sharePaused {
			p.sharePaused = true
			ps.paused = append(ps.paused, p)
			s.applyPause(p)
		}
		p.feedMu.Unlock()
	}
	return false
}

// releaseShare gives w's place in its partner's share back, and resumes the partitions paused
// for the partner once its buffered records are down to half its share.
func (s *Sender) releaseShare(w *work) {
	ps := w.partner
	if ps == nil {
		return
	}
	w.partner = nil
	s.partnersMu.Lock()
	defer s.partnersMu.Unlock()
	ps.buffered--
	if ps.buffered == 0 {
		s.activePartners--
	}
	ps.lastUsed = s.now()
	if len(ps.paused) == 0 || ps.buffered > s.partnerShare()/2 {
		return
	}
	for _, p := range ps.paused {
		p.feedMu.Lock()
		p.sharePaused = false
		s.applyPause(p)
		p.feedMu.Unlock()
	}
	ps.paused = nil
}

// applyPause pauses or resumes fetching p as its feeders' backlog and the partners' shares ask.
// The caller holds p.feedMu. A stopped partition is never resumed: its next owner is.
func (s *Sender) applyPause(p *partition) {
	want := p.feedPaused || p.sharePaused
	if want == p.fetchPaused || !want && p.isStopped() {
		return
	}
	p.fetchPaused = want
	parts := map[string][]int32{p.topic: {p.id}}
	if want {
		s.consumer.PauseFetchPartitions(parts)
	} else {
		s.consumer.ResumeFetchPartitions(parts)
	}
}

// enterGate waits until the partner of w may make one more request: a slot of its
// Config.PartnerMaxInFlight, then its rate (Config.PartnerRatePerSec). The wait is the
// partner's, not the endpoint's: meanwhile the lane is not judged slow (lane.partnerWaits), so
// a capped partner's backlog waits in its own feeder rather than going round a retry tier.
// ps is the partner's state the record counts against (work.partner, set by takeShare, which
// keeps it from being swept meanwhile); nil, it is looked up. leave gives the slot back; ok is
// false when the partition stopped first.
func (s *Sender) enterGate(ctx context.Context, l *lane, ps *partnerState, partnerID string) (leave func(), ok bool) {
	if ps == nil {
		s.partnersMu.Lock()
		ps = s.partnerFor(partnerID)
		s.partnersMu.Unlock()
	}
	leave = func() { <-ps.slots }
	held := false
	select {
	case ps.slots <- struct{}{}:
		held = true
		if ps.limiter == nil || ps.limiter.Allow() {
			return leave, true
		}
	default:
	}
	l.mu.Lock()
	l.partnerWaits++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.partnerWaits--
		l.lastDone, l.doneBusy = s.now(), false // the lane has not stalled meanwhile
		l.mu.Unlock()
	}()
	if !held {
		select {
		case ps.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, false
		}
	}
	if ps.limiter != nil && ps.limiter.Wait(ctx) != nil {
		leave()
		return nil, false
	}
	return leave, true
}

// sweepPartners forgets partners with nothing buffered for laneIdleTTL. A partner's gate
// outlives its buffered records for that long, so a partner whose records come one at a time
// is held to its rate all the same.
func (s *Sender) sweepPartners(now time.Time) {
	s.partnersMu.Lock()
	defer s.partnersMu.Unlock()
	for id, ps := range s.partners {
		if ps.buffered == 0 && len(ps.slots) == 0 && now.Sub(ps.lastUsed) > laneIdleTTL {
			delete(s.partners, id)
		}
	}
}
