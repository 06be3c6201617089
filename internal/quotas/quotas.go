// Package quotas is what a partner's quotas are (design.md section 10): the limits the admin API
// holds every partner to, their defaults and their check. It lives apart from the admin server
// so the configuration every command shares states the defaults without linking the server;
// admin enforces the quotas, and the sender the partner's share of deliveries.
package quotas

import (
	"errors"
	"fmt"
	"math"
)

// Limits are the quotas of one partner. They bind every request on the partner's routes, the
// operator's included: they bound what one partner's work may take of the shared system,
// whoever asks for it. The operator gives partners more by raising them.
type Limits struct {
	// Endpoints is the most endpoints a partner may have, enabled or disabled
	// (HOOKSTREAM_LIMIT_ENDPOINTS).
	Endpoints int
	// ReplayJobs is the most bulk replay jobs of a partner that may be queued or running at
	// once (HOOKSTREAM_LIMIT_REPLAY_JOBS).
	ReplayJobs int
	// TestEventsPerMinute is the most test events a partner may send in any 60 seconds,
	// counted by each admin process on its own (HOOKSTREAM_LIMIT_TEST_EVENTS_PER_MINUTE).
	TestEventsPerMinute int
	// ReplaysPerMinute is the most single-delivery replays a partner may ask for in any 60
	// seconds, counted by each admin process on its own (HOOKSTREAM_LIMIT_REPLAYS_PER_MINUTE).
	ReplaysPerMinute int
	// ReplayDeliveries is the most deliveries one replay job may replay
	// (HOOKSTREAM_LIMIT_REPLAY_DELIVERIES).
	ReplayDeliveries int
	// DeliveriesInFlight is the most requests the sender has out at once for all the endpoints
	// of one partner, and DeliveriesPerSec (0: no limit) the most it makes a second, each
	// sender process on its own (HOOKSTREAM_LIMIT_DELIVERIES_IN_FLIGHT,
	// HOOKSTREAM_LIMIT_DELIVERIES_PER_SEC; design.md section 7): the share of the senders one
	// partner's backlog may take, whatever its endpoints allow.
	DeliveriesInFlight int
	DeliveriesPerSec   int
	// ReplayDeliveriesPerSec (0: no limit) is the most deliveries a second the bulk replay
	// jobs of one partner replay together, each admin process on its own
	// (HOOKSTREAM_LIMIT_REPLAY_DELIVERIES_PER_SEC; design.md section 7): a replay of a month
	// takes the spare capacity, not the live flow's.
	ReplayDeliveriesPerSec int
}

// Defaults are the quotas of a deployment that sets none.
func Defaults() Limits {
	return Limits{Endpoints: 100, ReplayJobs: 2, TestEventsPerMinute: 10, ReplaysPerMinute: 60, ReplayDeliveries: 100_000,
		DeliveriesInFlight: 512, ReplayDeliveriesPerSec: 1000}
}

// Validate reports every limit no partner could work with, or that the job table cannot count.
func (l Limits) Validate() error {
	var errs []error
	for _, q := range []struct {
		name  string
		value int
	}{
		{"endpoints", l.Endpoints}, {"replay jobs", l.ReplayJobs},
		{"test events per minute", l.TestEventsPerMinute}, {"replays per minute", l.ReplaysPerMinute},
		{"replay deliveries", l.ReplayDeliveries}, {"deliveries in flight", l.DeliveriesInFlight},
	} {
		if q.value < 1 || q.value > math.MaxInt32 {
			errs = append(errs, fmt.Errorf("limit of %s %d must be between 1 and %d", q.name, q.value, math.MaxInt32))
		}
	}
	if l.DeliveriesPerSec < 0 || l.DeliveriesPerSec > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("limit of deliveries per second %d must be between 0 (no limit) and %d", l.DeliveriesPerSec, math.MaxInt32))
	}
	if l.ReplayDeliveriesPerSec < 0 || l.ReplayDeliveriesPerSec > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("limit of replay deliveries per second %d must be between 0 (no limit) and %d", l.ReplayDeliveriesPerSec, math.MaxInt32))
	}
	return errors.Join(errs...)
}
