package inbox

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/durations"
)

// PayloadValidator checks an authenticated envelope before it is stored, typically against the
// JSON Schema of its event type from GET /v1/event-types (R31). body is the raw request body.
// An error refuses the event with 400 and its message, so it must not carry secrets.
type PayloadValidator func(eventType string, body []byte) error

// Config adjusts an Inbox. Start from DefaultConfig and change what needs changing; New checks
// it with Validate.
type Config struct {
	// Table is the inbox table: lowercase letters, digits and underscores, at most 48 bytes
	// (the index name adds a suffix within PostgreSQL's 63-byte limit). Default webhook_inbox.
	Table string
	// MaxBodyBytes is the largest request body read; a larger one is answered 413. The default,
	// 1 MiB, is the largest body hookstream sends (sender.Config.MaxBodyBytes).
	MaxBodyBytes int64
	// StoreTimeout bounds the insert, so a slow database turns into a 503 that hookstream
	// retries instead of a request that hangs until the sender gives up.
	StoreTimeout time.Duration
	// ValidatePayload, when set, checks each verified envelope before it is stored.
	ValidatePayload PayloadValidator

	// Authorize, when set, runs before the ProcessFunc for every event of every source, in
	// its transaction: the place to check current permissions (see AuthorizeFunc).
	Authorize AuthorizeFunc

	// BatchSize is how many due events one claim locks. Events claimed together share one
	// transaction: their effects commit together, and locks taken while processing one of them
	// are held until the batch commits. 1, the default, gives every event its own transaction;
	// raise it for throughput when processing is short and touches disjoint rows.
	BatchSize int
	// PollInterval is how often Run looks for due events without a wake-up from this process's
	// handler: events stored by other instances, retries coming due, work left by a restart.
	PollInterval time.Duration
	// ProcessTimeout bounds one call of the ProcessFunc; running over counts as a failure.
	ProcessTimeout time.Duration
	// MaxAttempts is how many failed attempts move an event to the dead state.
	MaxAttempts int
	// FirstRetryDelay is the wait after the first failure; it doubles with each further
	// failure up to MaxRetryDelay.
	FirstRetryDelay time.Duration
	MaxRetryDelay   time.Duration

	// Retention is how long finished rows (processed, refused) are kept before Run purges
	// them, counted from when they finished; 0 keeps them for ever. Keep it at least as long
	// as any source redelivers: hookstream's replay window (replay_window_seconds in
	// GET /v1/limits, 30 days by default), Stripe's and GitHub's 3 days of retries and
	// redeliveries. An event redelivered after its row is purged is processed again. Dead
	// rows are never purged: they wait for an operator.
	Retention time.Duration
	// PurgeInterval is how often Run purges when Retention is set.
	PurgeInterval time.Duration

	// Registerer, when set, receives the inbox's metrics (hookstream_inbox_*, see the package
	// documentation); nil exports none. One Registerer takes one Inbox: give others their
	// own, or wrap it with prometheus.WrapRegistererWith.
	Registerer prometheus.Registerer

	// Logger receives refused requests (Info), storage and processing failures (Warn, Error).
	Logger *slog.Logger
}

// Defaults. With them a failing event is tried 20 times over about 10 hours before it is dead,
// and finished rows are kept 30 days.
const (
	DefaultTable           = "webhook_inbox"
	DefaultMaxBodyBytes    = 1 << 20
	DefaultStoreTimeout    = 5 * time.Second
	DefaultBatchSize       = 1
	DefaultPollInterval    = time.Second
	DefaultProcessTimeout  = 30 * time.Second
	DefaultMaxAttempts     = 20
	DefaultFirstRetryDelay = 5 * time.Second
	DefaultMaxRetryDelay   = time.Hour
	DefaultRetention       = 30 * 24 * time.Hour
	DefaultPurgeInterval   = time.Hour
)

// maxBatchSize keeps one claim's locks and memory bounded whatever the configuration says.
const maxBatchSize = 1000

// DefaultConfig returns the defaults above, logging to slog.Default().
func DefaultConfig() Config {
	return Config{
		Table:           DefaultTable,
		MaxBodyBytes:    DefaultMaxBodyBytes,
		StoreTimeout:    DefaultStoreTimeout,
		BatchSize:       DefaultBatchSize,
		PollInterval:    DefaultPollInterval,
		ProcessTimeout:  DefaultProcessTimeout,
		MaxAttempts:     DefaultMaxAttempts,
		FirstRetryDelay: DefaultFirstRetryDelay,
		MaxRetryDelay:   DefaultMaxRetryDelay,
		Retention:       DefaultRetention,
		PurgeInterval:   DefaultPurgeInterval,
		Logger:          slog.Default(),
	}
}

// tablePattern keeps the table name a plain identifier; it is quoted as well when used.
var tablePattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,47}$`)

// Validate reports every field that cannot work, joined into one error.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("inbox: config: "+format, args...))
	}
	if !tablePattern.MatchString(c.Table) {
		bad("table %q must be lowercase letters, digits and underscores, at most 48 bytes", c.Table)
	}
	if c.MaxBodyBytes <= 0 {
		bad("max body bytes %d must be positive", c.MaxBodyBytes)
	}
	for _, err := range durations.NotPositive(map[string]time.Duration{
		"store timeout":     c.StoreTimeout,
		"poll interval":     c.PollInterval,
		"process timeout":   c.ProcessTimeout,
		"first retry delay": c.FirstRetryDelay,
	}) {
		bad("%v", err)
	}
	if c.MaxRetryDelay < c.FirstRetryDelay {
		bad("max retry delay %s must be at least the first retry delay %s", c.MaxRetryDelay, c.FirstRetryDelay)
	}
	if c.BatchSize < 1 || c.BatchSize > maxBatchSize {
		bad("batch size %d must be between 1 and %d", c.BatchSize, maxBatchSize)
	}
	if c.MaxAttempts < 1 {
		bad("max attempts %d must be at least 1", c.MaxAttempts)
	}
	if c.Retention < 0 {
		bad("retention %s must not be negative (0 keeps rows for ever)", c.Retention)
	}
	if c.Retention > 0 && c.PurgeInterval <= 0 {
		bad("purge interval %s must be positive when a retention is set", c.PurgeInterval)
	}
	if c.Logger == nil {
		bad("logger is nil (use slog.New(slog.DiscardHandler) for none)")
	}
	return errors.Join(errs...)
}

// retryDelay is the wait after the failed attempt number failures (1 for the first failure):
// FirstRetryDelay doubled failures-1 times, capped at MaxRetryDelay without overflowing.
func (c Config) retryDelay(failures int) time.Duration {
	d := c.FirstRetryDelay
	for i := 1; i < failures; i++ {
		if d > c.MaxRetryDelay/2 {
			return c.MaxRetryDelay
		}
		d *= 2
	}
	return min(d, c.MaxRetryDelay)
}
