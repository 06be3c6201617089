package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/outbox"
)

// RecorderConfig configures the Recorder.
type RecorderConfig struct {
	Brokers      []string
	Prefix       string
	Group        string // default <prefix>.recorder
	MaxBatch     int    // attempts written per PostgreSQL transaction
	Logger       *slog.Logger
	Registerer   prometheus.Registerer
	KafkaOptions []kgo.Opt
}

// DefaultRecorderConfig returns the defaults.
func DefaultRecorderConfig() RecorderConfig {
	return RecorderConfig{Prefix: "hookstream", MaxBatch: 500, Logger: slog.Default()}
}

// Validate reports settings the recorder cannot run with.
func (c RecorderConfig) Validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("no Kafka brokers"))
	}
	if c.Prefix == "" {
		errs = append(errs, errors.New("topic prefix is empty"))
	}
	if c.MaxBatch < 1 {
		errs = append(errs, errors.New("max batch must be at least 1"))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("logger is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("streams: recorder: %w", err)
	}
	return nil
}

// Recorder writes every attempt the sender reports into PostgreSQL: one delivery_attempt row per
// attempt and the delivery's current state (R18). Writing is idempotent, so a replayed attempts
// record changes nothing. It keeps endpoint.failing_since and disables an endpoint that answered
// 410 Gone, announcing it with an endpoint.disabled event through the outbox (R20, R23).
type Recorder struct {
	cfg     RecorderConfig
	pool    *pgxpool.Pool
	names   topics.Names
	log     *slog.Logger
	metrics *recorderMetrics
}

type recorderMetrics struct {
	recorded  prometheus.Counter
	refused   *prometheus.CounterVec
	disabled  prometheus.Counter
	batchSize prometheus.Histogram
	latency   prometheus.Histogram
}

// NewRecorder returns a Recorder writing to pool.
func NewRecorder(cfg RecorderConfig, pool *pgxpool.Pool) (*Recorder, error) {
	if cfg.Group == "" {
		cfg.Group = cfg.Prefix + ".recorder"
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ns, sub := metrics.Namespace, "recorder"
	m := &recorderMetrics{
		recorded: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "attempts_recorded_total",
			Help: "Attempt records written to PostgreSQL (replays included)."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "attempts_refused_total",
			Help: "Attempt records refused and sent to the dlq, by reason."}, []string{"reason"}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "endpoints_disabled_total",
			Help: "Endpoints disabled because the receiver answered 410 Gone."}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "batch_size",
			Help: "Attempts per PostgreSQL transaction.", Buckets: prometheus.ExponentialBuckets(1, 4, 6)}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "batch_seconds",
			Help: "Time to write one batch to PostgreSQL.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{m.recorded, m.refused, m.disabled, m.batchSize, m.latency} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("streams: recorder metrics: %w", err)
			}
		}
	}
	return &Recorder{cfg: cfg, pool: pool, names: topics.For(cfg.Prefix), log: cfg.Logger.With("component", "recorder"), metrics: m}, nil
}

// Run records attempts until ctx ends. Offsets are committed after the PostgreSQL transaction:
// at least once, and idempotent.
func (r *Recorder) Run(ctx context.Context) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(r.cfg.Brokers...),
		kgo.ConsumerGroup(r.cfg.Group),
		kgo.ConsumeTopics(r.names.Attempts),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
	}, r.cfg.KafkaOptions...)...)
	if err != nil {
		return fmt.Errorf("streams: recorder client: %w", err)
	}
	defer cl.Close()
	for {
		fs := cl.PollRecords(ctx, r.cfg.MaxBatch)
		if ctx.Err() != nil {
			cl.AllowRebalance()
			return nil
		}
		fs.EachError(func(t string, p int32, err error) { r.log.Warn("fetch", "topic", t, "partition", p, "err", err) })
		recs := fs.Records()
		if len(recs) > 0 {
			if err := r.recordBatch(ctx, cl, recs); err != nil {
				cl.AllowRebalance()
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			if err := cl.CommitRecords(ctx, recs...); err != nil && ctx.Err() == nil {
				r.log.Warn("offset commit failed; the batch will be recorded again (idempotent)", "err", err)
			}
		}
		cl.AllowRebalance()
	}
}

// decoded is an attempts record and the attempt it holds.
type decoded struct {
	rec     *kgo.Record
	attempt records.Attempt
}

func (r *Recorder) recordBatch(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) error {
	began := time.Now()
	var (
		valid   []decoded
		refused []*kgo.Record
	)
	for _, rec := range recs {
		a, err := decodeAttempt(rec.Value)
		if err != nil {
			refused = append(refused, r.refuse(rec, "invalid", err.Error()))
			continue
		}
		valid = append(valid, decoded{rec, a})
	}
	owners, err := r.endpointOwners(ctx, valid)
	if err != nil {
		return err
	}
	var accepted []records.Attempt
	for _, d := range valid {
		a := d.attempt
		owner, known := owners[a.EndpointID]
		switch {
		case !known:
			refused = append(refused, r.refuse(d.rec, "unknown_endpoint", "endpoint "+a.EndpointID+" does not exist"))
		case owner != a.PartnerID:
			refused = append(refused, r.refuse(d.rec, "tenant_mismatch", fmt.Sprintf("endpoint %s does not belong to partner %s", a.EndpointID, a.PartnerID)))
		case a.ErrorCategory == records.CategoryTenantMismatch:
			refused = append(refused, r.refuse(d.rec, "tenant_mismatch", "the sender refused a delivery naming another partner's endpoint"))
		default:
			accepted = append(accepted, a)
		}
	}
	var disabled int
	err = pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		disabled = 0
		for _, a := range accepted {
			d, err := recordAttempt(ctx, tx, a)
			if err != nil {
				return fmt.Errorf("attempt %d of %s: %w", a.AttemptNo, a.DeliveryID, err)
			}
			disabled += d
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("streams: record attempts: %w", err)
	}
	if len(refused) > 0 {
		if err := cl.ProduceSync(ctx, refused...).FirstErr(); err != nil {
			return fmt.Errorf("streams: recorder dead letters: %w", err)
		}
	}
	r.metrics.recorded.Add(float64(len(accepted)))
	r.metrics.disabled.Add(float64(disabled))
	r.metrics.batchSize.Observe(float64(len(recs)))
	r.metrics.latency.Observe(time.Since(began).Seconds())
	return nil
}

func (r *Recorder) refuse(rec *kgo.Record, reason, detail string) *kgo.Record {
	r.metrics.refused.WithLabelValues(reason).Inc()
	r.log.Warn("attempt record refused", "reason", reason, "detail", detail, "partition", rec.Partition, "offset", rec.Offset)
	return deadLetter(r.names.DLQ, string(rec.Key), "recorder", reason+": "+detail, rec.Value)
}

// endpointOwners reads the partner of every endpoint the attempts name: the recorder checks
// tenancy again before writing history (R13).
func (r *Recorder) endpointOwners(ctx context.Context, attempts []decoded) (map[string]string, error) {
	ids := make([]string, 0, len(attempts))
	for _, d := range attempts {
		ids = append(ids, d.attempt.EndpointID)
	}
	rows, err := r.pool.Query(ctx, `SELECT id, partner_id FROM endpoint WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("streams: endpoint owners: %w", err)
	}
	owners := map[string]string{}
	var id, partner string
	_, err = pgx.ForEachRow(rows, []any{&id, &partner}, func() error { owners[id] = partner; return nil })
	if err != nil {
		return nil, fmt.Errorf("streams: endpoint owners: %w", err)
	}
	return owners, nil
}

var validTriggers = map[string]bool{records.TriggerInitial: true, records.TriggerRetry: true, records.TriggerReplay: true, records.TriggerTest: true}

var validCategories = map[string]bool{"": true,
	records.CategoryDNS: true, records.CategoryConnectionRefused: true, records.CategoryTLS: true, records.CategoryTimeout: true,
	records.CategoryHTTPStatus: true, records.CategoryRedirect: true, records.CategoryBlockedDestination: true,
	records.CategoryTenantMismatch: true, records.CategoryInternal: true}

func decodeAttempt(value []byte) (records.Attempt, error) {
	var a records.Attempt
	if err := json.Unmarshal(value, &a); err != nil {
		return a, fmt.Errorf("not an attempt record: %w", err)
	}
	switch {
	case a.V != records.AttemptVersion:
		return a, fmt.Errorf("attempt record version %d, this recorder reads %d", a.V, records.AttemptVersion)
	case a.EventID == "" || a.EndpointID == "" || a.PartnerID == "":
		return a, errors.New("event, endpoint and partner ids are required")
	case a.DeliveryID != records.DeliveryID(a.EventID, a.EndpointID):
		return a, fmt.Errorf("delivery id %q is not derived from event %s and endpoint %s", a.DeliveryID, a.EventID, a.EndpointID)
	case a.AttemptNo < 1:
		return a, fmt.Errorf("attempt number %d", a.AttemptNo)
	case !validTriggers[a.Trigger]:
		return a, fmt.Errorf("unknown trigger %q", a.Trigger)
	case !validCategories[a.ErrorCategory]:
		return a, fmt.Errorf("unknown error category %q", a.ErrorCategory)
	case a.Outcome != records.OutcomeDelivered && a.Outcome != records.OutcomeRetrying && a.Outcome != records.OutcomeFailed:
		return a, fmt.Errorf("unknown outcome %q", a.Outcome)
	case a.StartedAt.IsZero():
		return a, errors.New("started_at is required")
	}
	a.ResponseExcerpt = truncateUTF8(a.ResponseExcerpt, 1024)
	return a, nil
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

var deliveryStates = map[string]string{
	records.OutcomeDelivered: "succeeded",
	records.OutcomeRetrying:  "retrying",
	records.OutcomeFailed:    "failed",
}

// recordAttempt writes one attempt inside tx and returns 1 if it disabled the endpoint. Every
// statement is idempotent: the same attempt recorded twice leaves the same rows.
func recordAttempt(ctx context.Context, tx pgx.Tx, a records.Attempt) (int, error) {
	var status *int
	if a.Status != 0 {
		status = &a.Status
	}
	var category *string
	if a.ErrorCategory != "" {
		category = &a.ErrorCategory
	}
	// The delivery row shows its newest attempt; an older attempt arriving late, or the same one
	// again, changes nothing, here or below.
	tag, err := tx.Exec(ctx, `INSERT INTO delivery AS d
		(delivery_id, event_id, endpoint_id, partner_id, event_type, state, attempt_count, next_attempt_at,
		 last_status, last_latency_ms, last_error_category, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now())
		ON CONFLICT (delivery_id) DO UPDATE SET
			state = EXCLUDED.state, attempt_count = EXCLUDED.attempt_count, next_attempt_at = EXCLUDED.next_attempt_at,
			last_status = EXCLUDED.last_status, last_latency_ms = EXCLUDED.last_latency_ms,
			last_error_category = EXCLUDED.last_error_category, updated_at = now()
		WHERE d.attempt_count < EXCLUDED.attempt_count`,
		a.DeliveryID, a.EventID, a.EndpointID, a.PartnerID, a.EventType, deliveryStates[a.Outcome], a.AttemptNo,
		a.NextAttemptAt, status, a.LatencyMS, category, a.StartedAt)
	if err != nil {
		return 0, err
	}
	newest := tag.RowsAffected() == 1
	if _, err := tx.Exec(ctx, `INSERT INTO delivery_attempt
		(delivery_id, attempt_no, trigger, started_at, status, latency_ms, error_category, response_excerpt, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (delivery_id, attempt_no) DO NOTHING`,
		a.DeliveryID, a.AttemptNo, a.Trigger, a.StartedAt, status, a.LatencyMS, category, a.ResponseExcerpt, a.NextAttemptAt); err != nil {
		return 0, err
	}
	if !newest {
		return 0, nil
	}

	// failing_since: set at the first failure after a success, cleared by a success (R23).
	// Failures the receiver did not cause (hookstream's own) do not count.
	switch {
	case a.Outcome == records.OutcomeDelivered:
		if _, err := tx.Exec(ctx, `UPDATE endpoint SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, a.EndpointID); err != nil {
			return 0, err
		}
	case a.ErrorCategory != records.CategoryInternal:
		if _, err := tx.Exec(ctx, `UPDATE endpoint SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL`, a.EndpointID, a.StartedAt); err != nil {
			return 0, err
		}
	}
	if a.Outcome != records.OutcomeFailed || a.Status != 410 {
		return 0, nil
	}
	return disableEndpoint(ctx, tx, a.EndpointID, "the receiver answered 410 Gone")
}

// disableEndpoint disables an active endpoint and, in the same transaction, writes an
// endpoint.disabled event through the outbox so the partner hears of it on its other endpoints
// (R23). It returns 1 if the endpoint was active.
func disableEndpoint(ctx context.Context, tx pgx.Tx, endpointID, reason string) (int, error) {
	var partner string
	err := tx.QueryRow(ctx, `UPDATE endpoint SET status = 'disabled', disabled_reason = $2, version = version + 1, updated_at = now()
		WHERE id = $1 AND status = 'active' RETURNING partner_id`, endpointID, reason).Scan(&partner)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	data, _ := json.Marshal(map[string]string{"endpoint_id": endpointID, "reason": reason})
	if _, err := outbox.Append(ctx, tx, outbox.Event{
		PartnerID: partner, Type: "endpoint.disabled",
		Subject: outbox.Subject{Type: "endpoint", ID: endpointID}, Data: data,
	}); err != nil {
		return 0, err
	}
	return 1, nil
}
