package admin

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/durations"
	"github.com/hookstream/hookstream/internal/secretbox"
)

// MaxBodyBytes is the largest request body the API reads (1 MiB); larger bodies get 413.
const MaxBodyBytes = 1 << 20

// Page sizes of lists and of the cursor feed.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
)

// minOperatorToken is the shortest operator token accepted: a guessable token would open every
// partner's data.
const minOperatorToken = 16

// Config configures the API. Start from DefaultConfig, set the connection settings and the
// operator token and secret key, and adjust the rest.
type Config struct {
	// Base holds the brokers, the topic prefix, the logger, the registerer (nil: metrics are
	// kept but not registered) and extra franz-go options for every client the API makes
	// (e.g. for tests).
	component.Base
	// OperatorToken is the bearer token that may act on every partner (HOOKSTREAM_ADMIN_TOKEN),
	// at least 16 characters.
	OperatorToken string
	// SecretKey seals endpoint secrets (HOOKSTREAM_SECRET_KEY), the same key the sender opens
	// them with.
	SecretKey secretbox.Key
	// Egress checks endpoint URLs at registration (R26). Nil builds the production policy,
	// egress.DefaultConfig(); `hookstream dev` passes a guard that allows loopback HTTP.
	Egress *egress.Guard

	// RotationOverlap is how long a rotated-out secret keeps signing (R17).
	RotationOverlap time.Duration
	// FeedRetention is the events topic's retention: how far back the cursor feed and log
	// replays reach (R33). Keep it equal to the topics' FeedRetention.
	FeedRetention time.Duration
	// OutboxRetention is how long outbox rows are kept (cdc's OutboxRetention; 0: never
	// dropped); replays read envelopes from the outbox within it, from the events topic after it.
	OutboxRetention time.Duration
	// HistoryRetention is how long delivery history is kept (the recorder's HistoryRetention),
	// as stated by GET /v1/limits.
	HistoryRetention time.Duration
	// ReplayWindow is how old an event may be and still be replayed; at most the longer of
	// FeedRetention and OutboxRetention, where envelopes can still be found.
	ReplayWindow time.Duration

	// AutomaticAttempts is the most attempts a retry policy may give: the deployment's schedule
	// or an endpoint's policy within Retry.Bounds (20 by default). Automatic attempts are
	// numbered 1 to AutomaticAttempts; a replay made while automatic attempts may still be in
	// flight is numbered above them (see replay/attempts.go).
	AutomaticAttempts int

	// ReplayBatch is how many deliveries a replay job reserves and produces per step.
	ReplayBatch int
	// ReplayWorkers is how many replay jobs one process runs at once.
	ReplayWorkers int
	// JobLease is how long a running job stays claimed without progress; a job whose process
	// died is resumed by another process after it.
	JobLease time.Duration
	// JobPollInterval is how often Run looks for queued jobs it was not told about.
	JobPollInterval time.Duration

	// MaxLogReaders bounds the concurrent reads of the events topic (feed pages, event lookups).
	MaxLogReaders int
	// MaxFeedScan bounds the records of other partners one feed page may skip; the page then
	// ends early with a cursor past them.
	MaxFeedScan int
	// EventLookupWindow is how long after its id was made an event may reach the events topic
	// (the longest a platform transaction stays open plus cdc's lag). Lookups by event id scan
	// the partner's partition from the id's time to this much after it.
	EventLookupWindow time.Duration
	// StreamPoll is how often an open event stream looks for new records in the partner's
	// partition; StreamHeartbeat how long it stays silent at most, writing a comment then, so
	// proxies and the client keep an idle stream open.
	StreamPoll      time.Duration
	StreamHeartbeat time.Duration

	// Limits are the quotas of every partner, stated by GET /v1/limits.
	Limits Limits
	// Retry is the deployment's retry policy and the bounds endpoint policies are checked
	// against, stated by GET /v1/limits.
	Retry RetryLimits
}

// DefaultConfig returns the defaults for everything but brokers, token and key.
func DefaultConfig() Config {
	return Config{
		Base:              component.DefaultBase(),
		RotationOverlap:   24 * time.Hour,
		FeedRetention:     30 * 24 * time.Hour,
		OutboxRetention:   7 * 24 * time.Hour,
		HistoryRetention:  30 * 24 * time.Hour,
		ReplayWindow:      30 * 24 * time.Hour,
		AutomaticAttempts: 20,
		ReplayBatch:       500,
		ReplayWorkers:     2,
		JobLease:          30 * time.Second,
		JobPollInterval:   time.Second,
		MaxLogReaders:     16,
		MaxFeedScan:       20000,
		EventLookupWindow: time.Hour,
		StreamPoll:        250 * time.Millisecond,
		StreamHeartbeat:   15 * time.Second,
		Limits:            DefaultLimits(),
		Retry:             DefaultRetryLimits(),
	}
}

// Limits are the quotas of one partner (quota.go). They bind every request on the partner's
// routes, the operator's included: they bound what one partner's work may take of the shared
// system, whoever asks for it. The operator gives partners more by raising them.
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
}

// DefaultLimits are the quotas DefaultConfig sets.
func DefaultLimits() Limits {
	return Limits{Endpoints: 100, ReplayJobs: 2, TestEventsPerMinute: 10, ReplaysPerMinute: 60, ReplayDeliveries: 100_000}
}

// validate reports the limits no partner could work with, or that the job table cannot count.
func (l Limits) validate() []error {
	var errs []error
	for _, q := range []struct {
		name  string
		value int
	}{
		{"endpoints", l.Endpoints}, {"replay jobs", l.ReplayJobs},
		{"test events per minute", l.TestEventsPerMinute}, {"replays per minute", l.ReplaysPerMinute},
		{"replay deliveries", l.ReplayDeliveries},
	} {
		if q.value < 1 || q.value > math.MaxInt32 {
			errs = append(errs, fmt.Errorf("limit of %s %d must be between 1 and %d", q.name, q.value, math.MaxInt32))
		}
	}
	return errs
}

// Validate reports every setting the API cannot run with.
func (c Config) Validate() error {
	var errs []error
	if err := c.Base.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(c.OperatorToken) < minOperatorToken {
		// Never print the token, not even its length.
		errs = append(errs, fmt.Errorf("operator token must be at least %d characters", minOperatorToken))
	}
	if c.SecretKey.IsZero() {
		errs = append(errs, errors.New("secret key is not set"))
	}
	errs = append(errs, durations.NotPositive(map[string]time.Duration{
		"rotation overlap":    c.RotationOverlap,
		"feed retention":      c.FeedRetention,
		"history retention":   c.HistoryRetention,
		"replay window":       c.ReplayWindow,
		"job lease":           c.JobLease,
		"job poll interval":   c.JobPollInterval,
		"event lookup window": c.EventLookupWindow,
		"stream poll":         c.StreamPoll,
		"stream heartbeat":    c.StreamHeartbeat,
	})...)
	if c.OutboxRetention < 0 {
		errs = append(errs, fmt.Errorf("outbox retention %s is negative", c.OutboxRetention))
	}
	if c.OutboxRetention > 0 && c.ReplayWindow > max(c.FeedRetention, c.OutboxRetention) {
		errs = append(errs, fmt.Errorf("replay window %s is longer than both the feed retention %s and the outbox retention %s: older envelopes cannot be found",
			c.ReplayWindow, c.FeedRetention, c.OutboxRetention))
	}
	if c.AutomaticAttempts < 1 {
		errs = append(errs, fmt.Errorf("automatic attempts %d must be at least 1", c.AutomaticAttempts))
	}
	if c.ReplayBatch < 1 || c.ReplayBatch > 10000 {
		errs = append(errs, fmt.Errorf("replay batch %d must be between 1 and 10000", c.ReplayBatch))
	}
	if c.ReplayWorkers < 1 {
		errs = append(errs, fmt.Errorf("replay workers %d must be at least 1", c.ReplayWorkers))
	}
	if c.MaxLogReaders < 1 {
		errs = append(errs, fmt.Errorf("max log readers %d must be at least 1", c.MaxLogReaders))
	}
	if c.MaxFeedScan < MaxPageLimit {
		errs = append(errs, fmt.Errorf("max feed scan %d must be at least %d", c.MaxFeedScan, MaxPageLimit))
	}
	errs = append(errs, c.Limits.validate()...)
	errs = append(errs, c.Retry.validate(c.AutomaticAttempts)...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("admin: config: %w", err)
	}
	return nil
}
