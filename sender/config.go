package sender

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/durations"
	"github.com/hookstream/hookstream/internal/secretbox"
)

// DefaultUserAgent names hookstream in every request; cmd replaces "dev" with the build version.
const DefaultUserAgent = "hookstream/dev"

// Config configures a Sender. Start from DefaultConfig, set the connection settings and the
// secret key, and adjust; New validates.
type Config struct {
	// Base holds the brokers, the topic prefix, the logger, the registerer (nil: metrics are
	// kept but not registered) and extra franz-go options for both clients (e.g. for tests).
	component.Base
	// Group is the consumer group of the deliveries topic; empty means Prefix + ".sender".
	Group string
	// InstanceID, when set, makes this sender a static member of the group: restarted with the
	// same id, it takes its partitions back at once instead of after the session timeout (45 s).
	// Every sender running at once needs its own: a second one with the same id fences the first.
	InstanceID string

	// Egress is the SSRF policy every request goes through, with the connect, TLS and total
	// timeouts and the response size limit (design.md sections 7 and 9).
	Egress egress.Config
	// SecretKeys open the endpoint secrets (HOOKSTREAM_SECRET_KEY, HOOKSTREAM_SECRET_KEYS; see
	// secretbox.Keyring): every key a stored value may be sealed under.
	SecretKeys secretbox.Keyring
	// UserAgent is sent with every request: "hookstream/<version>".
	UserAgent string
	// MaxBodyBytes is the largest body sent (R28); larger delivery records go to the dlq topic.
	MaxBodyBytes int

	// InitialInFlight is where an endpoint's adaptive concurrency starts (lower if its
	// max_in_flight is lower); from there it rises while the endpoint answers fast and work
	// waits, and falls when it slows or fails, never above max_in_flight.
	InitialInFlight int
	// QueueSize is how many records may wait for one endpoint. When it is full, the record's
	// partition waits for room; when the wait holds back another endpoint's records and the
	// endpoint does not keep up, the record is deferred to a retry tier without counting an
	// attempt (R21).
	QueueSize int
	// MaxSlotWait: an endpoint whose requests end at least this often while work waits (and
	// whose rate limit allows as much) is fed at its pace: a full queue makes intake wait for
	// room instead of deferring. A slower one, for MaxIntakeWait without a break, has its
	// overflow deferred where it holds another endpoint back.
	MaxSlotWait time.Duration
	// StallAfter: a lane with requests out and none ended for this long is stalled (a hanging
	// receiver, caught before its first timeout), which counts as slower (MaxSlotWait).
	StallAfter time.Duration
	// MaxIntakeWait bounds one wait of intake for room in a lane that holds another endpoint
	// back, and is how long a lane must be judged slower before its overflow is deferred. When
	// no room comes in time, the record is deferred, and so is the lane's overflow until its
	// queue drains to half.
	MaxIntakeWait time.Duration
	// MaxBuffered caps the records taken from Kafka and not yet finished, across all
	// endpoints and partitions; intake waits at the cap and goes on at half of it. The Kafka
	// client holds at most one more fetch per broker meanwhile (fetchMaxBytes).
	MaxBuffered int
	// MaxBufferedBytes caps the bytes of those records the same way.
	MaxBufferedBytes int64
	// DeferDelay is the delay asked for work deferred because its endpoint's queue is full. It
	// doubles with each earlier such deferral of the same record, up to MaxDeferDelay.
	DeferDelay    time.Duration
	MaxDeferDelay time.Duration
	// PartnerMaxInFlight caps the requests out at once for all the endpoints of one partner,
	// and PartnerRatePerSec (0: none) the requests a second, in this sender process: a
	// partner's backlog takes at most that of the sender whatever its endpoints allow
	// (design.md section 7).
	PartnerMaxInFlight int
	PartnerRatePerSec  float64
	// DueTolerance: a record due at most this far in the future is sent now rather than
	// deferred, which absorbs clock skew between hosts.
	DueTolerance time.Duration

	// BreakerFailures (at most 64) is the run of consecutive failed attempts that opens an endpoint's
	// circuit; BreakerCooldown is how long it stays open before a single probe request.
	BreakerFailures int
	BreakerCooldown time.Duration

	// RetryClientErrors retries 4xx answers other than 408, 410, 425 and 429 by the normal
	// schedule (the published policy); false makes them final.
	RetryClientErrors bool
	// MaxRetryAfter caps a receiver's Retry-After.
	MaxRetryAfter time.Duration

	// Ordered endpoints retry a failing head in process, with a backoff from OrderedBackoff
	// doubling up to OrderedMaxBackoff, for at most OrderedMaxHold; then the head goes to the
	// retry tiers like any other failure and the next record proceeds.
	OrderedBackoff    time.Duration
	OrderedMaxBackoff time.Duration
	OrderedMaxHold    time.Duration

	// CommitInterval is how often finished offsets are committed, with the finished records
	// above the mark (finished.go): what a killed sender finished since its last commit is
	// sent again by the next owner, so the interval is short; a commit is one small request.
	CommitInterval time.Duration
	// ShutdownGrace bounds how long requests in flight may finish at shutdown or when a
	// partition is revoked; what is still running then is abandoned uncommitted and delivered
	// again by the next owner. Keep it above Egress.RequestTimeout.
	ShutdownGrace time.Duration

	// TracerProvider, when set, turns tracing on: each attempt gets a span, the child of the
	// delivery record's traceparent, whose context the request carries in its traceparent
	// header and the attempt (and retry) records in theirs. nil: no span and no header.
	TracerProvider trace.TracerProvider
}

// DefaultConfig returns the defaults of design.md section 7 for everything but the brokers and
// the secret key.
func DefaultConfig() Config {
	return Config{
		Base:               component.DefaultBase(),
		Egress:             egress.DefaultConfig(),
		UserAgent:          DefaultUserAgent,
		MaxBodyBytes:       1 << 20,
		InitialInFlight:    8,
		QueueSize:          256,
		MaxSlotWait:        20 * time.Millisecond,
		StallAfter:         250 * time.Millisecond,
		MaxIntakeWait:      500 * time.Millisecond,
		MaxBuffered:        10000,
		MaxBufferedBytes:   128 << 20,
		DeferDelay:         5 * time.Second,
		MaxDeferDelay:      10 * time.Minute,
		DueTolerance:       time.Second,
		PartnerMaxInFlight: 512,
		BreakerFailures:    5,
		BreakerCooldown:    10 * time.Second,
		RetryClientErrors:  true,
		MaxRetryAfter:      time.Hour,
		OrderedBackoff:     time.Second,
		OrderedMaxBackoff:  time.Minute,
		OrderedMaxHold:     15 * time.Minute,
		CommitInterval:     100 * time.Millisecond,
		ShutdownGrace:      20 * time.Second,
	}
}

// group returns the consumer group in force.
func (c Config) group() string {
	return cmp.Or(c.Group, c.Base.DefaultGroup("sender"))
}

// Validate reports every setting the sender cannot run with.
func (c Config) Validate() error {
	var errs []error
	if err := c.Base.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.SecretKeys.IsZero() {
		errs = append(errs, errors.New("secret keys are not set (HOOKSTREAM_SECRET_KEY or HOOKSTREAM_SECRET_KEYS)"))
	}
	if err := c.Egress.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.UserAgent == "" {
		errs = append(errs, errors.New("user agent is empty"))
	}
	for _, v := range []struct {
		name  string
		value int
	}{
		{"max body bytes", c.MaxBodyBytes},
		{"initial in flight", c.InitialInFlight},
		{"queue size", c.QueueSize},
		{"max buffered", c.MaxBuffered},
		{"breaker failures", c.BreakerFailures},
		{"partner max in flight", c.PartnerMaxInFlight},
	} {
		if v.value < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", v.name, v.value))
		}
	}
	errs = append(errs, durations.NotPositive(map[string]time.Duration{
		"max slot wait":       c.MaxSlotWait,
		"stall after":         c.StallAfter,
		"max intake wait":     c.MaxIntakeWait,
		"defer delay":         c.DeferDelay,
		"max defer delay":     c.MaxDeferDelay,
		"breaker cooldown":    c.BreakerCooldown,
		"max retry after":     c.MaxRetryAfter,
		"ordered backoff":     c.OrderedBackoff,
		"ordered max backoff": c.OrderedMaxBackoff,
		"ordered max hold":    c.OrderedMaxHold,
		"commit interval":     c.CommitInterval,
		"shutdown grace":      c.ShutdownGrace,
	})...)
	if c.BreakerFailures > recentSize {
		errs = append(errs, fmt.Errorf("breaker failures must be at most %d (the results a circuit remembers), got %d", recentSize, c.BreakerFailures))
	}
	if c.MaxBufferedBytes < 1 {
		errs = append(errs, fmt.Errorf("max buffered bytes must be at least 1, got %d", c.MaxBufferedBytes))
	}
	if c.PartnerRatePerSec < 0 || math.IsNaN(c.PartnerRatePerSec) || math.IsInf(c.PartnerRatePerSec, 0) {
		errs = append(errs, fmt.Errorf("partner rate per second must be a finite number, 0 (no limit) or more, got %v", c.PartnerRatePerSec))
	}
	if c.DueTolerance < 0 {
		errs = append(errs, fmt.Errorf("due tolerance %s must not be negative", c.DueTolerance))
	}
	if c.MaxDeferDelay < c.DeferDelay {
		errs = append(errs, fmt.Errorf("max defer delay %s is below defer delay %s", c.MaxDeferDelay, c.DeferDelay))
	}
	if c.OrderedMaxBackoff < c.OrderedBackoff {
		errs = append(errs, fmt.Errorf("ordered max backoff %s is below ordered backoff %s", c.OrderedMaxBackoff, c.OrderedBackoff))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sender: config: %w", err)
	}
	return nil
}
