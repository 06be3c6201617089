package sender

import (
	"context"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
)

// Retrier takes the deliveries the sender cannot finish now. retrytopics implements it with
// tiered delay topics (design.md section 8); the sender knows nothing of tiers.
type Retrier interface {
	// Schedule is called after a failed attempt that may be retried (R20). It decides the next
	// attempt: it durably hands the delivery to a retry tier and returns when the next attempt is
	// due, or, when the attempts are exhausted, writes it to the dead-letter topic and returns
	// final = true. retryAfter is the receiver's valid Retry-After (zero when none); policy is
	// the endpoint's retry policy (nil: the deployment's schedule).
	Schedule(ctx context.Context, d records.Delivery, a records.Attempt, retryAfter time.Duration, policy *retrypolicy.Policy) (next time.Time, final bool, err error)
	// Defer hands over work that made no attempt (the endpoint's circuit is open or its queue
	// is full): the same attempt number is asked for again after about `after`.
	Defer(ctx context.Context, d records.Delivery, after time.Duration) error
	// Next says, writing nothing, what the schedule Schedule follows holds for d after its
	// failed attempt d.AttemptNo: the wait before the next attempt (jitter included, raised to
	// retryAfter), or final = true when that was the last. A strict ordered endpoint holds its
	// head in process by it (design.md section 7).
	Next(d records.Delivery, retryAfter time.Duration, policy *retrypolicy.Policy) (wait time.Duration, final bool)
}
