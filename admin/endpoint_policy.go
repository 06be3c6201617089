package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hookstream/hookstream/internal/filter"
	"github.com/hookstream/hookstream/internal/retrypolicy"
	"github.com/hookstream/hookstream/internal/topics"
)

// An endpoint's payload filter and retry policy (design.md sections 7 and 8): checked here at
// registration, carried by cdc to the endpoints topic, applied by fanout (the filter), the retry
// scheduler and the sender (the policy).

// endpointPolicies are the endpoint's filter and retry policy, as shown and as created; nil:
// none (every event of its types; the deployment's retry policy).
type endpointPolicies struct {
	Filter      *string             `json:"filter"`
	RetryPolicy *retrypolicy.Policy `json:"retry_policy"`
}

// endpointPoliciesPatch are the same in a PATCH: absent keeps, null removes, a value replaces.
type endpointPoliciesPatch struct {
	Filter      optional[string]             `json:"filter"`
	RetryPolicy optional[retrypolicy.Policy] `json:"retry_policy"`
}

// RetryLimits is the deployment's retry policy, which endpoints without a policy of their own
// get, and the bounds of endpoint policies; registration checks policies against the bounds
// and GET /v1/limits states all of it.
type RetryLimits struct {
	// Schedule is the deployment's delays after each failed attempt (HOOKSTREAM_RETRY_SCHEDULE).
	Schedule []time.Duration
	// Jitter spreads every delay by ±Jitter of itself.
	Jitter float64
	// RetryClientErrors is the deployment's policy for 4xx answers other than 408, 410, 425
	// and 429 (HOOKSTREAM_RETRY_CLIENT_ERRORS).
	RetryClientErrors bool
	// Bounds limit endpoint policies.
	Bounds retrypolicy.Bounds
	// Tiers are the retry tier topics' names (<prefix>.retry.<tier>), shared by every policy.
	Tiers []string
}

// DefaultRetryLimits are the defaults of retrytopics and the sender.
func DefaultRetryLimits() RetryLimits {
	return RetryLimits{
		Schedule: []time.Duration{5 * time.Second, time.Minute, 10 * time.Minute, time.Hour, 3 * time.Hour,
			6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 24 * time.Hour},
		Jitter:            0.2,
		RetryClientErrors: true,
		Bounds:            retrypolicy.DefaultBounds(),
		Tiers:             topics.RetryTiers,
	}
}

func (r RetryLimits) validate(automaticAttempts int) []error {
	var errs []error
	if err := r.Bounds.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(r.Schedule) == 0 {
		errs = append(errs, errors.New("the retry schedule has no delays"))
	}
	// Replays are numbered above every automatic attempt (replay/attempts.go): the most any
	// policy may give.
	if need := max(len(r.Schedule)+1, r.Bounds.MaxAttempts); automaticAttempts < need {
		errs = append(errs, fmt.Errorf("automatic attempts %d is below the %d attempts a retry policy may give", automaticAttempts, need))
	}
	return errs
}

// retryView states RetryLimits in GET /v1/limits.
type retryView struct {
	ScheduleSeconds []float64 `json:"schedule_seconds"`
	Attempts        int       `json:"attempts"`
	Jitter          float64   `json:"jitter"`
	ClientErrors    string    `json:"client_errors"`
	Tiers           []string  `json:"tiers"`
	Bounds          struct {
		MinDelaySeconds float64 `json:"min_delay_seconds"`
		MaxDelaySeconds float64 `json:"max_delay_seconds"`
		MaxAttempts     int     `json:"max_attempts"`
	} `json:"bounds"`
}

func (r RetryLimits) view() retryView {
	v := retryView{ScheduleSeconds: make([]float64, len(r.Schedule)), Attempts: len(r.Schedule) + 1, Jitter: r.Jitter,
		ClientErrors: clientErrors(r.RetryClientErrors), Tiers: r.Tiers}
	for i, d := range r.Schedule {
		v.ScheduleSeconds[i] = d.Seconds()
	}
	v.Bounds.MinDelaySeconds, v.Bounds.MaxDelaySeconds = r.Bounds.MinDelay.Seconds(), r.Bounds.MaxDelay.Seconds()
	v.Bounds.MaxAttempts = r.Bounds.MaxAttempts
	if v.Tiers == nil {
		v.Tiers = []string{}
	}
	return v
}

func clientErrors(retry bool) string {
	if retry {
		return retrypolicy.ClientErrorsRetry
	}
	return retrypolicy.ClientErrorsStop
}

// filter parses a payload filter; a fault names its position (the filter language's
// SyntaxError), so the partner can find it. It returns the filter to store, nil for none.
func (p *problems) filter(src *string) *string {
	if src == nil {
		return nil
	}
	if _, err := filter.Parse(*src); err != nil {
		var se *filter.SyntaxError
		if errors.As(err, &se) {
			p.add("filter", "%s (see the filter language in the API documentation)", se.Error())
		} else {
			p.add("filter", "%v", err)
		}
		return nil
	}
	return src
}

// retryPolicy checks a retry policy against the operator's bounds; every fault names its field
// under retry_policy.
func (p *problems) retryPolicy(pol *retrypolicy.Policy, b retrypolicy.Bounds) *retrypolicy.Policy {
	if pol == nil {
		return nil
	}
	for _, e := range pol.Check(b) {
		p.add("retry_policy."+e.Field, "%s", e.Msg)
	}
	return pol
}

// policyJSON is the retry_policy column's value: the policy as the API shows it, or NULL.
func policyJSON(pol *retrypolicy.Policy) []byte {
	if pol == nil {
		return nil
	}
	b, _ := json.Marshal(pol) // a plain struct of numbers, strings and maps
	return b
}
