package retrytopics

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/retrypolicy"
	"github.com/hookstream/hookstream/internal/topics"
)

// Config configures the Scheduler and the tier consumers. Fill it with DefaultConfig and adjust;
// cmd/ builds it from flags and the environment.
type Config struct {
	// Base holds the brokers, the topic prefix, the logger, the registerer (nil: metrics are
	// kept but not registered) and extra franz-go options for every client (e.g. for tests).
	component.Base

	// TierDelays maps each tier in use (a suffix of topics.RetryTiers, naming the topic
	// <prefix>.retry.<tier>) to its delay. A retry goes to the tier with the largest delay not
	// above its own; a wait shorter than every tier goes to the shortest. The nominal delays
	// are the defaults; tests compress them.
	TierDelays map[string]time.Duration
	// Schedule is the deployment's retry policy, which endpoints without a retry policy of
	// their own follow.
	Schedule Schedule
	// Bounds limit the delays and attempts of endpoint retry policies (R22); the admin API
	// refuses a policy outside them, and the scheduler brings a policy registered under wider
	// bounds within them. The configured Schedule is the operator's own and not bound by them.
	Bounds retrypolicy.Bounds
	// MaxHold is the longest a record may wait in a tier. It must stay below the retention of
	// the tier topics (7 days by default), or retention could delete a record still held; a
	// tier record due further away is dead-lettered, and Defer waits at most this long.
	MaxHold time.Duration

	// InstanceID distinguishes this process's transactional producers from those of other
	// `hookstream retry` processes (<prefix>.retry.<tier>.<InstanceID>); two processes running
	// at once must not share one. Give each replica a stable one (its pod name): a restarted
	// replica then fences its predecessor's open transaction at once instead of waiting out
	// TransactionTimeout, and, a static member of every tier's group under this id, takes its
	// partitions back at once instead of after the session timeout. Empty picks a random
	// transactional id and joins the groups as a dynamic member: a random static id would
	// leave, at every restart, a member holding partitions until its session times out.
	InstanceID string

	// LookAheadRecords bounds, per tier, how many records wait in memory for their due time;
	// records beyond it stay in Kafka behind paused partitions until there is room.
	LookAheadRecords int
	// LookAheadBytes bounds the bytes of those records per tier (exceeded by at most one poll).
	LookAheadBytes int
	// ReleaseBatch is the most records released in one Kafka transaction.
	ReleaseBatch int
	// ReleaseLinger is how long the earliest due record may wait for others to fall due and
	// share its release transaction. With retries falling due all the time, a tier without it
	// commits a transaction for almost every record, and each costs the broker a round of
	// coordinator writes and markers; with it a tier commits at most one per linger while its
	// records stream in. Records are released at most this much (plus the transaction) late,
	// never early. Zero releases each record as soon as it is due.
	ReleaseLinger time.Duration
	// MaxPollWait is the longest a tier consumer waits in a poll when nothing is due sooner;
	// it bounds how stale the pause decisions and gauges get.
	MaxPollWait time.Duration
	// FetchMaxWait is how long the broker may hold a fetch that has no data; it is also the
	// delay before a resumed partition is fetched again.
	FetchMaxWait time.Duration
	// FetchMaxBytes bounds one fetch response per tier consumer (compressed bytes: what it holds
	// decompressed can be several times more).
	FetchMaxBytes int32
	// TransactionTimeout is the Kafka transaction timeout of a release.
	TransactionTimeout time.Duration
	// StatsInterval is how often the held-records gauge is refreshed from the topic's end
	// offsets.
	StatsInterval time.Duration
	// RetryInterval is the wait before a tier consumer starts a new Kafka session after the
	// previous one failed.
	RetryInterval time.Duration
	// MaxDeadLetterBytes bounds the original delivery kept in a dead letter; a larger one is
	// kept without its body (the event itself stays in the events topic).
	MaxDeadLetterBytes int

	// TracerProvider, when set, turns tracing on in the tiers: each release gets a span, the
	// child of the tier record's traceparent (the attempt that failed), whose context the
	// released record carries, so a retried delivery keeps its trace. The Scheduler needs none:
	// it writes the traceparent the sender hands it (records.Delivery and Attempt.Traceparent).
	TracerProvider trace.TracerProvider
}

// DefaultTierDelays returns every tier of topics.RetryTiers at its nominal delay.
func DefaultTierDelays() map[string]time.Duration {
	m := make(map[string]time.Duration, len(topics.RetryTiers))
	for _, t := range topics.RetryTiers {
		d, err := time.ParseDuration(t)
		if err != nil {
			panic(fmt.Sprintf("retrytopics: tier %q is not a duration", t)) // a bug in topics.RetryTiers
		}
		m[t] = d
	}
	return m
}

// DefaultConfig returns the defaults for everything but the brokers. The look-ahead defaults
// keep at most 8 × 8 MiB of held records in memory across all tiers.
func DefaultConfig() Config {
	return Config{
		Base:               component.DefaultBase(),
		TierDelays:         DefaultTierDelays(),
		Schedule:           DefaultSchedule(),
		Bounds:             retrypolicy.DefaultBounds(),
		MaxHold:            6 * 24 * time.Hour,
		LookAheadRecords:   20000,
		LookAheadBytes:     8 << 20,
		ReleaseBatch:       1000,
		ReleaseLinger:      20 * time.Millisecond,
		MaxPollWait:        time.Second,
		FetchMaxWait:       500 * time.Millisecond,
		FetchMaxBytes:      1 << 20,
		TransactionTimeout: 30 * time.Second,
		StatsInterval:      5 * time.Second,
		RetryInterval:      time.Second,
		MaxDeadLetterBytes: 900 << 10,
	}
}

// Validate reports settings the retry tiers cannot run with.
func (c Config) Validate() error {
	var errs []error
	if err := c.Base.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(c.TierDelays) == 0 {
		errs = append(errs, errors.New("no retry tiers"))
	}
	seen := map[time.Duration]string{}
	for name, d := range c.TierDelays {
		if !slices.Contains(topics.RetryTiers, name) {
			errs = append(errs, fmt.Errorf("tier %q is not one of %v", name, topics.RetryTiers))
		}
		if d <= 0 {
			errs = append(errs, fmt.Errorf("tier %s has delay %s, must be positive", name, d))
		}
		if other, dup := seen[d]; dup {
			errs = append(errs, fmt.Errorf("tiers %s and %s have the same delay %s", other, name, d))
		}
		seen[d] = name
	}
	if err := c.Schedule.Validate(); err != nil {
		errs = append(errs, err)
	} else if longest := c.Schedule.longest(); longest > c.MaxHold {
		errs = append(errs, fmt.Errorf("the schedule can wait %s, longer than the max hold %s", longest, c.MaxHold))
	}
	if err := c.Bounds.Validate(); err != nil {
		errs = append(errs, err)
	} else if longest := time.Duration(float64(c.Bounds.MaxDelay) * (1 + c.Schedule.Jitter)); longest > c.MaxHold {
		errs = append(errs, fmt.Errorf("a retry policy may wait %s (the max delay with jitter), longer than the max hold %s", longest, c.MaxHold))
	}
	if c.LookAheadRecords < 1 {
		errs = append(errs, errors.New("look-ahead records must be at least 1"))
	}
	if c.LookAheadBytes < 64<<10 {
		errs = append(errs, errors.New("look-ahead bytes must be at least 64 KiB"))
	}
	if c.ReleaseBatch < 1 {
		errs = append(errs, errors.New("release batch must be at least 1"))
	}
	if c.ReleaseLinger < 0 || c.ReleaseLinger > time.Second {
		errs = append(errs, errors.New("release linger must be between 0 and 1s"))
	}
	if c.MaxPollWait <= 0 || c.FetchMaxWait <= 0 || c.TransactionTimeout <= 0 || c.StatsInterval <= 0 || c.RetryInterval <= 0 {
		errs = append(errs, errors.New("intervals and timeouts must be positive"))
	}
	if c.FetchMaxBytes < 64<<10 {
		errs = append(errs, errors.New("fetch max bytes must be at least 64 KiB"))
	}
	if c.MaxDeadLetterBytes < 1024 {
		errs = append(errs, errors.New("max dead letter bytes must be at least 1 KiB"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("retrytopics: %w", err)
	}
	return nil
}

// tierRoute is one tier: its name, topic and delay.
type tierRoute struct {
	name  string
	topic string
	delay time.Duration
}

// routes lists the configured tiers in increasing delay order.
func (c Config) routes() []tierRoute {
	names := topics.For(c.Prefix)
	out := make([]tierRoute, 0, len(c.TierDelays))
	for name, d := range c.TierDelays {
		out = append(out, tierRoute{name: name, topic: names.Retry[name], delay: d})
	}
	slices.SortFunc(out, func(a, b tierRoute) int { return cmp.Compare(a.delay, b.delay) })
	return out
}

// routeFor picks the tier of a retry that waits d: the largest tier delay not above d, or the
// shortest tier when d is shorter than all. routes is sorted by delay and not empty.
func routeFor(routes []tierRoute, d time.Duration) tierRoute {
	r := routes[0]
	for _, c := range routes[1:] {
		if c.delay > d {
			break
		}
		r = c
	}
	return r
}

// instanceID returns the configured instance id or a random one.
func (c Config) instanceID() string {
	if c.InstanceID != "" {
		return c.InstanceID
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b) // documented never to fail since Go 1.24
	return hex.EncodeToString(b)
}
