package cdc

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/outbox"
)

// Config configures one cdc process. Fill it with DefaultConfig and adjust.
type Config struct {
	// DatabaseURL of the PostgreSQL database holding the outbox. The user needs the REPLICATION
	// attribute (or superuser) and must own the publications.
	DatabaseURL string
	// Base holds the brokers, the topic prefix, the logger, the registerer (nil: metrics are
	// kept but not registered) and extra franz-go options (e.g. for tests).
	component.Base
	// Slot is the logical replication slot. One PostgreSQL cluster may host several hookstream
	// databases, each with its own slot name.
	Slot string
	// Publications are the pgoutput publications to stream: the outbox (inserts only, via the
	// partition root) and the endpoint tables. Migrations create both.
	Publications []string

	// CommitInterval is the least time between the starts of two Kafka transactions whose
	// records nobody waits to see committed (design.md section 5): the events cdc fans out
	// itself and their deliveries, which the sender reads as they are written (WriteInterval),
	// not at the commit. It bounds what each transaction costs the broker and every
	// read_committed reader (fanout passing cdc's events by, the cursor feed, a data team's
	// consumer), and how long those readers wait for an event. The first commit after a quiet
	// spell starts at once; after a transaction of 4,000 records a second or more the wait is
	// twice it (burst).
	CommitInterval time.Duration
	// WriteInterval is the most time a record waits in cdc before it is written to the broker:
	// the latency cdc adds to every delivery it makes. A record waits for the next read of the
	// replication connection (ReadInterval, at most the write interval less the linger) and for
	// the producer's short linger (writeLinger), which gathers what one read brought into one
	// produce request; a commit writes the rest at once. It is also the least time between the
	// starts of two Kafka transactions when the one being filled holds a record a reader waits
	// to see committed: an event left to fanout, or an endpoint record. At most CommitInterval
	// is used.
	WriteInterval time.Duration
	// ReadInterval is the least time between two reads of the replication connection while WAL
	// flows, between PostgreSQL transactions: the messages that arrive meanwhile are read
	// together, with one wake-up of cdc instead of one per transaction, and written together,
	// with one produce request. The first read after a quiet spell is at once. At most the
	// write interval less the producer's linger is used, so that lowering the write interval
	// for latency is never undone by the reads. Zero reads each message as it arrives.
	ReadInterval time.Duration
	// MaxBatchEvents ends a Kafka transaction at the next PostgreSQL commit once this many
	// records are in it.
	MaxBatchEvents int
	// StatusInterval is how often the slot's position is reported; keep it well under the
	// server's wal_sender_timeout.
	StatusInterval time.Duration
	// HeartbeatInterval is how often an idle stream writes a logical message so the confirmed
	// position advances and WAL does not pile up.
	HeartbeatInterval time.Duration
	// RetryInterval is the wait between attempts to become the active reader, and after a
	// failed session.
	RetryInterval time.Duration
	// TransactionTimeout is the Kafka transaction timeout; it must cover streaming the largest
	// PostgreSQL transaction.
	TransactionTimeout time.Duration

	// OutboxRetention is how long outbox rows are kept; older day partitions are dropped once
	// the checkpoint is past them, and outbox_dead_letter rows older than it are deleted. Zero
	// keeps both forever.
	OutboxRetention time.Duration
	// MaintenanceInterval is how often partitions are created and expired ones dropped.
	MaintenanceInterval time.Duration

	// FanoutMax: cdc makes the deliveries of an event itself, in the Kafka transaction that
	// holds the event, when at most this many of its partner's endpoints receive its type;
	// fanout makes the others'. Zero leaves every event to fanout (design.md section 5).
	FanoutMax int

	// MaxEventBytes is the largest envelope published; larger rows are dead-lettered.
	MaxEventBytes int
	// Catalog checks every outbox row before it is published (R4, R31): a row whose type it does
	// not know, whose schema version is not the type's or whose data breaks the type's schema is
	// not published but dead-lettered, to the dlq topic and to outbox_dead_letter, where the
	// operator lists it. DefaultConfig sets the published catalog (eventcatalog.Published); nil
	// publishes every row that is a valid envelope, as an outbox.Writer without a Catalog
	// accepts every well-formed event.
	Catalog outbox.Catalog

	// TracerProvider, when set, turns tracing on: each published event gets a span, the child
	// of the outbox row's traceparent (or the root of a new trace), whose context is the
	// record's traceparent header. nil: no span, no header.
	TracerProvider trace.TracerProvider
}

// DefaultConfig returns the defaults for everything but the connection settings.
func DefaultConfig() Config {
	return Config{
		Base:                component.DefaultBase(),
		Slot:                "hookstream",
		Publications:        []string{"hookstream_outbox", "hookstream_endpoints"},
		CommitInterval:      100 * time.Millisecond,
		WriteInterval:       25 * time.Millisecond,
		ReadInterval:        20 * time.Millisecond,
		MaxBatchEvents:      10000,
		StatusInterval:      5 * time.Second,
		HeartbeatInterval:   10 * time.Second,
		RetryInterval:       time.Second,
		TransactionTimeout:  2 * time.Minute,
		OutboxRetention:     7 * 24 * time.Hour,
		MaintenanceInterval: 10 * time.Minute,
		MaxEventBytes:       900 << 10,
		FanoutMax:           4,
		Catalog:             eventcatalog.Published(),
	}
}

var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// Validate reports settings cdc cannot run with.
func (c Config) Validate() error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("database URL is empty"))
	}
	if err := c.Base.Validate(); err != nil {
		errs = append(errs, err)
	}
	if !slotName.MatchString(c.Slot) {
		errs = append(errs, fmt.Errorf("slot %q must be 1-63 characters of a-z, 0-9 and _", c.Slot))
	}
	if len(c.Publications) == 0 {
		errs = append(errs, errors.New("no publications"))
	}
	for _, p := range c.Publications {
		if !slotName.MatchString(p) {
			errs = append(errs, fmt.Errorf("publication %q must be 1-63 characters of a-z, 0-9 and _", p))
		}
	}
	if c.CommitInterval <= 0 || c.WriteInterval <= 0 || c.StatusInterval <= 0 || c.HeartbeatInterval <= 0 || c.RetryInterval <= 0 ||
		c.TransactionTimeout <= 0 || c.MaintenanceInterval <= 0 {
		errs = append(errs, errors.New("intervals and timeouts must be positive"))
	}
	if c.TransactionTimeout > 0 && c.CommitInterval >= c.TransactionTimeout/2 {
		errs = append(errs, fmt.Errorf("commit interval %s must be under half the transaction timeout %s", c.CommitInterval, c.TransactionTimeout))
	}
	if c.ReadInterval < 0 {
		errs = append(errs, fmt.Errorf("read interval %s is negative", c.ReadInterval))
	}
	if c.MaxBatchEvents < 1 {
		errs = append(errs, errors.New("max batch events must be at least 1"))
	}
	if c.OutboxRetention != 0 && c.OutboxRetention < 24*time.Hour {
		errs = append(errs, fmt.Errorf("outbox retention %s is shorter than a day's partition", c.OutboxRetention))
	}
	if c.FanoutMax < 0 {
		errs = append(errs, fmt.Errorf("fan-out maximum %d is negative", c.FanoutMax))
	}
	if c.MaxEventBytes < 1024 {
		errs = append(errs, errors.New("max event bytes must be at least 1 KiB"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cdc: %w", err)
	}
	return nil
}

// readInterval is the spacing of reads the stream uses: ReadInterval, at most the write
// interval less the linger, so that a record read waits no longer than the write interval in
// all.
func (c Config) readInterval() time.Duration {
	return min(c.ReadInterval, c.writeInterval()-c.writeLinger())
}

// maxWriteLinger is the producer's linger at the default write interval. The records of one
// read are produced within a few milliseconds of its return; this much linger sends them in
// one produce request instead of a first record alone and the rest after its response (the
// producer keeps one request in flight), and a burst's records still leave in a few large
// requests while one is in flight.
const maxWriteLinger = 5 * time.Millisecond

// writeLinger is the linger of cdc's producers: maxWriteLinger, at most a fifth of the write
// interval.
func (c Config) writeLinger() time.Duration { return min(maxWriteLinger, c.writeInterval()/5) }

// writeInterval is the most a record waits in cdc before it is written: WriteInterval, at most
// CommitInterval.
func (c Config) writeInterval() time.Duration { return min(c.WriteInterval, c.CommitInterval) }
