package fanout

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/filter"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/internal/tracing"
	"github.com/hookstream/hookstream/outbox"
)

// Config configures Fanout.
type Config struct {
	// Base holds the brokers, the topic prefix, the logger, the registerer (nil: metrics are
	// kept but not registered) and extra franz-go options (e.g. for tests).
	component.Base
	// Group is the consumer group; all fanout instances of a deployment share it (R12, R38).
	Group string
	// InstanceID names this instance; its transactional id is derived from it, so a restarted
	// instance fences its previous incarnation. Give every concurrent instance its own.
	InstanceID string
	// TransactionTimeout bounds how long an abandoned transaction blocks readers.
	TransactionTimeout time.Duration
	// TracerProvider, when set, turns tracing on: each delivery made gets a span, the child of
	// the event record's traceparent, whose context is the delivery record's traceparent.
	TracerProvider trace.TracerProvider
}

// DefaultConfig returns the defaults; the instance id is the host name.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	return Config{
		Base:               component.DefaultBase(),
		InstanceID:         host,
		TransactionTimeout: 30 * time.Second,
	}
}

// Validate reports settings fanout cannot run with.
func (c Config) Validate() error {
	var errs []error
	if err := c.Base.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.InstanceID == "" {
		errs = append(errs, errors.New("instance id is empty"))
	}
	if c.TransactionTimeout < time.Second {
		errs = append(errs, errors.New("transaction timeout must be at least a second"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("fanout: %w", err)
	}
	return nil
}

// EndpointView is what fanout needs of a view of the endpoints topic; *endpoints.View is one,
// run by the caller.
type EndpointView interface {
	// CatchUp waits until the view holds every endpoint record committed before the call.
	CatchUp(ctx context.Context) error
	// ForPartner returns the partner's endpoints (shared values: fanout never modifies them).
	ForPartner(partnerID string) []*records.Endpoint
	// Filter returns the parsed payload filter of endpoint id, nil when it has none.
	Filter(id string) *filter.Filter
	// Len is the number of endpoints in the view.
	Len() int
}

// Fanout turns each event into one delivery record per endpoint that receives it: the event's own
// partner's active endpoints subscribed to its type, created before it committed (R11, R13). It
// consumes and produces in Kafka transactions, so a restart never creates a second delivery.
type Fanout struct {
	cfg     Config
	names   topics.Names
	view    EndpointView
	log     *slog.Logger
	metrics *fanoutMetrics
	tracer  *tracing.Tracer // nil: tracing off
	fanning endpoints.Fanning
}

// New returns a Fanout reading endpoints from view (which the caller runs).
func New(cfg Config, view EndpointView) (*Fanout, error) {
	cfg.Group = cmp.Or(cfg.Group, cfg.Base.DefaultGroup("fanout"))
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newFanoutMetrics(cfg.Registerer, view)
	if err != nil {
		return nil, err
	}
	f := &Fanout{cfg: cfg, names: topics.For(cfg.Prefix), view: view, log: cfg.Logger.With("component", "fanout"), metrics: m,
		tracer: tracing.New(cfg.TracerProvider)}
	f.fanning = endpoints.Fanning{Deliveries: f.names.Deliveries, DLQ: f.names.DLQ, Component: "fanout",
		Convert: eventcatalog.ConvertEnvelope, Tracer: f.tracer}
	return f, nil
}

// Group is the consumer group fanout reads the events topic in (its lag is exported by
// `hookstream fanout`).
func (f *Fanout) Group() string { return f.cfg.Group }

// Run consumes events until ctx ends. A session that fails (the broker went away, a commit could
// not finish) is closed and a new one started after a growing wait: the new transactional
// producer fences the old one and aborts whatever it left open, and the group hands the
// partitions back (static membership), so every event is fanned out exactly once (R11) and the
// process rides out a broker outage instead of exiting.
func (f *Fanout) Run(ctx context.Context) error {
	wait := firstSessionRetry
	for {
		began := time.Now()
		err := f.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var cfgErr *configError
		if errors.As(err, &cfgErr) {
			return err
		}
		if time.Since(began) > time.Minute {
			wait = firstSessionRetry // it ran well for a while: this is a new trouble
		}
		f.metrics.restarts.Inc()
		f.log.Warn("fanout session failed; starting a new one", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, maxSessionRetry)
	}
}

// The waits between fanout sessions.
const (
	firstSessionRetry = 250 * time.Millisecond
	maxSessionRetry   = 10 * time.Second
)

// configError is a session that cannot start with its settings: retrying cannot help.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// session runs one transactional group session until it fails or ctx ends.
func (f *Fanout) session(ctx context.Context) error {
	sess, err := kgo.NewGroupTransactSession(f.cfg.ClientOptions(f.log,
		kgo.TransactionalID(f.cfg.Prefix+".fanout."+f.cfg.InstanceID),
		kgo.TransactionTimeout(f.cfg.TransactionTimeout),
		kgo.ConsumerGroup(f.cfg.Group),
		// Static membership: a restarted instance takes its old place at once instead of
		// waiting out the dead member's session.
		kgo.InstanceID(f.cfg.InstanceID),
		kgo.ConsumeTopics(f.names.Events),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.DefaultProduceTopic(f.names.Deliveries),
	)...)
	if err != nil {
		return &configError{fmt.Errorf("fanout: client: %w", err)}
	}
	defer sess.Close()
	limit := txnDeliveries / 10 // until a batch has shown the fan-out
	lastEnd := time.Now()
	passed := false // events cdc fanned out were polled since the last transaction
	for {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if passed {
			// Their offsets are committed by the next transaction, or by one of their own
			// at most passedCommitInterval after the last.
			pollCtx, cancel = context.WithDeadline(ctx, lastEnd.Add(passedCommitInterval))
		}
		fs := sess.PollRecords(pollCtx, limit)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err := fs.Err0(); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			var ferr error
			fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("%s[%d]: %w", t, p, err) })
			f.log.Warn("fetch", "err", ferr)
		}
		var todo []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			f.metrics.events.Inc()
			if fannedOut(r) {
				f.metrics.passed.Inc()
				passed = true
				return
			}
			todo = append(todo, r)
		})
		if len(todo) == 0 && (!passed || time.Since(lastEnd) < passedCommitInterval) {
			continue
		}
		if len(todo) > 0 {
			// Endpoints committed before these events are in the view before they are matched.
			began := time.Now()
			if err := f.view.CatchUp(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			f.metrics.catchUp.Observe(time.Since(began).Seconds())
		}
		if err := sess.Begin(); err != nil {
			return fmt.Errorf("fanout: begin: %w", err)
		}
		produced := map[string]int{}
		for _, r := range todo {
			for _, d := range f.deliveries(r) {
				produced[d.Topic]++
				// A failed produce makes End abort; the batch is then polled again.
				sess.Produce(ctx, d, nil)
			}
		}
		ending := time.Now()
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("fanout: commit: %w", err)
		}
		lastEnd, passed = time.Now(), false // aborted, what was polled is polled again
		if !committed {
			f.log.Info("batch aborted (rebalance or produce failure); it is polled again")
			continue
		}
		f.metrics.txns.Inc()
		f.metrics.commit.Observe(time.Since(ending).Seconds())
		f.metrics.deliveries.WithLabelValues(records.TriggerInitial).Add(float64(produced[f.names.Deliveries]))
		limit = nextTxnEvents(len(todo), produced[f.names.Deliveries])
	}
}

// passedCommitInterval bounds how long the offsets of events cdc fanned out itself wait for a
// transaction: fanout makes none for them alone more often (each costs the broker four
// requests and its markers), and a restart reads at most this much of them again, which only
// passes them by again.
const passedCommitInterval = time.Second

// fannedOut reports whether cdc made r's deliveries itself (records.HeaderFannedOut).
func fannedOut(r *kgo.Record) bool {
	for _, h := range r.Headers {
		if h.Key == records.HeaderFannedOut {
			return string(h.Value) == records.FannedOutByCDC
		}
	}
	return false
}

// The size of fanout's transactions. The sender reads deliveries read_committed, so it sees
// none of a transaction's records before the transaction commits: a burst polled whole (a
// fetch holds thousands of events) made one transaction of tens of thousands of deliveries,
// and the sender waited for all of it. Fanout polls at most enough events for about
// txnDeliveries deliveries, learned from the fan-out of the last batch, so a burst reaches
// the sender in steps of a few milliseconds each.
const (
	txnDeliveries = 2000
	maxTxnEvents  = 2000
)

// nextTxnEvents is how many events to poll into the next transaction after one of events
// that made deliveries.
func nextTxnEvents(events, deliveries int) int {
	if events == 0 || deliveries <= events {
		return maxTxnEvents
	}
	return max(1, txnDeliveries*events/deliveries)
}

// deliveries returns the records one event fans out to: delivery records, or one dead letter
// when the event record cannot be read.
func (f *Fanout) deliveries(r *kgo.Record) []*kgo.Record {
	ev, err := readEvent(r)
	if err != nil {
		f.metrics.invalid.Inc()
		f.log.Error("event record dead-lettered", "offset", r.Offset, "partition", r.Partition, "err", err)
		return []*kgo.Record{records.DeadLetterRecord(f.names.DLQ, string(r.Key), records.NewDeadLetter("fanout", err.Error(), records.ClipOriginal(r.Value)))}
	}
	out := f.fanning.Fan(f.view, endpoints.Event{ID: ev.eventID, PartnerID: ev.partnerID, Type: ev.eventType,
		SchemaVersion: ev.schemaVersion, LSN: ev.lsn, CommitTime: ev.commitTime, Envelope: r.Value, Traceparent: f.tracer.Parent(r)},
		time.Now().UTC())
	f.metrics.filtered.Add(float64(out.Filtered))
	if len(out.Records) == 0 {
		f.metrics.unmatched.Inc()
	}
	return out.Records
}

type eventMeta struct {
	eventID, partnerID, eventType string
	schemaVersion                 int
	lsn                           records.LSN
	commitTime                    time.Time // zero when the commit_time header is missing or unreadable
}

// readEvent takes what fanout needs from an events record: its headers, checked against the
// envelope they describe.
func readEvent(r *kgo.Record) (eventMeta, error) {
	var env outbox.Envelope
	if err := json.Unmarshal(r.Value, &env); err != nil {
		return eventMeta{}, fmt.Errorf("value is not an envelope: %w", err)
	}
	if err := env.Validate(); err != nil {
		return eventMeta{}, err
	}
	m := eventMeta{eventID: env.EventID, partnerID: env.PartnerID, eventType: env.Type, schemaVersion: env.SchemaVersion}
	if string(r.Key) != env.EventID {
		return m, fmt.Errorf("key %q is not the envelope's event id %q", r.Key, env.EventID)
	}
	for _, h := range r.Headers {
		switch h.Key {
		case records.HeaderCommitLSN:
			lsn, err := records.ParseLSN(string(h.Value))
			if err != nil {
				return m, fmt.Errorf("commit_lsn header: %w", err)
			}
			m.lsn = lsn
		case records.HeaderCommitTime:
			m.commitTime, _ = time.Parse(time.RFC3339Nano, string(h.Value))
		case records.HeaderPartnerID:
			if string(h.Value) != env.PartnerID {
				return m, fmt.Errorf("partner_id header %q differs from the envelope's %q", h.Value, env.PartnerID)
			}
		}
	}
	if m.lsn == 0 {
		return m, errors.New("commit_lsn header missing")
	}
	return m, nil
}
