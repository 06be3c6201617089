package recorder

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/clip"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/internal/tracing"
	"github.com/hookstream/hookstream/outbox"
)

// Config configures the Recorder.
type Config struct {
	// Base holds the brokers, the topic prefix, the logger, the registerer (nil: metrics are
	// kept but not registered) and extra franz-go options (e.g. for tests).
	component.Base
	Group string // default <prefix>.recorder
	// InstanceID, when set, makes this recorder a static member of the group: restarted with
	// the same id, it takes its partitions back at once instead of after the session timeout.
	// Every recorder running at once needs its own: a second one with the same id fences the
	// first.
	InstanceID  string
	MaxBatch    int // attempts taken from Kafka per batch
	WriteShards int // concurrent PostgreSQL transactions per batch, split by endpoint
	// HistoryRetention is how long finished deliveries and their attempts are kept (R33); 0
	// keeps them forever. HistorySweepInterval is how often expired ones are deleted.
	HistoryRetention     time.Duration
	HistorySweepInterval time.Duration
	// WriteRetryMax caps the wait between two tries of a batch that could not be stored
	// (PostgreSQL or Kafka away: a restart, a failover). The waits start at a tenth of a second
	// and double; the batch is tried until it is stored, and its offsets are committed only then.
	WriteRetryMax time.Duration
	// PendingDelay is how old a delivery fanout emitted must be before the recorder writes
	// its pending history row (pending.go): a delivery attempted sooner gets its row from the
	// attempt, and the pending insert writes nothing. A delivery that waits is listed within
	// about this delay of being emitted.
	PendingDelay time.Duration
	// TracerProvider, when set, turns tracing on: each attempt stored gets a span, the child of
	// the attempt record's traceparent (the sender's attempt span), from the batch's start to
	// its commit.
	TracerProvider trace.TracerProvider
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Base: component.DefaultBase(), MaxBatch: 2000, WriteShards: 2,
		HistoryRetention: 30 * 24 * time.Hour, HistorySweepInterval: time.Hour, WriteRetryMax: 5 * time.Second, PendingDelay: 2 * time.Second}
}

// Validate reports settings the recorder cannot run with.
func (c Config) Validate() error {
	var errs []error
	if err := c.Base.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.MaxBatch < 1 {
		errs = append(errs, errors.New("max batch must be at least 1"))
	}
	if c.WriteShards < 1 || c.WriteShards > 16 {
		errs = append(errs, errors.New("write shards must be between 1 and 16"))
	}
	if c.HistoryRetention < 0 {
		errs = append(errs, errors.New("history retention is negative"))
	}
	if c.HistoryRetention > 0 && c.HistorySweepInterval <= 0 {
		errs = append(errs, errors.New("history sweep interval must be positive"))
	}
	if c.PendingDelay < 0 {
		errs = append(errs, errors.New("pending delay is negative"))
	}
	if c.WriteRetryMax < firstWriteRetry {
		errs = append(errs, fmt.Errorf("write retry max must be at least %s", firstWriteRetry))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	return nil
}

// Recorder writes every attempt the sender reports into PostgreSQL: one delivery_attempt row per
// request (a request redone after a sender or broker failure, under the attempt number it had,
// gets its own row, told apart by its start time) and the delivery's current state, that of its
// newest request (R18). Writing is idempotent, so a replayed attempts
// record changes nothing. It keeps endpoint.failing_since and disables an endpoint that answered
// 410 Gone through endpoints.Disable, which announces it with an endpoint.disabled event through
// the outbox (R20, R23).
//
// No record stops it: one it cannot read, or PostgreSQL will not store, goes to the dlq with the
// reason and the partition goes on; an outage of PostgreSQL or Kafka is waited out, the batch
// tried again until it is stored.
type Recorder struct {
	cfg     Config
	pool    *pgxpool.Pool
	names   topics.Names
	log     *slog.Logger
	metrics *recorderMetrics
	tracer  *tracing.Tracer // nil: tracing off
}

// New returns a Recorder writing to pool.
func New(cfg Config, pool *pgxpool.Pool) (*Recorder, error) {
	cfg.Group = cmp.Or(cfg.Group, cfg.Base.DefaultGroup("recorder"))
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newRecorderMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &Recorder{cfg: cfg, pool: pool, names: topics.For(cfg.Prefix), log: cfg.Logger.With("component", "recorder"), metrics: m,
		tracer: tracing.New(cfg.TracerProvider)}, nil
}

// Groups are the recorder's consumer groups: the one of the attempts topic and the one of the
// deliveries topic that writes pending rows.
func (r *Recorder) Groups() (attempts, pending string) { return r.cfg.Group, r.cfg.Group + ".pending" }

// Run records attempts until ctx ends. Offsets are committed after the PostgreSQL transaction:
// at least once, and idempotent. Beside it, every delivery fanout emits gets its pending row
// (pending.go), and finished deliveries older than the history retention are deleted every
// sweep interval.
func (r *Recorder) Run(ctx context.Context) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pendingDone := make(chan error, 1)
	go func() {
		err := r.recordPending(ctx)
		if err != nil {
			cancel()
		}
		pendingDone <- err
	}()
	defer func() {
		cancel()
		if perr := <-pendingDone; err == nil {
			err = perr
		}
	}()
	if r.cfg.HistoryRetention > 0 {
		sweepCtx, stopSweeping := context.WithCancel(ctx)
		swept := make(chan struct{})
		go func() {
			defer close(swept)
			r.sweepHistory(sweepCtx)
		}()
		defer func() { stopSweeping(); <-swept }()
	}
	return r.consume(ctx, r.cfg.Group, r.names.Attempts, func(cl *kgo.Client, recs []*kgo.Record) bool {
		return r.record(ctx, cl, recs)
	})
}

// gatherFor is the least time between two polls of a recorder's reader while its batches are
// not full.
const gatherFor = 100 * time.Millisecond

// consume reads topic in group until ctx ends, handing each polled batch to store and
// committing its offsets once store reports it stored (false: ctx ended first). Both of the
// recorder's readers run on it; a Kafka client that cannot be made is the only error.
func (r *Recorder) consume(ctx context.Context, group, topic string, store func(*kgo.Client, []*kgo.Record) bool) error {
	opts := []kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
	}
	if r.cfg.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(r.cfg.InstanceID)) // static ids are per group
	}
	cl, err := kgo.NewClient(r.cfg.ClientOptions(r.log, opts...)...)
	if err != nil {
		return fmt.Errorf("recorder: client for %s: %w", group, err)
	}
	defer cl.Close()
	var (
		polled time.Time
		full   = true
	)
	for {
		// After a batch smaller than MaxBatch the next poll waits until gatherFor has passed
		// since the last: at a steady rate a batch then holds about that much of it instead of
		// one linger of the senders' attempt producers, and each batch costs a fetch, a
		// PostgreSQL transaction and an offset commit. The history is read by people and
		// dashboards, not by the next hop; under a burst batches are full and polls go on at
		// once. (Waiting on the client, not by the broker's fetch minimum: a minimum left
		// consumers polling without records after a broker outage, design.md section 5.)
		if wait := time.Until(polled.Add(gatherFor)); !full && wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		polled = time.Now()
		fs := cl.PollRecords(ctx, r.cfg.MaxBatch)
		if ctx.Err() != nil {
			cl.AllowRebalance()
			return nil
		}
		fs.EachError(func(t string, p int32, err error) { r.log.Warn("fetch", "topic", t, "partition", p, "err", err) })
		recs := fs.Records()
		full = len(recs) >= r.cfg.MaxBatch
		if len(recs) > 0 {
			if !store(cl, recs) {
				cl.AllowRebalance()
				return nil
			}
			if err := cl.CommitRecords(ctx, recs...); err != nil && ctx.Err() == nil {
				r.log.Warn("offset commit failed; the batch will be stored again (idempotent)", "group", group, "err", err)
			}
		}
		cl.AllowRebalance()
	}
}

// firstWriteRetry is the first wait before a batch that could not be stored is tried again.
const firstWriteRetry = 100 * time.Millisecond

// record stores one polled batch, trying again with growing waits (up to WriteRetryMax) until it
// is stored; it reports false only when ctx ends first. The same records are tried each time,
// none skipped, and every statement is idempotent, so a try that failed half-way does no harm.
// Rebalances stay blocked meanwhile: the partitions cannot move to another member while this
// one holds uncommitted records.
func (r *Recorder) record(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) bool {
	began := time.Now()
	valid, refused := r.decode(recs)
	stored := r.untilStored(ctx, "batch not stored", len(recs), func() error {
		return r.write(ctx, cl, len(recs), valid, refused)
	})
	if stored && r.tracer != nil {
		for _, d := range valid {
			r.tracer.StartAt(r.tracer.Parent(d.rec), tracing.SpanRecorderRecord, trace.SpanKindConsumer,
				tracing.AttemptHop(d.attempt), began).End()
		}
	}
	return stored
}

// untilStored runs write until it succeeds, counting and logging each failure (what, for n
// records) and waiting between tries from firstWriteRetry, doubling up to WriteRetryMax. It
// reports false only when ctx ends first.
func (r *Recorder) untilStored(ctx context.Context, what string, n int, write func() error) bool {
	wait := firstWriteRetry
	for failures := 1; ; failures++ {
		err := write()
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		r.metrics.writeFailures.Inc()
		r.log.Warn(what+"; trying it again", "records", n, "failures", failures, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, r.cfg.WriteRetryMax)
	}
}

// decoded is an attempts record and the attempt it holds.
type decoded struct {
	rec     *kgo.Record
	attempt records.Attempt
}

// refusal is an attempts record the recorder does not store, and why: reason is the metric
// label, detail says what is wrong with this record.
type refusal struct {
	rec            *kgo.Record
	reason, detail string
	attempt        *records.Attempt // nil when the record could not be read
}

// decode reads a batch: attempts to store, and records that are not attempts the recorder can
// trust.
func (r *Recorder) decode(recs []*kgo.Record) (valid []decoded, refused []refusal) {
	for _, rec := range recs {
		a, err := decodeAttempt(rec.Value)
		if err != nil {
			refused = append(refused, refusal{rec: rec, reason: refusedInvalid, detail: err.Error()})
			continue
		}
		valid = append(valid, decoded{rec, a})
	}
	return valid, refused
}

// write checks the tenancy of the valid attempts, stores those that pass and dead-letters the
// rest, with invalid, the records decode refused. Metrics and logs are written only once it
// succeeds, so a batch tried again is counted once.
func (r *Recorder) write(ctx context.Context, cl *kgo.Client, polled int, valid []decoded, invalid []refusal) error {
	began := time.Now()
	owners, err := r.endpointOwners(ctx, valid)
	if err != nil {
		return err
	}
	refused := slices.Clone(invalid)
	var accepted []decoded
	for _, d := range valid {
		a := d.attempt
		owner, known := owners[a.EndpointID]
		switch {
		case !known:
			refused = append(refused, refusal{d.rec, refusedUnknownEndpoint, "endpoint " + a.EndpointID + " does not exist", &d.attempt})
		case owner != a.PartnerID:
			refused = append(refused, refusal{d.rec, refusedTenantMismatch, fmt.Sprintf("endpoint %s does not belong to partner %s", a.EndpointID, a.PartnerID), &d.attempt})
		case a.ErrorCategory == records.CategoryTenantMismatch:
			refused = append(refused, refusal{d.rec, refusedTenantMismatch, "the sender refused a delivery naming another partner's endpoint", &d.attempt})
		default:
			accepted = append(accepted, d)
		}
	}
	// Shards by endpoint are written in concurrent transactions: no two of them touch the
	// same endpoint or delivery row, so they cannot deadlock, and PostgreSQL uses more than
	// one core. Offsets are committed only after every shard has committed.
	shards := make([][]decoded, r.cfg.WriteShards)
	for _, d := range accepted {
		h := fnv.New32a()
		h.Write([]byte(d.attempt.EndpointID))
		i := h.Sum32() % uint32(len(shards))
		shards[i] = append(shards[i], d)
	}
	var (
		disabled   atomic.Int64
		mu         sync.Mutex
		unstorable []refusal
		g          errgroup.Group
	)
	for _, shard := range shards {
		if len(shard) == 0 {
			continue
		}
		g.Go(func() error {
			n, bad, err := r.writeShard(ctx, shard)
			disabled.Add(int64(n))
			mu.Lock()
			unstorable = append(unstorable, bad...)
			mu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("recorder: record attempts: %w", err)
	}
	refused = append(refused, unstorable...)
	if len(refused) > 0 {
		dls := make([]*kgo.Record, len(refused))
		for i, f := range refused {
			dls[i] = r.deadLetter(f)
		}
		if err := cl.ProduceSync(ctx, dls...).FirstErr(); err != nil {
			return fmt.Errorf("recorder: dead letters: %w", err)
		}
	}
	for _, f := range refused {
		r.metrics.refused.WithLabelValues(f.reason).Inc()
		r.log.Warn("attempt record refused; sent to the dlq", "reason", f.reason, "detail", f.detail, "partition", f.rec.Partition, "offset", f.rec.Offset)
	}
	r.metrics.recorded.Add(float64(len(accepted) - len(unstorable)))
	r.metrics.disabled.Add(float64(disabled.Load()))
	r.metrics.batchSize.Observe(float64(polled))
	r.metrics.latency.Observe(time.Since(began).Seconds())
	return nil
}

// writeShard stores a shard's attempts in one transaction and returns how many endpoints it
// disabled. When PostgreSQL refuses the transaction for what a record holds (see refusedForData),
// it stores the attempts one per transaction instead, in the order they started, and returns
// those PostgreSQL refuses alone: one record it cannot store never holds back the others.
// Any other error is returned, and the caller tries the whole batch again.
func (r *Recorder) writeShard(ctx context.Context, shard []decoded) (int, []refusal, error) {
	attempts := make([]records.Attempt, len(shard))
	for i, d := range shard {
		attempts[i] = d.attempt
	}
	n, err := storeAttempts(ctx, r.pool, attempts)
	if err == nil || !refusedForData(err) {
		return n, nil, err
	}
	shard = slices.Clone(shard)
	slices.SortStableFunc(shard, func(a, b decoded) int { return a.attempt.StartedAt.Compare(b.attempt.StartedAt) })
	disabled := 0
	var unstorable []refusal
	for _, d := range shard {
		n, err := storeAttempts(ctx, r.pool, []records.Attempt{d.attempt})
		switch {
		case err == nil:
			disabled += n
		case refusedForData(err):
			unstorable = append(unstorable, refusal{d.rec, refusedUnstorable, err.Error(), &d.attempt})
		default:
			return disabled, nil, err
		}
	}
	return disabled, unstorable, nil
}

// storeAttempts writes attempts in one transaction.
func storeAttempts(ctx context.Context, pool *pgxpool.Pool, attempts []records.Attempt) (int, error) {
	var disabled int
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		disabled, err = recordAttempts(ctx, tx, attempts)
		return err
	})
	return disabled, err
}

// refusedForData reports whether PostgreSQL refused a statement for the values it was given — a
// data exception (a NUL byte in text, a value out of range), an integrity constraint, a size
// limit: SQLSTATE classes 22, 23 and 54. The same values would be refused again; anything else
// (a lost connection, a shutdown, a read-only server) may pass when tried again.
func refusedForData(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) != 5 {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", "23", "54":
		return true
	}
	return false
}

// deadLetter is the dlq record of a refused attempts record, with the event and partner it
// names when it could be read.
func (r *Recorder) deadLetter(f refusal) *kgo.Record {
	dl := records.NewDeadLetter("recorder", f.reason+": "+f.detail, records.ClipOriginal(f.rec.Value))
	if f.attempt != nil {
		dl.EventID, dl.Partner = f.attempt.EventID, f.attempt.PartnerID
	}
	return records.DeadLetterRecord(r.names.DLQ, string(f.rec.Key), dl)
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
		return nil, fmt.Errorf("recorder: endpoint owners: %w", err)
	}
	owners := map[string]string{}
	var id, partner string
	_, err = pgx.ForEachRow(rows, []any{&id, &partner}, func() error { owners[id] = partner; return nil })
	if err != nil {
		return nil, fmt.Errorf("recorder: endpoint owners: %w", err)
	}
	return owners, nil
}

// decodeAttempt reads an attempts record and checks it (records.Attempt.Validate). Values that
// only PostgreSQL can judge (text it cannot hold, such as a NUL byte in the excerpt) are left to
// it: writeShard dead-letters what it refuses.
func decodeAttempt(value []byte) (records.Attempt, error) {
	// JSON is UTF-8 (RFC 8259), and the sender writes only that; a decoder would turn invalid
	// bytes into U+FFFD, storing evidence that no receiver sent.
	if !utf8.Valid(value) {
		return records.Attempt{}, errors.New("not an attempt record: not valid UTF-8")
	}
	a, err := records.UnmarshalAttempt(value)
	if err != nil {
		return a, fmt.Errorf("not an attempt record: %w", err)
	}
	if err := a.Validate(); err != nil {
		return a, err
	}
	a.ResponseExcerpt = clip.Bytes(a.ResponseExcerpt, 1024)
	return a, nil
}

var deliveryStates = map[string]string{
	records.OutcomeDelivered: "succeeded",
	records.OutcomeRetrying:  "retrying",
	records.OutcomeFailed:    "failed",
}

// The lock order. Several transactions write history rows at once: the write shards of a batch,
// other recorder instances (a delivery's partition moves in a rebalance, and every instance
// writes the rows of the endpoints its deliveries name) and the pending writer (pending.go).
// Two transactions that lock the same rows in different orders can each wait on the other, and
// PostgreSQL then aborts one (SQLSTATE 40P01, deadlock detected): a batch done twice. So every
// transaction takes its row locks in one global order:
//
//  1. delivery rows, by delivery_id, in two passes: first the rows new to the history,
//     inserted under ON CONFLICT DO NOTHING (the pending writer's only statement), then the rows
//     that existed, locked and updated by the upsert (ON CONFLICT (delivery_id) DO UPDATE);
//  2. delivery_attempt rows, by (delivery_id, attempt_no, started_at);
//  3. endpoint_health rows, by endpoint_id;
//  4. endpoint rows, by id (failing_since, then the disables).
//
// The statements run in that order in every transaction (the pending writer takes only the
// first), and each writes its rows in key order: the arrays are sorted in Go (strings by their
// bytes) and unnest WITH ORDINALITY … ORDER BY the ordinal feeds the rows in that order, so an
// INSERT … SELECT locks (or waits on) each row in turn in it. The order is the same in every
// statement because it is Go's, never a collation's (SQL that orders ids itself says COLLATE
// "C", the same byte order). The failure window (retrytopics) writes endpoint rows too and takes
// them the same way: all at once, by id, before it writes any. A transaction waiting for a lock
// then waits only on one that holds lower keys of the order and goes on upward: no chain of
// waits comes back to where it began, so none deadlocks. Rows taken as a side effect count too:
// an ON CONFLICT DO UPDATE locks the conflicting row even when its WHERE is false, and the
// attempts' foreign key locks (KEY SHARE) delivery rows the transaction already holds.
//
// So does a row being inserted. delivery has two unique keys, delivery_id and (event_id,
// endpoint_id). An INSERT … ON CONFLICT never waits on a key it arbitrates while its own row is
// in and undecided (a speculative insertion): on a conflict it takes the row back, and waits only
// then. A unique key it does not arbitrate it checks as a plain INSERT does, waiting on a writer
// of that key with its own row in, and every writer that meets that row meanwhile (an UPDATE
// entering the row's new version in the delivery_id index) waits on it: a lock outside the order.
// The upsert once inserted new deliveries too, under ON CONFLICT (delivery_id), and deadlocked
// so on one row: it found no row, the pending writer inserted it, the upsert put its own in and
// waited on the pending writer for (event_id, endpoint_id); a second instance, once the pending
// row was committed, updated it and waited on the upsert's undecided row; the upsert then waited
// on the second instance. ON CONFLICT DO NOTHING arbitrates every unique key, and the upsert
// now meets only rows that exist (the first pass's own, or committed ones) and inserts none.
// The two passes keep the order: in its first pass a transaction holds only rows it inserted and
// has not committed, and only transactions in their first pass wait on those (the second pass
// sees only rows that existed), each on one holding a lower delivery_id that goes on upward; an
// update that meets a first pass's undecided row waits on a decision that waits on nothing. (A
// row the history sweep deletes between the passes is inserted by the upsert; the sweep deletes
// only deliveries finished longer ago than the retention.)

// compareAttemptKeys orders attempts by delivery_attempt's key, the lock order of its rows.
func compareAttemptKeys(a, b records.Attempt) int {
	return cmp.Or(strings.Compare(a.DeliveryID, b.DeliveryID), cmp.Compare(a.AttemptNo, b.AttemptNo),
		a.StartedAt.Compare(b.StartedAt))
}

// recordAttempts writes a batch of attempts inside tx, set-wise, and returns how many endpoints
// it disabled. Every statement is idempotent: the same attempts recorded twice leave the same
// rows, and an attempt older than the delivery's newest changes only its own attempt row.
//
// A delivery once succeeded stays succeeded when a later automatic request of it (work redone
// after a sender or broker failure, or its redundant retries) does not: the receiver has it, so
// the history must not show it as retrying or failed (the chaos run found it doing so). The request is
// recorded all the same, its status is the delivery's last_status, and it moves failing_since
// and a 410 disables the endpoint as any newest request does. A replay or a test request that
// fails does change the state: someone asked for it again.
func recordAttempts(ctx context.Context, tx pgx.Tx, attempts []records.Attempt) (int, error) {
	if len(attempts) == 0 {
		return 0, nil
	}
	// The newest attempt of each delivery in the batch is the candidate for the delivery row.
	// A request redone after a failure has its attempt number again and starts later.
	newestOf := map[string]records.Attempt{}
	for _, a := range attempts {
		if cur, ok := newestOf[a.DeliveryID]; !ok || a.AttemptNo > cur.AttemptNo ||
			a.AttemptNo == cur.AttemptNo && a.StartedAt.After(cur.StartedAt) {
			newestOf[a.DeliveryID] = a
		}
	}
	// Every statement writes its rows in the lock order (see above). The deliveries new to the
	// history are inserted first, under ON CONFLICT DO NOTHING; only then are the others, which
	// exist now, locked and updated by the upsert. An upsert inserting a row would check the
	// second unique key, (event_id, endpoint_id), which ON CONFLICT (delivery_id) does not
	// arbitrate, by waiting on a concurrent writer of that row while its own insert is undecided:
	// a lock outside the order (see above).
	ids := slices.Sorted(maps.Keys(newestOf))
	var all deliveryColumns
	for _, id := range ids {
		all.add(newestOf[id])
	}
	var (
		changed, failed []string
		id, state       string
	)
	collect := func() error {
		changed = append(changed, id)
		if state == deliveryStates[records.OutcomeFailed] {
			failed = append(failed, id)
		}
		return nil
	}
	rows, err := tx.Query(ctx, `INSERT INTO delivery `+deliveryInsert+`
		ON CONFLICT DO NOTHING
		RETURNING delivery_id, state`,
		all.id, all.event, all.endpoint, all.partner, all.eventType, all.state, all.attemptNo, all.next, all.status, all.latency,
		all.category, all.started, all.latencyUS)
	if err != nil {
		return 0, fmt.Errorf("deliveries: %w", err)
	}
	if _, err := pgx.ForEachRow(rows, []any{&id, &state}, collect); err != nil {
		return 0, fmt.Errorf("deliveries: %w", err)
	}
	inserted := map[string]bool{}
	for _, id := range changed {
		inserted[id] = true
	}
	var d deliveryColumns
	var redone []string // automatic requests that did not succeed: they never undo a success
	for _, id := range ids {
		if inserted[id] {
			continue
		}
		a := newestOf[id]
		d.add(a)
		if a.Outcome != records.OutcomeDelivered && (a.Trigger == records.TriggerInitial || a.Trigger == records.TriggerRetry) {
			redone = append(redone, a.DeliveryID)
		}
	}
	if len(d.id) > 0 {
		rows, err = tx.Query(ctx, `INSERT INTO delivery AS d `+deliveryInsert+`
			ON CONFLICT (delivery_id) DO UPDATE SET
				state = CASE WHEN d.state = 'succeeded' AND d.delivery_id = ANY($14::text[]) THEN 'succeeded' ELSE EXCLUDED.state END,
				attempt_count = EXCLUDED.attempt_count,
				next_attempt_at = CASE WHEN d.state = 'succeeded' AND d.delivery_id = ANY($14::text[]) THEN NULL ELSE EXCLUDED.next_attempt_at END,
				last_status = EXCLUDED.last_status, last_latency_ms = EXCLUDED.last_latency_ms, last_latency_us = EXCLUDED.last_latency_us,
				last_error_category = EXCLUDED.last_error_category, last_attempt_at = EXCLUDED.last_attempt_at, updated_at = now()
			WHERE (d.attempt_count, coalesce(d.last_attempt_at, '-infinity')) < (EXCLUDED.attempt_count, EXCLUDED.last_attempt_at)
			RETURNING delivery_id, state`,
			d.id, d.event, d.endpoint, d.partner, d.eventType, d.state, d.attemptNo, d.next, d.status, d.latency, d.category,
			d.started, d.latencyUS, redone)
		if err != nil {
			return 0, fmt.Errorf("deliveries: %w", err)
		}
		if _, err := pgx.ForEachRow(rows, []any{&id, &state}, collect); err != nil {
			return 0, fmt.Errorf("deliveries: %w", err)
		}
	}
	slices.Sort(changed) // in the order of the deliveries, as one statement returned them
	slices.Sort(failed)

	var at attemptColumns
	for _, a := range slices.SortedFunc(slices.Values(attempts), compareAttemptKeys) {
		at.add(a)
	}
	// The statement names the strict order breaks inserted now, not those recorded before: each
	// is announced once (orderbreak.go). Only those rows come back, not one per attempt.
	rows, err = tx.Query(ctx, `WITH inserted AS (INSERT INTO delivery_attempt
		(delivery_id, attempt_no, trigger, started_at, status, latency_ms, latency_us, error_category, response_excerpt,
		 next_attempt_at, order_broken)
		SELECT u.id, u.attempt_no, u.trigger, u.started, u.status, u.latency, u.latency_us, u.category, u.excerpt, u.next, u.broken
		FROM unnest($1::text[], $2::int[], $3::text[], $4::timestamptz[], $5::int[], $6::int[], $7::text[],
			$8::text[], $9::timestamptz[], $10::bool[], $11::bigint[])
			WITH ORDINALITY AS u(id, attempt_no, trigger, started, status, latency, category, excerpt, next, broken, latency_us, n)
		ORDER BY u.n
		ON CONFLICT (delivery_id, attempt_no, started_at) DO NOTHING
		RETURNING delivery_id, attempt_no, order_broken)
		SELECT delivery_id, attempt_no FROM inserted WHERE order_broken`,
		at.id, at.attemptNo, at.trigger, at.started, at.status, at.latency, at.category, at.excerpt, at.next, at.broken, at.latencyUS)
	if err != nil {
		return 0, fmt.Errorf("attempts: %w", err)
	}
	breaks, err := insertedBreaks(rows, attempts)
	if err != nil {
		return 0, fmt.Errorf("attempts: %w", err)
	}

	if err := updateHealth(ctx, tx, attempts); err != nil {
		return 0, err
	}

	// Only attempts that became their delivery's newest move failing_since or disable.
	var newest []records.Attempt
	for _, id := range changed {
		newest = append(newest, newestOf[id])
	}
	disabled, err := updateEndpoints(ctx, tx, newest)
	if err != nil {
		return 0, err
	}
	if err := announceOrderBreaks(ctx, tx, breaks); err != nil {
		return 0, err
	}
	if err := tellOperatorOfFailures(ctx, tx, failed, newestOf); err != nil {
		return 0, err
	}
	return disabled, nil
}

// tellOperatorOfFailures writes, in the transaction that marks them failed, the operator's
// operator.delivery.dead_lettered of each delivery whose newest attempt ended it for good
// (design.md section 8, "Operator events"). A batch recorded again returns no row for a
// delivery already at that attempt, so each failure is told once. The rows are new outbox rows
// no other transaction writes, outside the lock order above. Deliveries to the operator's own
// endpoints are left out: their failure would be told to those same endpoints.
func tellOperatorOfFailures(ctx context.Context, tx pgx.Tx, failed []string, newestOf map[string]records.Attempt) error {
	var evs []outbox.Event
	for _, id := range failed {
		a := newestOf[id]
		if a.Outcome != records.OutcomeFailed || a.PartnerID == outbox.OperatorPartnerID {
			continue
		}
		b, err := json.Marshal(deadLettered{PartnerID: a.PartnerID, EndpointID: a.EndpointID, DeliveryID: a.DeliveryID,
			EventID: a.EventID, EventType: a.EventType, AttemptCount: a.AttemptNo, LastStatus: nullableStatus(a.Status),
			LastErrorCategory: a.ErrorCategory})
		if err != nil {
			return err
		}
		evs = append(evs, outbox.Event{PartnerID: outbox.OperatorPartnerID, Type: operatorDeadLettered,
			Subject: outbox.Subject{Type: "delivery", ID: a.DeliveryID}, Data: b})
	}
	if len(evs) == 0 {
		return nil
	}
	if _, err := outbox.AppendAll(ctx, tx, evs); err != nil {
		return fmt.Errorf("operator events: %w", err)
	}
	return nil
}

// operatorDeadLettered is eventcatalog.OperatorDeliveryDeadLettered.
const operatorDeadLettered = "operator.delivery.dead_lettered"

// deadLettered is the data of an operator.delivery.dead_lettered event.
type deadLettered struct {
	PartnerID         string `json:"partner_id"`
	EndpointID        string `json:"endpoint_id"`
	DeliveryID        string `json:"delivery_id"`
	EventID           string `json:"event_id"`
	EventType         string `json:"event_type"`
	AttemptCount      int    `json:"attempt_count"`
	LastStatus        *int32 `json:"last_status,omitempty"`
	LastErrorCategory string `json:"last_error_category,omitempty"`
}

// updateEndpoints keeps endpoint.failing_since (set at the first failure after a success,
// cleared by a success, R23; per endpoint the batch's latest attempt decides; attempts never
// sent, categories internal and endpoint_disabled, do not count) and disables the endpoints
// whose newest attempt failed with 410 Gone (R20). It returns how many it disabled.
//
// One statement first locks, in the lock order, every endpoint row either change will write,
// and changes failing_since; the disables come after, endpoint by endpoint in the same order,
// on rows the transaction already holds.
func updateEndpoints(ctx context.Context, tx pgx.Tx, newest []records.Attempt) (int, error) {
	type decision struct {
		decided bool // an attempt that says something of the receiver
		clear   bool
		since   time.Time // the first failure after the batch's last success
		gone    bool      // a 410 Gone: the endpoint is disabled
		partner string
	}
	byEndpoint := map[string]*decision{}
	newest = slices.Clone(newest)
	slices.SortFunc(newest, func(a, b records.Attempt) int { return a.StartedAt.Compare(b.StartedAt) })
	for _, a := range newest {
		d := byEndpoint[a.EndpointID]
		if d == nil {
			d = &decision{partner: a.PartnerID}
			byEndpoint[a.EndpointID] = d
		}
		if a.Outcome == records.OutcomeFailed && a.Status == 410 {
			d.gone = true
		}
		if a.Outcome != records.OutcomeDelivered && records.SaysNothingOfReceiver(a.ErrorCategory) {
			continue
		}
		d.decided = true
		switch {
		case a.Outcome == records.OutcomeDelivered:
			d.clear, d.since = true, time.Time{}
		case d.clear || d.since.IsZero():
			d.clear, d.since = false, a.StartedAt
		}
	}
	if len(byEndpoint) == 0 {
		return 0, nil
	}
	var (
		ids                  []string
		decided, clear, gone []bool
		since                []time.Time
	)
	for _, id := range slices.Sorted(maps.Keys(byEndpoint)) {
		d := byEndpoint[id]
		ids, decided, clear = append(ids, id), append(decided, d.decided), append(clear, d.clear)
		since, gone = append(since, d.since), append(gone, d.gone)
	}
	// Only rows that change are written: each write is an endpoint change that cdc publishes.
	// An UPDATE takes its row locks in the order of its join, which it cannot be told; the
	// locking SELECT can: ORDER BY is applied before FOR NO KEY UPDATE, so it locks the rows
	// in the arrays' order (after a concurrent change, the WHERE is checked again on the row's
	// newest version). The row of a 410 is locked whatever its status: Disable reads the status
	// anew, and a row it found active but this statement had not locked (enabled again in
	// between) would be locked after rows of higher ids.
	_, err := tx.Exec(ctx, `WITH locked AS MATERIALIZED (
			SELECT e.id, u.clear, u.since,
				u.decided AND CASE WHEN u.clear THEN e.failing_since IS NOT NULL ELSE e.failing_since IS NULL END AS moves
			FROM unnest($1::text[], $2::bool[], $3::bool[], $4::timestamptz[], $5::bool[])
				WITH ORDINALITY AS u(id, decided, clear, since, gone, n)
			JOIN endpoint e ON e.id = u.id
			WHERE u.decided AND CASE WHEN u.clear THEN e.failing_since IS NOT NULL ELSE e.failing_since IS NULL END
				OR u.gone
			ORDER BY u.n
			FOR NO KEY UPDATE OF e)
		UPDATE endpoint e SET failing_since = CASE WHEN l.clear THEN NULL ELSE l.since END
		FROM locked l WHERE e.id = l.id AND l.moves`,
		ids, decided, clear, since, gone)
	if err != nil {
		return 0, fmt.Errorf("failing_since: %w", err)
	}
	disabled := 0
	for i, id := range ids {
		if !gone[i] {
			continue
		}
		changed, err := endpoints.Disable(ctx, tx, endpoints.Disabling{PartnerID: byEndpoint[id].partner, EndpointID: id,
			Reason: "the receiver answered 410 Gone"})
		if err != nil {
			return 0, err
		}
		if changed {
			disabled++
		}
	}
	return disabled, nil
}

// updateHealth keeps endpoint_health: per endpoint, the circuit the newest attempt stating one
// reported (a row only moves to a newer statement), the ordered endpoint's hold likewise, the
// last success and the last attempt. It
// writes only for endpoints of the attempt's partner, as every statement of the recorder does.
func updateHealth(ctx context.Context, tx pgx.Tx, attempts []records.Attempt) error {
	type health struct {
		partner                  string
		circuit                  *string
		probeAt, circuitAt       *time.Time
		lastSuccess, lastAttempt *time.Time
		order                    *records.OrderHold
	}
	later := func(cur *time.Time, t time.Time) *time.Time {
		if cur == nil || t.After(*cur) {
			return &t
		}
		return cur
	}
	byEndpoint := map[string]*health{}
	for _, a := range attempts {
		h := byEndpoint[a.EndpointID]
		if h == nil {
			h = &health{partner: a.PartnerID}
			byEndpoint[a.EndpointID] = h
		}
		if o := a.Order; o != nil && (h.order == nil || !o.At.Before(h.order.At)) {
			h.order = o // the ordered endpoint's hold: the newest statement holds, as for the circuit
		}
		if a.Outcome != records.OutcomeDelivered && records.SaysNothingOfReceiver(a.ErrorCategory) {
			continue // not sent (a refusal): says nothing of the receiver
		}
		h.lastAttempt = later(h.lastAttempt, a.StartedAt)
		if a.Outcome == records.OutcomeDelivered {
			h.lastSuccess = later(h.lastSuccess, a.StartedAt)
		}
		// Concurrent attempts end in any order: the statement the sender made last holds (one
		// that began later but ended before the circuit opened does not undo the opening).
		stated := a.StartedAt.Add(time.Duration(a.LatencyMS) * time.Millisecond)
		if a.CircuitAt != nil {
			stated = *a.CircuitAt
		}
		if a.Circuit != "" && (h.circuitAt == nil || !stated.Before(*h.circuitAt)) {
			c := a.Circuit
			h.circuit, h.probeAt, h.circuitAt = &c, a.CircuitProbeAt, &stated
		}
	}
	var (
		ids, partners           []string
		circuits                []*string
		probes, ats, succ, last []*time.Time
		held                    []*int32
		heads, orderAts         []*time.Time
	)
	for _, id := range slices.Sorted(maps.Keys(byEndpoint)) {
		h := byEndpoint[id]
		if h.lastAttempt == nil && h.circuit == nil && h.order == nil {
			continue
		}
		ids, partners, circuits = append(ids, id), append(partners, h.partner), append(circuits, h.circuit)
		probes, ats, succ, last = append(probes, h.probeAt), append(ats, h.circuitAt), append(succ, h.lastSuccess), append(last, h.lastAttempt)
		var (
			n          *int32
			head, stat *time.Time
		)
		if o := h.order; o != nil {
			v, at := int32(min(o.Held, 1<<31-1)), o.At
			n, head, stat = &v, o.HeadSince, &at
		}
		held, heads, orderAts = append(held, n), append(heads, head), append(orderAts, stat)
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO endpoint_health AS h
			(endpoint_id, circuit_state, circuit_probe_at, circuit_at, last_success_at, last_attempt_at,
			 order_held, order_head_since, order_at)
		SELECT u.id, u.circuit, u.probe, u.at, u.success, u.last, u.held, u.head, u.order_at
		FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[], $7::timestamptz[],
			$8::int[], $9::timestamptz[], $10::timestamptz[])
			WITH ORDINALITY AS u(id, partner, circuit, probe, at, success, last, held, head, order_at, n)
		JOIN endpoint e ON e.id = u.id AND e.partner_id = u.partner
		ORDER BY u.n
		ON CONFLICT (endpoint_id) DO UPDATE SET
			circuit_state = CASE WHEN EXCLUDED.circuit_at >= coalesce(h.circuit_at, '-infinity') THEN EXCLUDED.circuit_state ELSE h.circuit_state END,
			circuit_probe_at = CASE WHEN EXCLUDED.circuit_at >= coalesce(h.circuit_at, '-infinity') THEN EXCLUDED.circuit_probe_at ELSE h.circuit_probe_at END,
			circuit_at = GREATEST(h.circuit_at, EXCLUDED.circuit_at),
			last_success_at = GREATEST(h.last_success_at, EXCLUDED.last_success_at),
			last_attempt_at = GREATEST(h.last_attempt_at, EXCLUDED.last_attempt_at),
			order_held = CASE WHEN EXCLUDED.order_at >= coalesce(h.order_at, '-infinity') THEN EXCLUDED.order_held ELSE h.order_held END,
			order_head_since = CASE WHEN EXCLUDED.order_at >= coalesce(h.order_at, '-infinity') THEN EXCLUDED.order_head_since ELSE h.order_head_since END,
			order_at = GREATEST(h.order_at, EXCLUDED.order_at),
			updated_at = now()`,
		ids, partners, circuits, probes, ats, succ, last, held, heads, orderAts)
	if err != nil {
		return fmt.Errorf("endpoint health: %w", err)
	}
	return nil
}

// deliveryInsert is the column list and the rows of recordAttempts' two inserts into delivery:
// the newest attempt of each delivery, $1 to $13 column-wise, in the arrays' order (the lock
// order).
const deliveryInsert = `(delivery_id, event_id, endpoint_id, partner_id, event_type, state, attempt_count, next_attempt_at,
		 last_status, last_latency_ms, last_latency_us, last_error_category, created_at, last_attempt_at, updated_at)
		SELECT u.id, u.event, u.endpoint, u.partner, u.event_type, u.state, u.attempt_no, u.next, u.status, u.latency,
			u.latency_us, u.category, u.started, u.started, now()
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[],
			$8::timestamptz[], $9::int[], $10::int[], $11::text[], $12::timestamptz[], $13::bigint[])
			WITH ORDINALITY AS u(id, event, endpoint, partner, event_type, state, attempt_no, next, status, latency, category, started,
				latency_us, n)
		ORDER BY u.n`

// deliveryColumns and attemptColumns hold a batch column-wise for unnest.
type deliveryColumns struct {
	id, event, endpoint, partner, eventType, state []string
	attemptNo                                      []int32
	next                                           []*time.Time
	status                                         []*int32
	latency                                        []int32
	latencyUS                                      []int64
	category                                       []*string
	started                                        []time.Time
}

func (c *deliveryColumns) add(a records.Attempt) {
	c.id, c.event, c.endpoint = append(c.id, a.DeliveryID), append(c.event, a.EventID), append(c.endpoint, a.EndpointID)
	c.partner, c.eventType, c.state = append(c.partner, a.PartnerID), append(c.eventType, a.EventType), append(c.state, deliveryStates[a.Outcome])
	c.attemptNo, c.next = append(c.attemptNo, int32(a.AttemptNo)), append(c.next, a.NextAttemptAt)
	c.status, c.latency = append(c.status, nullableStatus(a.Status)), append(c.latency, clampMS(a.LatencyMS))
	c.latencyUS = append(c.latencyUS, max(a.LatencyUS, 0))
	c.category, c.started = append(c.category, nullableText(a.ErrorCategory)), append(c.started, a.StartedAt)
}

type attemptColumns struct {
	id, trigger, excerpt []string
	attemptNo, latency   []int32
	latencyUS            []int64
	started              []time.Time
	status               []*int32
	category             []*string
	next                 []*time.Time
	broken               []bool
}

func (c *attemptColumns) add(a records.Attempt) {
	c.id, c.trigger, c.excerpt = append(c.id, a.DeliveryID), append(c.trigger, a.Trigger), append(c.excerpt, a.ResponseExcerpt)
	c.attemptNo, c.latency = append(c.attemptNo, int32(a.AttemptNo)), append(c.latency, clampMS(a.LatencyMS))
	c.latencyUS = append(c.latencyUS, max(a.LatencyUS, 0))
	c.started, c.status = append(c.started, a.StartedAt), append(c.status, nullableStatus(a.Status))
	c.category, c.next = append(c.category, nullableText(a.ErrorCategory)), append(c.next, a.NextAttemptAt)
	c.broken = append(c.broken, a.OrderBroken)
}

func nullableStatus(s int) *int32 {
	if s == 0 {
		return nil
	}
	v := int32(s)
	return &v
}

func nullableText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func clampMS(ms int64) int32 {
	return int32(min(max(ms, 0), 1<<31-1))
}
