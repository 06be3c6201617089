package ledger

import (
	"context"
	"slices"
	"sort"
	"time"
)

// Options say what to check.
type Options struct {
	// Since and Until bound the events checked by occurred_at, [Since, Until); zero: unbounded.
	// Leave the newest events out (Until a little in the past) on a live installation: they
	// may still be on their way.
	Since, Until time.Time
	// Boundary is the margin around an endpoint's creation and disable within which an event's
	// pair is required neither way (see doc.go); zero means 2 s.
	Boundary time.Duration
	// ClockSkew is how far a receiver's clock may be from the sender's when a receipt is
	// matched to an attempt; zero means 2 s.
	ClockSkew time.Duration
	// Receipts are the receivers' records; nil checks the history alone. An endpoint with no
	// receipt at all is checked from the history alone too (its receiver may record nothing),
	// unless CoverAll says the receipts are complete.
	Receipts []Receipt
	// CoverAll says the receipts hold every request of every endpoint, even of those that got
	// none.
	CoverAll bool
	// Outages are the times a sender or the broker was down (killed, or exited), if known:
	// they classify duplicates and the requests that match no attempt.
	Outages []Outage
	// Kills are the other faults (a component of another kind killed, PostgreSQL down), if
	// known: they only attribute duplicates that no outage explains (Report.DuplicatesByKill),
	// since a kill of a transactional component should cost none.
	Kills []Outage
	// MaxUnrecorded bounds the requests seen by a receiver that match no attempt; negative: no
	// bound.
	MaxUnrecorded int
	// RequestTimeout is the sender's deadline for a whole request: a request its receiver held
	// without answering (Receipt.Status 0) was in flight from its receipt until then, so an
	// outage that began meanwhile is its outage too. Zero means the sender's default, 15 s.
	RequestTimeout time.Duration
}

// Outage is a sender or the broker down from From until it was back at To. Work it had taken
// and not yet committed is done again after it, and a request answered shortly before it may
// still have had its attempt record on the way (on a loaded host the acknowledgement can take
// seconds): requests from the sender's request timeout before From to 30 s after To count as the
// outage's.
type Outage struct {
	Kind     string // what was down, for the report: "sender", "broker"
	From, To time.Time
}

// pairKey names one (event, endpoint) pair.
type pairKey struct{ event, endpoint string }

// pair is everything known of one (event, endpoint) pair.
type pair struct {
	class    class
	foreign  bool // the endpoint belongs to another partner than the event
	delivery *delivery
	attempts []attempt
	receipts []int // indexes into Options.Receipts
}

// checker holds one run of Check.
type checker struct {
	o          Options
	rep        *Report
	endpoints  map[string]*endpoint
	byPartner  map[string][]*endpoint
	events     map[string]event
	pairs      map[pairKey]*pair
	deliveries map[string]*pair // by delivery_id
	covered    map[string]bool  // endpoints with at least one receipt
}

// Check compares the expected set of the events in the window with the history in db and, when
// o.Receipts is not nil, with the receivers' records.
func Check(ctx context.Context, db Querier, o Options) (*Report, error) {
	if o.Boundary == 0 {
		o.Boundary = 2 * time.Second
	}
	if o.ClockSkew == 0 {
		o.ClockSkew = 2 * time.Second
	}
	c := &checker{o: o, rep: newReport(o), events: map[string]event{}, pairs: map[pairKey]*pair{},
		deliveries: map[string]*pair{}, covered: map[string]bool{}, byPartner: map[string][]*endpoint{}}
	if err := c.load(ctx, db); err != nil {
		return nil, err
	}
	if err := c.readReceipts(ctx, db); err != nil {
		return nil, err
	}
	for k, p := range c.pairs {
		c.evaluate(k, p)
	}
	return c.rep, nil
}

// load reads the endpoints, the window's events (making their required and excused pairs), the
// deliveries and the attempts.
func (c *checker) load(ctx context.Context, db Querier) error {
	var err error
	if c.endpoints, err = loadEndpoints(ctx, db); err != nil {
		return err
	}
	for _, ep := range c.endpoints {
		c.byPartner[ep.partner] = append(c.byPartner[ep.partner], ep)
	}
	c.rep.Endpoints = len(c.endpoints)
	err = loadEvents(ctx, db, c.o.Since, c.o.Until, func(id string, ev event) {
		if ev.refused {
			c.rep.Refused++ // expected nowhere; a receipt of it names an unknown event
			return
		}
		if _, dup := c.events[id]; dup {
			c.rep.DuplicateEventIDs++
		}
		c.events[id] = ev
		for _, ep := range c.byPartner[ev.partner] {
			if cl := classify(ev, ep, c.o.Boundary); cl == required || cl == excused {
				c.pairs[pairKey{id, ep.id}] = &pair{class: cl}
			}
		}
	})
	if err != nil {
		return err
	}
	c.rep.Events = len(c.events)
	err = loadDeliveries(ctx, db, func(eventID, endpointID string, d delivery) {
		p := c.pairOf(eventID, endpointID)
		if p == nil {
			return
		}
		c.rep.Deliveries++
		p.delivery = &d
		c.deliveries[d.id] = p
	})
	if err != nil {
		return err
	}
	return loadAttempts(ctx, db, func(deliveryID string, a attempt) {
		if p := c.deliveries[deliveryID]; p != nil {
			c.rep.Attempts++
			p.attempts = append(p.attempts, a)
		}
	})
}

// pairOf returns the pair of an event of the window and a known endpoint, making it on first
// use; nil when the event is outside the window or the endpoint unknown.
func (c *checker) pairOf(eventID, endpointID string) *pair {
	k := pairKey{eventID, endpointID}
	if p := c.pairs[k]; p != nil {
		return p
	}
	ev, ok := c.events[eventID]
	if !ok {
		return nil
	}
	ep := c.endpoints[endpointID]
	if ep == nil {
		c.rep.UnknownEndpoints++
		return nil
	}
	p := &pair{foreign: ep.partner != ev.partner}
	if !p.foreign {
		p.class = classify(ev, ep, c.o.Boundary)
	}
	c.pairs[k] = p
	return p
}

// readReceipts checks each receipt on its own (signature, webhook-id, tenancy, known event) and
// files it under its pair.
func (c *checker) readReceipts(ctx context.Context, db Querier) error {
	var outside []string // event ids not in the window: unknown, or outside it
	for i, r := range c.o.Receipts {
		c.rep.Requests++
		c.covered[r.EndpointID] = true
		if r.Accepted() {
			c.rep.Accepted++
		}
		if !r.Verified {
			c.rep.count(&c.rep.BadSignatures, "bad signatures", "%s at %s (%s)", r.WebhookID, r.EndpointID, r.ReceivedAt.Format(time.RFC3339Nano))
		}
		if r.WebhookID != r.EventID {
			c.rep.count(&c.rep.WebhookIDMismatch, "webhook-id not the event id", "webhook-id %q, event_id %q at %s", r.WebhookID, r.EventID, r.EndpointID)
		}
		ev, ok := c.events[r.EventID]
		if !ok {
			if r.Type != "webhook.test" {
				outside = append(outside, r.EventID)
			}
			continue
		}
		ep := c.endpoints[r.EndpointID]
		if (r.PartnerID != "" && r.PartnerID != ev.partner) || (ep != nil && ep.partner != ev.partner) {
			c.rep.count(&c.rep.Foreign, "foreign partner", "event %s of partner %s at %s (path of partner %s)", r.EventID, ev.partner, r.EndpointID, r.PartnerID)
		}
		if p := c.pairOf(r.EventID, r.EndpointID); p != nil {
			p.receipts = append(p.receipts, i)
		}
	}
	known, err := knownEvents(ctx, db, outside)
	if err != nil {
		return err
	}
	for _, id := range outside {
		if !known[id] {
			c.rep.count(&c.rep.UnknownEvents, "unknown events", "%q", id)
		}
	}
	return nil
}

// evaluate counts what one pair shows.
func (c *checker) evaluate(k pairKey, p *pair) {
	c.rep.Pairs[p.className()]++
	slices.SortFunc(p.attempts, func(a, b attempt) int { return a.startedAt.Compare(b.startedAt) })
	sort.SliceStable(p.receipts, func(i, j int) bool {
		return c.o.Receipts[p.receipts[i]].ReceivedAt.Before(c.o.Receipts[p.receipts[j]].ReceivedAt)
	})
	matchOf := c.match(p)
	withReceipts := c.o.Receipts != nil && (c.o.CoverAll || c.covered[k.endpoint])
	var accepted []int // positions in p.receipts
	for i, ri := range p.receipts {
		if c.o.Receipts[ri].Accepted() {
			accepted = append(accepted, i)
		}
	}
	c.expectation(k, p, withReceipts, len(accepted) > 0)
	if withReceipts {
		c.receiptDuplicates(p, accepted, matchOf)
		c.contradictsReceiver(k, p, len(accepted) > 0, matchOf)
	} else {
		c.historyDuplicates(p)
	}
	if p.delivery != nil && p.delivery.state == "succeeded" && !slices.ContainsFunc(p.attempts, attempt.succeeded) {
		c.rep.count(&c.rep.Contradictions, "contradicting final states", "%s → %s: succeeded without a 2xx attempt", k.event, k.endpoint)
	}
	if len(accepted) > 0 && p.delivery == nil {
		c.rep.count(&c.rep.AbsentFromHistory, "received, absent from the history", "%s → %s", k.event, k.endpoint)
	}
}

// expectation counts a pair against its place in the expected set.
func (c *checker) expectation(k pairKey, p *pair, withReceipts, received bool) {
	sent := len(p.receipts) > 0 || slices.ContainsFunc(p.attempts, func(a attempt) bool { return a.status > 0 })
	succeeded := p.delivery != nil && p.delivery.state == "succeeded"
	switch {
	case p.foreign:
		if len(p.receipts) == 0 && sent { // receipts were counted one by one
			c.rep.count(&c.rep.Foreign, "foreign partner", "history: %s → %s of another partner", k.event, k.endpoint)
		}
	case p.class == required:
		if (withReceipts && !received) || (!withReceipts && !succeeded) {
			state := "none"
			if p.delivery != nil {
				state = p.delivery.state
			}
			c.rep.MissingByState[state]++
			c.rep.count(&c.rep.Missing, "missing", "%s → %s (delivery state %s)", k.event, k.endpoint, state)
		}
	case p.class == unsubscribed:
		if received || succeeded {
			c.rep.count(&c.rep.NotSubscribed, "delivered without a subscription", "%s → %s", k.event, k.endpoint)
		}
	case p.class == beforeCreation && sent:
		c.rep.SentBeforeCreation++
	case p.class == afterDisable && sent:
		c.rep.SentAfterDisable++
	}
}

// match pairs each attempt of p with the receipt of its request: an attempt started at s with
// latency l covers the receipts in [s − skew, s + l + skew]; it takes the one of the same
// status closest to s, else the closest. It returns the attempt index of each receipt (by
// position in p.receipts), -1 for none, and counts the receipts no attempt took.
func (c *checker) match(p *pair) []int {
	out := make([]int, len(p.receipts))
	for i := range out {
		out[i] = -1
	}
	skew := c.o.ClockSkew
	for j := range p.attempts {
		a := &p.attempts[j]
		best, bestAgrees, bestDist := -1, false, time.Duration(0)
		for i, ri := range p.receipts {
			r := c.o.Receipts[ri]
			if out[i] >= 0 || r.ReceivedAt.Before(a.startedAt.Add(-skew)) {
				continue
			}
			if r.ReceivedAt.After(a.startedAt.Add(a.latency + skew)) {
				break
			}
			agrees, dist := r.Status == a.status, (r.ReceivedAt.Sub(a.startedAt)).Abs()
			if best < 0 || (agrees && !bestAgrees) || (agrees == bestAgrees && dist < bestDist) {
				best, bestAgrees, bestDist = i, agrees, dist
			}
		}
		if best >= 0 {
			out[best] = j
			a.matched = true
			if !bestAgrees {
				c.rep.OutcomeDisagreements++
			}
		}
	}
	for i, ri := range p.receipts {
		if out[i] >= 0 {
			continue
		}
		r := c.o.Receipts[ri]
		if slices.ContainsFunc(p.attempts, func(a attempt) bool { return a.startedAt.Before(r.ReceivedAt) }) {
			c.rep.UnrecordedRepeats++ // made again after an attempt the history has: a redelivery
		}
		inFlightUntil := r.ReceivedAt
		if r.Status == 0 {
			inFlightUntil = r.ReceivedAt.Add(c.requestTimeout())
		}
		if o := c.outageAt(r.ReceivedAt, inFlightUntil); o != nil {
			c.rep.UnrecordedAtKill++
			c.rep.UnrecordedByOutage[o.Kind]++
		}
		c.rep.count(&c.rep.Unrecorded, "requests absent from the history", "%s → %s answered %d at %s",
			r.EventID, r.EndpointID, r.Status, r.ReceivedAt.Format(time.RFC3339Nano))
	}
	return out
}

// requestTimeout is Options.RequestTimeout or its default.
func (c *checker) requestTimeout() time.Duration {
	if c.o.RequestTimeout > 0 {
		return c.o.RequestTimeout
	}
	return 15 * time.Second
}

// outageWithin says whether a known outage's window meets [from, to].
func (c *checker) outageWithin(from, to time.Time) bool { return c.outageAt(from, to) != nil }

// outageAt returns the first known outage whose window meets [from, to], or nil.
func (c *checker) outageAt(from, to time.Time) *Outage {
	for i, o := range c.o.Outages {
		if !o.From.Add(-c.requestTimeout()).After(to) && !o.To.Add(30*time.Second).Before(from) {
			return &c.o.Outages[i]
		}
	}
	return nil
}

// killed says whether something was down between two requests of one pair, and counts the
// duplicate by its kind: the first outage whose window meets [from, to], else the first other
// kill's.
func (c *checker) killed(from, to time.Time) bool {
	if o := c.outageAt(from, to); o != nil {
		c.rep.DuplicatesByKill[o.Kind]++
		return true
	}
	for _, k := range c.o.Kills {
		if !k.From.Add(-c.requestTimeout()).After(to) && !k.To.Add(30*time.Second).Before(from) {
			c.rep.DuplicatesByKill[k.Kind]++
			return true
		}
	}
	return false
}

// receiptDuplicates classifies every acceptance of p after its first. A kill counts from the
// pair's first request on, not only between the two acceptances: a record sent again after a
// kill, and failing, goes round the retry tiers beside its first copy's retries, so the fork a
// kill made can reach the receiver as two acceptances long after it, both with no kill between.
func (c *checker) receiptDuplicates(p *pair, accepted, matchOf []int) {
	if len(accepted) < 2 {
		return
	}
	first := c.o.Receipts[p.receipts[0]].ReceivedAt
	for n := 1; n < len(accepted); n++ {
		prev, cur := accepted[n-1], accepted[n]
		curR := c.o.Receipts[p.receipts[cur]]
		cause := "other"
		switch {
		case matchOf[cur] >= 0 && isReplay(p.attempts[matchOf[cur]].trigger):
			cause = "replay"
		case c.killed(first, curR.ReceivedAt):
			cause = "kill"
		case matchOf[prev] >= 0 && !p.attempts[matchOf[prev]].succeeded():
			cause = "late answer"
		case matchOf[prev] < 0:
			cause = "unrecorded"
		}
		c.rep.Duplicates++
		c.rep.DuplicatesByCause[cause]++
	}
}

// historyDuplicates classifies every 2xx attempt of p after its first, when no receipts tell.
func (c *checker) historyDuplicates(p *pair) {
	var prev *attempt
	for i := range p.attempts {
		a := &p.attempts[i]
		if !a.succeeded() {
			continue
		}
		if prev != nil {
			cause := "other"
			switch {
			case isReplay(a.trigger):
				cause = "replay"
			case c.killed(prev.startedAt, a.startedAt):
				cause = "kill"
			}
			c.rep.Duplicates++
			c.rep.DuplicatesByCause[cause]++
		}
		prev = a
	}
}

// contradictsReceiver compares a pair's final state with what its receiver answered: a
// succeeded delivery the receiver never accepted, a recorded 2xx the receiver did not give, or
// a delivery not succeeded whose last acceptance the history never recorded.
func (c *checker) contradictsReceiver(k pairKey, p *pair, received bool, matchOf []int) {
	if p.delivery == nil {
		return
	}
	state := p.delivery.state
	if state == "succeeded" && !received {
		c.rep.count(&c.rep.Contradictions, "contradicting final states", "%s → %s: succeeded, the receiver never accepted it", k.event, k.endpoint)
		return
	}
	for i, j := range matchOf {
		r := c.o.Receipts[p.receipts[i]]
		if j >= 0 && p.attempts[j].succeeded() && !r.Accepted() {
			c.rep.count(&c.rep.Contradictions, "contradicting final states", "%s → %s: attempt %d recorded %d, the receiver answered %d at %s",
				k.event, k.endpoint, p.attempts[j].no, p.attempts[j].status, r.Status, r.ReceivedAt.Format(time.RFC3339Nano))
			return
		}
	}
	if n := len(p.receipts); state != "succeeded" && n > 0 && matchOf[n-1] < 0 && c.o.Receipts[p.receipts[n-1]].Accepted() {
		last := c.o.Receipts[p.receipts[n-1]]
		c.rep.count(&c.rep.Contradictions, "contradicting final states", "%s → %s: %s, the receiver last accepted it at %s and the history has no such attempt",
			k.event, k.endpoint, state, last.ReceivedAt.Format(time.RFC3339Nano))
	}
}

func isReplay(trigger string) bool { return trigger == "replay" || trigger == "test" }

// className names a pair's place in the expected set, for Report.Pairs.
func (p *pair) className() string {
	if p.foreign {
		return "foreign"
	}
	return [...]string{"required", "excused", "boundary", "before creation", "after disable", "unsubscribed"}[p.class]
}
