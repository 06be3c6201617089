package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/time/rate"

	"github.com/hookstream/hookstream/internal/eventlog"
)

// ErrEndpointGone: the partner has no endpoint by that id (it was deleted, or never was theirs).
var ErrEndpointGone = errors.New("replay: endpoint not found")

// ErrUnavailable marks a failure to produce to Kafka a caller may retry. A failure to read the
// events topic wraps eventlog.ErrUnavailable.
var ErrUnavailable = errors.New("dependency unavailable")

// Config configures an Engine. Every field but Registerer is required.
type Config struct {
	// Client produces the delivery records; its owner closes it after Run returned.
	Client *kgo.Client
	// Deliveries is the deliveries topic the records go to.
	Deliveries string
	// Log reads the events topic: log replays, and envelopes the outbox no longer holds.
	Log *eventlog.Log

	// AutomaticAttempts is the most attempts a retry policy may give; a replay made while
	// automatic attempts may still be in flight is numbered above them (attempts.go).
	AutomaticAttempts int
	// Batch is how many deliveries a job reserves and produces per step.
	Batch int
	// Workers is how many jobs one process runs at once.
	Workers int
	// JobLease is how long a running job stays claimed without progress; a job whose process
	// died is resumed by another process after it.
	JobLease time.Duration
	// PollInterval is how often Run looks for queued jobs it was not told about (Notify).
	PollInterval time.Duration
	// MaxScan bounds the records one step of a log replay reads.
	MaxScan int
	// MaxDeliveries is the most deliveries one job may replay (the partner quota
	// replay_deliveries).
	MaxDeliveries int
	// RatePerSec is the most deliveries a second this process's jobs replay for one partner
	// together (the partner quota replay_deliveries_per_sec; 0: no limit): a bulk replay is
	// background work, which takes the deployment's spare capacity, not the live flow's
	// (design.md section 7, the partners' fair share).
	RatePerSec int

	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: metrics are kept but not registered
}

// validate reports the settings the engine cannot run with.
func (c Config) validate() error {
	var errs []error
	if c.Client == nil || c.Log == nil || c.Logger == nil || c.Deliveries == "" {
		errs = append(errs, errors.New("client, log, logger and deliveries topic are required"))
	}
	if c.AutomaticAttempts < 1 || c.Batch < 1 || c.Workers < 1 || c.MaxScan < 1 || c.MaxDeliveries < 1 {
		errs = append(errs, errors.New("automatic attempts, batch, workers, max scan and max deliveries must be at least 1"))
	}
	if c.RatePerSec < 0 {
		errs = append(errs, errors.New("rate per second must be 0 (no limit) or more"))
	}
	if c.JobLease <= 0 || c.PollInterval <= 0 {
		errs = append(errs, errors.New("job lease and poll interval must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("replay: config: %w", err)
	}
	return nil
}

// Engine replays deliveries: one at a time on request (One), and in bulk as the jobs Run
// executes.
type Engine struct {
	cfg      Config
	pool     *pgxpool.Pool
	log      *slog.Logger
	metrics  *engineMetrics
	instance string // lease owner name of this process's runner
	wake     chan struct{}
	pacers   pacers

	// afterBatch, when set (tests), is called after each job step has been recorded.
	afterBatch func(jobID string)
}

// New returns the engine over pool (a PostgreSQL database migrated to the current schema). It
// does not contact Kafka until a replay or job needs it.
func New(cfg Config, pool *pgxpool.Pool) (*Engine, error) {
	if pool == nil {
		return nil, errors.New("replay: no PostgreSQL pool")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &Engine{
		cfg:      cfg,
		pool:     pool,
		log:      cfg.Logger,
		metrics:  m,
		instance: "admin-" + ulid.Make().String(), // the engine runs in the admin process
		wake:     make(chan struct{}, 1),
		pacers:   pacers{rate: cfg.RatePerSec, byPartner: map[string]*rate.Limiter{}},
	}, nil
}

// Notify tells Run that a job was queued, so it is claimed now rather than at the next poll.
func (e *Engine) Notify() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Endpoint is what a replay needs of an endpoint.
type Endpoint struct {
	ID            string
	PartnerID     string
	Status        string // active or disabled
	EventTypes    []string
	Filter        *string // the payload filter; nil: none
	SchemaVersion int
	Version       int64
}

// Endpoint reads the partner's endpoint eid from PostgreSQL; ErrEndpointGone when the partner
// has none by that id.
func (e *Engine) Endpoint(ctx context.Context, pid, eid string) (Endpoint, error) {
	var (
		ep     Endpoint
		schema int32
	)
	err := e.pool.QueryRow(ctx, `SELECT id, partner_id, status, event_types, filter, schema_version, version
		FROM endpoint WHERE id = $1 AND partner_id = $2`, eid, pid).
		Scan(&ep.ID, &ep.PartnerID, &ep.Status, &ep.EventTypes, &ep.Filter, &schema, &ep.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return Endpoint{}, ErrEndpointGone
	}
	ep.SchemaVersion = int(schema)
	return ep, err
}
