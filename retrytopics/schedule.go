package retrytopics

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Schedule is the retry policy of a delivery: how long to wait after each failed attempt
// (design.md section 8, R22).
type Schedule struct {
	// Delays[i] is the wait after attempt i+1 fails, so a delivery gets len(Delays)+1 attempts
	// in all.
	Delays []time.Duration
	// Jitter spreads each delay uniformly by ±Jitter of itself (0.2: ±20 %), so a burst of
	// failures does not come back as a burst.
	Jitter float64
	// MaxRetryAfter caps how far a receiver's Retry-After can push the next attempt (R20).
	MaxRetryAfter time.Duration
}

// DefaultSchedule is 5 s, 1 m, 10 m, 1 h, 3 h, 6 h, 12 h, 24 h, 24 h after the first attempt
// (10 attempts over about three days) with ±20 % jitter, and Retry-After honoured up to 24 h.
func DefaultSchedule() Schedule {
	return Schedule{
		Delays: []time.Duration{
			5 * time.Second, time.Minute, 10 * time.Minute, time.Hour, 3 * time.Hour,
			6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 24 * time.Hour,
		},
		Jitter:        0.2,
		MaxRetryAfter: 24 * time.Hour,
	}
}

// Attempts is the number of attempts a delivery gets before it is dead-lettered.
func (s Schedule) Attempts() int { return len(s.Delays) + 1 }

// Validate reports a schedule that cannot be followed.
func (s Schedule) Validate() error {
	var errs []error
	if len(s.Delays) == 0 {
		errs = append(errs, errors.New("schedule has no delays"))
	}
	for i, d := range s.Delays {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("delay %d is %s, must be positive", i+1, d))
		}
	}
	if s.Jitter < 0 || s.Jitter >= 1 {
		errs = append(errs, fmt.Errorf("jitter %v must be in [0, 1)", s.Jitter))
	}
	if s.MaxRetryAfter <= 0 {
		errs = append(errs, errors.New("max retry-after must be positive"))
	}
	return errors.Join(errs...)
}

// Next returns the wait before the attempt that follows failed attempt attemptNo (1 for the
// first), with jitter, raised to retryAfter when the receiver asked for longer (capped at
// MaxRetryAfter; zero or negative means no Retry-After). ok is false when attemptNo was the
// last attempt the schedule allows.
func (s Schedule) Next(attemptNo int, retryAfter time.Duration) (delay time.Duration, ok bool) {
	return s.next(attemptNo, retryAfter, rand.Float64())
}

// next is Next with the random draw u in [0, 1) given, so tests can pin it.
func (s Schedule) next(attemptNo int, retryAfter time.Duration, u float64) (time.Duration, bool) {
	if attemptNo < 1 {
		attemptNo = 1
	}
	if attemptNo > len(s.Delays) {
		return 0, false
	}
	base := s.Delays[attemptNo-1]
	delay := time.Duration(float64(base) * (1 + s.Jitter*(2*u-1)))
	if retryAfter > 0 {
		delay = max(delay, min(retryAfter, s.MaxRetryAfter))
	}
	return delay, true
}

// longest is the longest wait the schedule can ask for.
func (s Schedule) longest() time.Duration {
	var d time.Duration
	for _, x := range s.Delays {
		d = max(d, time.Duration(float64(x)*(1+s.Jitter)))
	}
	return max(d, s.MaxRetryAfter)
}
