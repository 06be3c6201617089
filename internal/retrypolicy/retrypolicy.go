// Package retrypolicy is the retry policy of an endpoint (R22): its own schedule, attempt
// count and policy for 4xx answers, for all its events and per event type, within bounds the
// operator sets. The admin API checks a policy against the bounds at registration; the retry
// scheduler (retrytopics) and the sender's response classification apply it. The tiers stay
// shared: a policy changes when a retry is due, never which topics hold it.
//
// Resolution for an event type: the rule of the most specific event_types key that covers the
// type (the exact type, then the "prefix.*" wildcard with the longest prefix, then "*") gives
// each field it sets; the endpoint's own fields give the others; the deployment's schedule
// (HOOKSTREAM_RETRY_SCHEDULE) and 4xx policy (HOOKSTREAM_RETRY_CLIENT_ERRORS) the rest. A rule
// that sets delays_seconds sets the attempt count with them (len+1, or its own attempts), so an
// endpoint's attempts never cut a type's schedule; a rule that sets attempts alone cuts or
// extends the schedule it inherits.
package retrypolicy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hookstream/hookstream/internal/eventtype"
)

// Client-error policies: what a 4xx other than 408, 410, 425 and 429 does (R20).
const (
	ClientErrorsRetry = "retry" // retried by the schedule, like a 5xx
	ClientErrorsStop  = "stop"  // final at once
)

// Rule is one level of a policy; an unset field is inherited.
type Rule struct {
	// DelaysSeconds[i] is the wait after attempt i+1 fails (before jitter); a delivery gets
	// len+1 attempts unless Attempts says otherwise.
	DelaysSeconds []float64 `json:"delays_seconds,omitempty"`
	// Attempts is the number of attempts in all, the first included: the delays are cut to
	// Attempts-1, or extended by repeating the last one.
	Attempts *int `json:"attempts,omitempty"`
	// ClientErrors is ClientErrorsRetry or ClientErrorsStop.
	ClientErrors string `json:"client_errors,omitempty"`
}

// Policy is an endpoint's retry policy: its own rule and rules per event type, keyed by an
// event type, a "prefix.*" wildcard or "*" (the forms of subscriptions).
type Policy struct {
	Rule
	EventTypes map[string]Rule `json:"event_types,omitempty"`
}

// Bounds are the operator's limits on endpoint policies.
type Bounds struct {
	MinDelay    time.Duration // shortest delay a policy may ask for
	MaxDelay    time.Duration // longest
	MaxAttempts int           // most attempts in all
}

// DefaultBounds: delays from 5 s to 24 h, at most 20 attempts.
func DefaultBounds() Bounds {
	return Bounds{MinDelay: 5 * time.Second, MaxDelay: 24 * time.Hour, MaxAttempts: 20}
}

// Validate reports bounds that cannot be applied.
func (b Bounds) Validate() error {
	var errs []error
	if b.MinDelay <= 0 {
		errs = append(errs, fmt.Errorf("retry min delay %s must be positive", b.MinDelay))
	}
	if b.MaxDelay < b.MinDelay {
		errs = append(errs, fmt.Errorf("retry max delay %s is below the min delay %s", b.MaxDelay, b.MinDelay))
	}
	if b.MaxAttempts < 1 || b.MaxAttempts > MaxAttempts {
		errs = append(errs, fmt.Errorf("retry max attempts %d must be from 1 to %d", b.MaxAttempts, MaxAttempts))
	}
	return errors.Join(errs...)
}

// MaxAttempts bounds Bounds.MaxAttempts itself.
const MaxAttempts = 100

// MaxEventTypes is the most event_types rules a policy may have.
const MaxEventTypes = 100

// FieldError is a fault of a policy, naming the field under retry_policy.
type FieldError struct {
	Field string // e.g. event_types["balance.*"].delays_seconds[2]
	Msg   string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Msg }

// Check reports every fault of p under b; an event_types key must be an event-type pattern
// (eventtype.ValidPattern).
func (p *Policy) Check(b Bounds) []FieldError {
	if p == nil {
		return nil
	}
	errs := p.Rule.check("", b)
	if len(p.EventTypes) > MaxEventTypes {
		errs = append(errs, FieldError{"event_types", fmt.Sprintf("at most %d rules", MaxEventTypes)})
	}
	keys := make([]string, 0, len(p.EventTypes))
	for k := range p.EventTypes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		prefix := fmt.Sprintf("event_types[%q].", k)
		if !eventtype.ValidPattern(k) {
			errs = append(errs, FieldError{fmt.Sprintf("event_types[%q]", k), `the key must be an event type like "balance.credited", a wildcard like "balance.*", or "*"`})
			continue
		}
		r := p.EventTypes[k]
		if r.DelaysSeconds == nil && r.Attempts == nil && r.ClientErrors == "" {
			errs = append(errs, FieldError{fmt.Sprintf("event_types[%q]", k), "sets nothing: give delays_seconds, attempts or client_errors"})
		}
		errs = append(errs, r.check(prefix, b)...)
	}
	return errs
}

func (r Rule) check(prefix string, b Bounds) []FieldError {
	var errs []FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, FieldError{prefix + field, fmt.Sprintf(format, args...)})
	}
	if r.DelaysSeconds != nil && len(r.DelaysSeconds) == 0 {
		add("delays_seconds", "give at least one delay, or leave it out to inherit the schedule")
	}
	if len(r.DelaysSeconds) > b.MaxAttempts-1 && len(r.DelaysSeconds) > 0 {
		add("delays_seconds", "at most %d delays (the operator's bound of %d attempts)", max(b.MaxAttempts-1, 0), b.MaxAttempts)
	}
	for i, s := range r.DelaysSeconds {
		if math.IsNaN(s) || s < b.MinDelay.Seconds() || s > b.MaxDelay.Seconds() {
			add(fmt.Sprintf("delays_seconds[%d]", i), "must be from %g to %g seconds (the operator's bounds)", b.MinDelay.Seconds(), b.MaxDelay.Seconds())
		}
	}
	if r.Attempts != nil && (*r.Attempts < 1 || *r.Attempts > b.MaxAttempts) {
		add("attempts", "must be from 1 to %d (the operator's bound)", b.MaxAttempts)
	}
	if r.ClientErrors != "" && r.ClientErrors != ClientErrorsRetry && r.ClientErrors != ClientErrorsStop {
		add("client_errors", "must be %q or %q", ClientErrorsRetry, ClientErrorsStop)
	}
	return errs
}

// For returns the rule in force for eventType: the most specific event_types rule's fields
// over the endpoint's own. A nil policy is the empty rule (everything inherited).
func (p *Policy) For(eventType string) Rule {
	if p == nil {
		return Rule{}
	}
	r := p.Rule
	best, rank := "", -1
	for k := range p.EventTypes {
		if s := eventtype.Specificity(k, eventType); s > rank || (s == rank && k < best) {
			best, rank = k, s
		}
	}
	if rank < 0 {
		return r
	}
	t := p.EventTypes[best]
	if t.DelaysSeconds != nil {
		// A schedule comes with its own count: len+1 attempts unless the same rule says.
		r.DelaysSeconds, r.Attempts = t.DelaysSeconds, nil
	}
	if t.Attempts != nil {
		r.Attempts = t.Attempts
	}
	if t.ClientErrors != "" {
		r.ClientErrors = t.ClientErrors
	}
	return r
}

// Delays is the schedule in force for eventType at an endpoint with policy p: the wait after
// each failed attempt, before jitter, so len+1 attempts. base is the deployment's schedule.
// The policy's values outside b (the operator tightened the bounds after the policy was
// registered) are brought inside them; base's delays are the operator's own and kept.
func Delays(p *Policy, eventType string, base []time.Duration, b Bounds) []time.Duration {
	r := p.For(eventType)
	if r.DelaysSeconds == nil && r.Attempts == nil {
		return base
	}
	delays := base
	if len(r.DelaysSeconds) > 0 {
		delays = make([]time.Duration, len(r.DelaysSeconds))
		for i, s := range r.DelaysSeconds {
			delays[i] = min(max(time.Duration(s*float64(time.Second)), b.MinDelay), b.MaxDelay)
		}
	}
	if len(delays) == 0 {
		return nil
	}
	n := len(delays)
	if r.Attempts != nil {
		n = max(*r.Attempts-1, 0)
	}
	n = min(n, max(b.MaxAttempts-1, 0))
	out := make([]time.Duration, 0, n)
	for i := range n {
		out = append(out, delays[min(i, len(delays)-1)])
	}
	return out
}

// RetryClientErrors says whether a 4xx other than 408, 410, 425 and 429 is retried for
// eventType at an endpoint with policy p; def is the deployment's policy.
func RetryClientErrors(p *Policy, eventType string, def bool) bool {
	switch p.For(eventType).ClientErrors {
	case ClientErrorsRetry:
		return true
	case ClientErrorsStop:
		return false
	}
	return def
}
