package admin

import (
	"errors"
	"fmt"
	"time"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/durations"
	"github.com/hookstream/hookstream/internal/quotas"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/topics"
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
	// SecretKeys seal endpoint secrets under their active key and open values sealed under any
	// of their keys (HOOKSTREAM_SECRET_KEY, HOOKSTREAM_SECRET_KEYS); the sender opens them with
	// the same keys.
	SecretKeys secretbox.Keyring
	// Egress checks endpoint URLs at registration (R26). Nil builds the production policy,
	// egress.DefaultConfig(); `hookstream dev` passes a guard that allows loopback HTTP.
	Egress *egress.Guard

	// RotationOverlap is how long a rotated-out secret keeps signing (R17).
	RotationOverlap time.Duration
	// FeedRetention is how far back the cursor feed and log replays are promised to reach
	// (R33). Keep it equal to the topics' FeedRetention.
	FeedRetention time.Duration
	// EventLogRetention is the events topic's retention (the topics' EventLogRetention): at
	// least FeedRetention, or topics.RetainForever (-1); 0 states FeedRetention. The feed reads
	// the same topic, so it reaches back as far as the log keeps.
	EventLogRetention time.Duration
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
	// PartitionCountTTL is how long the events topic's partition count cdc publishes with is
	// kept before it is read again (from cdc's newest checkpoint): after partitions were added,
	// feeds and streams follow a partner to its new partition within this long of cdc's move.
	PartitionCountTTL time.Duration

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
		PartitionCountTTL: 30 * time.Second,
		Limits:            quotas.Defaults(),
		Retry:             DefaultRetryLimits(),
	}
}

// Limits are the quotas of one partner (internal/quotas), which the API enforces (quota.go).
type Limits = quotas.Limits

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
	if c.SecretKeys.IsZero() {
		errs = append(errs, errors.New("secret keys are not set"))
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
		"partition count ttl": c.PartitionCountTTL,
	})...)
	if c.OutboxRetention < 0 {
		errs = append(errs, fmt.Errorf("outbox retention %s is negative", c.OutboxRetention))
	}
	if c.EventLogRetention != 0 && c.EventLogRetention != topics.RetainForever && c.EventLogRetention < c.FeedRetention {
		errs = append(errs, fmt.Errorf("event log retention %s is shorter than the feed retention %s", c.EventLogRetention, c.FeedRetention))
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
	if err := c.Limits.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Retry.validate(c.AutomaticAttempts)...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("admin: config: %w", err)
	}
	return nil
}
