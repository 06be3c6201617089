package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/tracing"
	"github.com/hookstream/hookstream/outbox"
)

// errConfig marks errors that retrying cannot fix.
var errConfig = errors.New("cdc: configuration")

// session is one period as the active reader: from taking the leadership lock to the first
// error. Everything it learned lives here and dies with it; the next session starts from what
// Kafka and the slot say.
type session struct {
	c    *CDC
	lock *pgx.Conn      // holds the leadership lock; also runs heartbeats and maintenance
	repl *pgconn.PgConn // the replication connection
	prod *kgo.Client    // the transactional producer filling the next Kafka transaction
	// prods are the session's two transactional producers, used in turn: while one ends its
	// transaction, the other's begins and takes the records that follow (startCommit).
	prods [2]*kgo.Client
	rels  *relations       // relation cache of the stream
	table *endpointTable   // endpoint tables as of the last processed change
	parts map[string]int32 // partition counts of the topics produced to
	// partsBefore is the events topic's count before its last change, for the checkpoints
	// (records.Checkpoint.EventsPartitionsBefore).
	partsBefore int32

	checkpoint *records.Checkpoint // last committed to Kafka
	confirmed  records.LSN         // last position confirmed to the slot
	serverEnd  records.LSN

	// The Kafka transaction being filled (batch) and the one committing in the background
	// (inflight). While one commits, the stream goes on: the records of the next are decoded,
	// checked and produced by the other producer once the committing one's records are all
	// written, or queued until its commit returns after an endpoint change that alters
	// matching (design.md section 5).
	txnOpen  bool    // prod has a transaction begun and not yet ended
	batch            // what the transaction being filled holds
	inflight *commit // the transaction committing, nil when none
	// fenced: the transaction being filled holds an endpoint change that alters which events
	// an endpoint receives, so no later event may join it (handleCopyData's commit case).
	fenced      bool
	lastStart   time.Time // when the last commit started (commitDue)
	burst       bool      // the last commit started in a burst: the next waits twice as long (commitDue)
	queued      []queuedRecord
	produceMu   sync.Mutex
	produceErr  error
	endpointsAt int64 // offset after the newest endpoint record produced

	// The PostgreSQL transaction being received.
	inTxn      bool
	skipTxn    bool
	commitLSN  records.LSN
	commitTime time.Time
	fanPending []endpoints.Event // its events whose deliveries cdc makes itself, at its commit (commitPG)

	lastStatus    time.Time
	lastHeartbeat time.Time
	lastMaint     time.Time
	dropAt        *dropMark
}

// dropMark remembers the WAL position at which expired partitions were found: they are dropped
// once the confirmed position passes it, so every row they held has been published (R10, design.md section 4).
type dropMark struct {
	before time.Time
	lsn    records.LSN
}

func (c *CDC) session(ctx context.Context) (err error) {
	s := &session{c: c, rels: newRelations(), table: newEndpointTable(), batch: newBatch()}
	defer s.close()

	if err := s.lead(ctx); err != nil {
		return err
	}
	c.metrics.active.Set(1)
	c.log.Info("active: this process now reads the slot")

	var marker int64
	for i := range s.prods {
		if s.prods[i], err = c.newProducer(i); err != nil {
			return err
		}
		// The later marker is past whatever either id's previous holder left.
		if marker, err = c.claimProducer(ctx, s.prods[i]); err != nil {
			return err
		}
	}
	s.prod = s.prods[0]
	if s.checkpoint, err = c.readCheckpoint(ctx, marker); err != nil {
		return err
	}
	if err := s.readPartitionCounts(ctx); err != nil {
		return err
	}
	s.partsBefore = 0
	if cp := s.checkpoint; cp != nil {
		switch now := s.parts[c.names.Events]; {
		case cp.EventsPartitions != 0 && cp.EventsPartitions != now:
			// Partitions were added since the last session: partners whose partition
			// changes continue in their new one from this session's first event.
			s.partsBefore = cp.EventsPartitions
			c.log.Info("the events topic has a new partition count: events are published with it from now on",
				"partitions", now, "before", cp.EventsPartitions)
		default:
			s.partsBefore = cp.EventsPartitionsBefore
		}
	}
	if s.checkpoint != nil {
		s.endpointsAt = s.checkpoint.EndpointsOffset
		s.confirmed = s.checkpoint.EndLSN
		c.metrics.checkpointLSN.Set(float64(s.checkpoint.CommitLSN))
	}
	if err := s.prepareSlot(ctx); err != nil {
		return err
	}
	args := []string{"proto_version '1'", "publication_names '" + strings.Join(c.cfg.Publications, ",") + "'", "messages 'true'"}
	if err := pglogrepl.StartReplication(ctx, s.repl, c.cfg.Slot, 0, pglogrepl.StartReplicationOptions{PluginArgs: args}); err != nil {
		return fmt.Errorf("cdc: start replication: %w", err)
	}
	c.log.Info("streaming", "checkpoint", s.checkpointLSN(), "endpoints", len(s.table.byID))
	return s.stream(ctx)
}

func (s *session) close() {
	bg := context.Background()
	aborting := s.txnOpen
	if c := s.inflight; c != nil {
		// Its goroutine ends soon: the session's context is done, or its commit failed.
		if err := <-c.done; err == nil {
			if c.prod == s.prod {
				aborting = false // the transaction that committed was the open one
			}
			s.committed(c)
		} else {
			aborting = true
			s.spans = append(c.spans, s.spans...) // aborted below with the rest
		}
		s.inflight = nil
	}
	if aborting {
		// Bounded, so that a stop with the broker gone still ends within the documented
		// bound (design.md section 12): an abort that does not arrive is done by the
		// coordinator at the transaction timeout, or by the next holder of the id. A producer
		// with no transaction open has nothing to end.
		abort, cancel := context.WithTimeout(bg, abortTimeout)
		for _, p := range s.prods {
			if p != nil {
				_ = p.AbortBufferedRecords(abort)
				_ = p.EndTransaction(abort, kgo.TryAbort)
			}
		}
		cancel()
		for _, span := range s.spans {
			span.Fail("kafka transaction aborted; the next session publishes the event again")
			span.End()
		}
	}
	for _, p := range s.prods {
		if p != nil {
			p.Close()
		}
	}
	if s.repl != nil {
		_ = s.repl.Close(bg)
	}
	if s.lock != nil {
		_ = s.lock.Close(bg) // releases the leadership lock
	}
}

// abortTimeout bounds the abort of the open Kafka transaction when a session ends.
const abortTimeout = 10 * time.Second

func (s *session) checkpointLSN() string {
	if s.checkpoint == nil {
		return "none"
	}
	return s.checkpoint.CommitLSN.String()
}

// lead waits until this process holds the slot's leadership lock: a session-level advisory lock
// that PostgreSQL releases when the holder's connection ends, however it ends. Together with the
// slot's own one-reader rule it keeps a single active reader (R12).
func (s *session) lead(ctx context.Context) error {
	c := s.c
	waiting := false
	for {
		if s.lock == nil {
			conn, err := pgx.Connect(ctx, c.cfg.DatabaseURL)
			if err != nil {
				return fmt.Errorf("cdc: connect: %w", err)
			}
			s.lock = conn
		}
		var ok bool
		if err := s.lock.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, c.lockKey).Scan(&ok); err != nil {
			return fmt.Errorf("cdc: leadership lock: %w", err)
		}
		if ok {
			return nil
		}
		if !waiting {
			c.log.Info("standby: another process reads the slot; waiting to take over")
			waiting = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.cfg.RetryInterval):
		}
	}
}

func (s *session) readPartitionCounts(ctx context.Context) error {
	adm := kadm.NewClient(s.prod)
	names := []string{s.c.names.Events, s.c.names.Endpoints, s.c.names.DLQ, s.c.names.Checkpoints}
	details, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("cdc: describe topics: %w", err)
	}
	s.parts = map[string]int32{}
	for _, n := range names {
		d, ok := details[n]
		if !ok || d.Err != nil || len(d.Partitions) == 0 {
			return fmt.Errorf("cdc: topic %s is missing (run `hookstream topics create`)", n)
		}
		s.parts[n] = int32(len(d.Partitions))
	}
	return nil
}

// prepareSlot makes sure the slot exists and that Kafka holds everything committed before the
// slot's starting point. A new slot exports a snapshot taken at its consistent point, and the
// endpoint tables (and, before any checkpoint exists, the outbox) are published from it.
func (s *session) prepareSlot(ctx context.Context) error {
	c := s.c
	var (
		database, plugin string
		exists           bool
	)
	err := s.lock.QueryRow(ctx, `SELECT database, plugin FROM pg_replication_slots WHERE slot_name = $1`, c.cfg.Slot).Scan(&database, &plugin)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return fmt.Errorf("cdc: look up slot: %w", err)
	default:
		exists = true
	}
	var current string
	if err := s.lock.QueryRow(ctx, `SELECT current_database()`).Scan(&current); err != nil {
		return fmt.Errorf("cdc: current database: %w", err)
	}
	if exists && (database != current || plugin != "pgoutput") {
		return fmt.Errorf("%w: slot %s belongs to database %s with plugin %s; choose another slot name (HOOKSTREAM_CDC_SLOT)", errConfig, c.cfg.Slot, database, plugin)
	}

	cfg, err := pgconn.ParseConfig(c.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("%w: database URL: %v", errConfig, err)
	}
	cfg.RuntimeParams["replication"] = "database"
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "hookstream-cdc"
	}
	if s.repl, err = pgconn.ConnectConfig(ctx, cfg); err != nil {
		return fmt.Errorf("cdc: replication connection: %w", err)
	}

	if exists && s.checkpoint != nil {
		return s.c.loadEndpoints(ctx, s.checkpoint, s.table)
	}
	if exists {
		// Nothing was ever committed to Kafka from this slot: start over from a snapshot, which
		// holds every outbox row the old slot would have streamed.
		c.log.Warn("slot exists but Kafka has no checkpoint; recreating it from a snapshot")
		if err := pglogrepl.DropReplicationSlot(ctx, s.repl, c.cfg.Slot, pglogrepl.DropReplicationSlotOptions{}); err != nil {
			return fmt.Errorf("cdc: drop slot: %w", err)
		}
	} else if s.checkpoint != nil {
		c.log.Warn("slot is missing but Kafka has a checkpoint; recreating the slot. Events committed while no slot existed are not published")
		if err := s.c.loadEndpoints(ctx, s.checkpoint, s.table); err != nil {
			return err
		}
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, s.repl, c.cfg.Slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return fmt.Errorf("cdc: create slot: %w", err)
	}
	at, err := records.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return fmt.Errorf("cdc: slot consistent point %q: %w", res.ConsistentPoint, err)
	}
	c.log.Info("slot created", "consistent_point", at.String())
	return s.snapshot(ctx, res.SnapshotName, at, s.checkpoint == nil)
}

// snapshot publishes the endpoint tables (and optionally the outbox) as of the slot's consistent
// point, in one Kafka transaction with a checkpoint at that point.
func (s *session) snapshot(ctx context.Context, name string, at records.LSN, withOutbox bool) error {
	conn, err := pgx.Connect(ctx, s.c.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("cdc: snapshot connection: %w", err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("cdc: snapshot: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read-only
	if _, err := tx.Exec(ctx, `SET TRANSACTION SNAPSHOT '`+name+`'`); err != nil {
		return fmt.Errorf("cdc: use snapshot %s: %w", name, err)
	}

	s.inTxn, s.commitLSN, s.commitTime = true, at, time.Now()
	known := map[string]bool{}
	for id := range s.table.byID {
		known[id] = true
	}
	fresh := newEndpointTable()
	if err := s.scanTable(ctx, tx, `SELECT * FROM endpoint ORDER BY id`, func(rw row) error {
		return fresh.upsertEndpoint(s.rels, nil, rw, at)
	}); err != nil {
		return err
	}
	if err := s.scanTable(ctx, tx, `SELECT * FROM endpoint_secret ORDER BY endpoint_id, created_at`, func(rw row) error {
		return fresh.upsertSecret(s.rels, rw, at)
	}); err != nil {
		return err
	}
	for id, e := range fresh.byID {
		if old, ok := s.table.byID[id]; ok {
			e.CreatedLSN = old.CreatedLSN
		}
		delete(known, id)
	}
	for id := range known {
		fresh.touched[id] = true // deleted while no slot existed: publish a tombstone
	}
	s.table = fresh
	if err := s.beginKafka(); err != nil {
		return err
	}
	if withOutbox {
		n := 0
		err := s.scanTable(ctx, tx, `SELECT * FROM outbox_event ORDER BY event_id`, func(rw row) error {
			n++
			return s.publishEvent(ctx, rw)
		})
		if err != nil {
			return err
		}
		s.c.log.Info("snapshot published existing outbox rows", "events", n)
	}
	if _, err := s.commitPG(records.LSN(0)); err != nil {
		return err
	}
	return s.flush(ctx)
}

// scanTable runs query in the simple protocol, so values arrive in text format exactly as
// pgoutput sends them, and hands each row to fn through the same decoders as the stream.
func (s *session) scanTable(ctx context.Context, tx pgx.Tx, query string, fn func(row) error) error {
	rows, err := tx.Query(ctx, query, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return fmt.Errorf("cdc: snapshot %q: %w", query, err)
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	for rows.Next() {
		raw := rows.RawValues()
		rw := make(row, len(fields))
		for i, f := range fields {
			rw[f.Name] = column{oid: f.DataTypeOID, text: raw[i], null: raw[i] == nil}
		}
		if err := fn(rw); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("cdc: snapshot %q: %w", query, err)
	}
	return nil
}

// stream receives WAL until an error or ctx ends.
func (s *session) stream(ctx context.Context) error {
	c := s.c
	s.lastStatus, s.lastHeartbeat = time.Now(), time.Now()
	// The wait for WAL ends at nextWake or when a commit in flight returns. Its context is made
	// again only when one of those changes, not for every message: at a steady thousand
	// transactions a second, a timer per message was a tenth of cdc's CPU.
	var wait waitContext
	defer wait.stop()
	gather := newGather(s.c.cfg.readInterval())
	gather.hold = socketHold(s.repl.Conn())
	defer gather.stop()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.periodic(ctx); err != nil {
			return err
		}
		wake := ctx
		if c := s.inflight; c != nil {
			wake = c.wake
			if len(s.queued) > 0 && !c.fenced {
				wake = c.flushWake // the queue may go to the other producer then
			}
		}
		fromSocket := s.repl.Frontend().ReadBufferLen() == 0
		if fromSocket && !s.inTxn {
			gather.wait(wake, s.nextWake())
		}
		msg, err := s.repl.ReceiveMessage(wait.until(wake, s.nextWake()))
		if fromSocket {
			gather.read(s.repl.Frontend().ReadBufferLen())
		}
		if err != nil {
			if (pgconn.Timeout(err) || errors.Is(err, context.Canceled)) && ctx.Err() == nil {
				continue
			}
			return fmt.Errorf("cdc: receive: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if isWAL(m.Data) {
				gather.wal()
			}
			if err := s.handleCopyData(ctx, m.Data); err != nil {
				return err
			}
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("cdc: server: %s (%s)", m.Message, m.Code)
		default:
			c.log.Debug("unexpected replication message", "type", fmt.Sprintf("%T", msg))
		}
	}
}

// waitContext is the context of one wait for WAL, kept while its parent and deadline stay the
// same and it has not ended.
type waitContext struct {
	ctx      context.Context
	cancel   context.CancelFunc
	parent   context.Context
	deadline time.Time
}

// until returns a context that ends with parent and no later than deadline: the last one while
// it has not ended and its deadline is not after this one. Ending early only turns the loop
// once more, and the deadline changes with every PostgreSQL transaction (a batch may commit
// only between them), so making a context for each change was a twelfth of cdc's CPU at a
// steady thousand transactions a second.
func (w *waitContext) until(parent context.Context, deadline time.Time) context.Context {
	if w.ctx != nil && w.parent == parent && !w.deadline.After(deadline) && w.ctx.Err() == nil {
		return w.ctx
	}
	w.stop()
	w.ctx, w.cancel = context.WithDeadline(parent, deadline)
	w.parent, w.deadline = parent, deadline
	return w.ctx
}

func (w *waitContext) stop() {
	if w.cancel != nil {
		w.cancel()
	}
}

// gather spaces the stream's reads of the replication connection while WAL flows, so that one
// read takes the messages of several PostgreSQL transactions (design.md section 5). Reading each
// as it arrived woke cdc once per transaction: at a steady thousand a second, the wake-ups (the
// read, the scheduler, the runtime's monitor woken by each system call) were about a third of
// cdc's CPU. A read follows the previous one by at least the interval; after a quiet spell the
// first read is at once, and so is every read within a PostgreSQL transaction (the server sends
// its messages one by one), so a lone transaction waits for nothing; and a read that brought a
// large part of the connection's buffer is followed at once, since more is waiting: a burst
// streams as fast as before.
type gather struct {
	interval time.Duration
	last     time.Time // when the last read of the connection returned
	full     bool      // it left at least gatherFullRead bytes to parse
	flowing  bool      // it brought WAL, not only the server's keepalives
	timer    *time.Timer
	hold     func(bool) // quiets the connection's socket while the read waits (socketHold), or nil
}

// gatherFullRead is half of the 8 KiB that pgconn reads at most at once while messages are
// small: a read that leaves this much unparsed is the sign of a stream that outruns the interval.
const gatherFullRead = 4 << 10

func newGather(interval time.Duration) *gather {
	g := &gather{interval: interval}
	if interval > 0 {
		g.timer = time.NewTimer(time.Hour)
		g.timer.Stop()
	}
	return g
}

// wait holds the next read until the interval since the last one is up, or until, or wake
// ends (a commit returned, or the stream's context).
func (g *gather) wait(wake context.Context, until time.Time) {
	if g.interval <= 0 || g.full || !g.flowing {
		return
	}
	now := time.Now()
	due := g.last.Add(g.interval)
	if until.Before(due) {
		due = until
	}
	if !now.Before(due) {
		return
	}
	if g.hold != nil {
		g.hold(true)
		defer g.hold(false)
	}
	g.timer.Reset(due.Sub(now))
	select {
	case <-g.timer.C:
	case <-wake.Done():
		g.timer.Stop()
	}
}

// read notes that a read of the connection returned, leaving unparsed bytes to parse. Until
// one of its messages proves to carry WAL (wal), the read is no sign of a flow.
func (g *gather) read(unparsed int) {
	if g.interval > 0 {
		g.last, g.full, g.flowing = time.Now(), unparsed >= gatherFullRead, false
	}
}

// wal notes that a message of the last read carried WAL: the stream flows, and the next read
// waits for the interval. Any message of the read counts, not only its first: while cdc
// confirms less than the server has sent (until its next Kafka commit), the server sends a
// keepalive before each transaction, so a read of a steady stream begins with one, and judging
// by it alone made every read the first after a quiet spell: cdc read each transaction as it
// came.
func (g *gather) wal() { g.flowing = true }

// isWAL reports whether data, a CopyData message's, carries WAL (an XLogData message of the
// replication stream).
func isWAL(data []byte) bool {
	return len(data) > 0 && data[0] == pglogrepl.XLogDataByteID
}

func (g *gather) stop() {
	if g.timer != nil {
		g.timer.Stop()
	}
}

// nextWake is when the loop must act even if no WAL arrives.
func (s *session) nextWake() time.Time {
	next := s.lastStatus.Add(s.c.cfg.StatusInterval)
	if hb := s.lastHeartbeat.Add(s.c.cfg.HeartbeatInterval); hb.Before(next) {
		next = hb
	}
	if s.pending != nil && !s.inTxn && s.inflight == nil {
		if f := s.commitDue(); f.Before(next) {
			next = f
		}
	}
	return next
}

// periodic does the time-driven work: flushing a batch whose interval is up, reporting the
// slot's position, heartbeats on an idle stream, and partition maintenance.
func (s *session) periodic(ctx context.Context) error {
	if err := s.reap(ctx, false); err != nil {
		return err
	}
	now := time.Now()
	if s.pending != nil && !s.inTxn && s.inflight == nil && (s.fenced || !now.Before(s.commitDue())) {
		if err := s.startCommit(ctx); err != nil {
			return err
		}
	}
	if now.Sub(s.lastStatus) >= s.c.cfg.StatusInterval {
		if err := s.sendStatus(ctx); err != nil {
			return err
		}
	}
	if now.Sub(s.lastHeartbeat) >= s.c.cfg.HeartbeatInterval {
		// Also proves the leadership connection is alive.
		if _, err := s.lock.Exec(ctx, `SELECT pg_logical_emit_message(false, 'hookstream.heartbeat', '')`); err != nil {
			return fmt.Errorf("cdc: heartbeat: %w", err)
		}
		s.lastHeartbeat = now
	}
	if now.Sub(s.lastMaint) >= s.c.cfg.MaintenanceInterval {
		s.lastMaint = now
		if err := s.maintain(ctx, now); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) handleCopyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return fmt.Errorf("cdc: keepalive: %w", err)
		}
		s.observeServerEnd(records.LSN(ka.ServerWALEnd))
		if ka.ReplyRequested {
			return s.sendStatus(ctx)
		}
	case pglogrepl.XLogDataByteID:
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return fmt.Errorf("cdc: xlog data: %w", err)
		}
		s.observeServerEnd(records.LSN(x.ServerWALEnd))
		return s.handleWAL(ctx, x)
	}
	return nil
}

func (s *session) observeServerEnd(l records.LSN) {
	if l > s.serverEnd {
		s.serverEnd = l
	}
	if s.serverEnd > s.confirmed {
		s.c.metrics.replicationLag.Set(float64(s.serverEnd - s.confirmed))
	} else {
		s.c.metrics.replicationLag.Set(0)
	}
}

func (s *session) handleWAL(ctx context.Context, x pglogrepl.XLogData) error {
	msg, err := parseMessage(x.WALData)
	if err != nil {
		return fmt.Errorf("cdc: decode pgoutput at %s: %w", x.WALStart, err)
	}
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		s.rels.add(m)
	case *pglogrepl.BeginMessage:
		s.inTxn = true
		s.commitLSN, s.commitTime = records.LSN(m.FinalLSN), m.CommitTime
		// A restarted slot may replay transactions already in Kafka: skip them (R10).
		s.skipTxn = s.checkpoint != nil && s.commitLSN <= s.checkpoint.CommitLSN
	case *pglogrepl.CommitMessage:
		s.inTxn = false
		if s.skipTxn {
			s.skipTxn = false
			if s.pending == nil && s.inflight == nil && records.LSN(m.TransactionEndLSN) > s.confirmed {
				s.confirmed = records.LSN(m.TransactionEndLSN)
			}
			return nil
		}
		rematch, err := s.commitPG(records.LSN(m.TransactionEndLSN))
		if err != nil {
			return err
		}
		// An endpoint change that alters which events it receives (a new endpoint, a status or
		// subscription change, a deletion) ends the Kafka transaction at once: no later event
		// shares it. The next transaction cannot take a partition before this one's markers are
		// written on all of its partitions, so whoever reads a later event as committed finds
		// the change below the endpoints topic's last stable offset. In one transaction with
		// it, an event could be committed on its partition while the endpoints partition still
		// waits for its marker, and fanout, catching up to that offset, would match the event
		// without the change. Other changes (failing_since, secrets, limits) change how a
		// delivery is sent, which the sender checks itself, and batch as usual.
		//
		// The transaction is fenced: it starts committing at once, or, when one commits
		// already, as soon as that one returns (periodic). Meanwhile the stream goes on, and
		// further endpoint-only PostgreSQL transactions join the fenced one (endpoint changes
		// may share a transaction; only later events may not): a run of endpoint changes
		// costs one commit, not one each with the stream waiting for every commit (98 filter
		// changes stalled every partner's events about 2 s). The first later event waits for
		// the fenced transaction to start committing (change) and goes into the next.
		//
		// A full batch waits for the commit in flight; a batch whose interval is up starts
		// committing when that commit returns (periodic).
		if rematch {
			s.fenced = true
		}
		if s.records >= s.c.cfg.MaxBatchEvents {
			if err := s.reap(ctx, true); err != nil {
				return err
			}
			return s.startCommit(ctx)
		}
		if s.inflight == nil && (s.fenced || !time.Now().Before(s.commitDue())) {
			return s.startCommit(ctx)
		}
	case *pglogrepl.InsertMessage:
		if s.skipTxn {
			return nil
		}
		return s.change(ctx, m.RelationID, nil, m.Tuple, 'I')
	case *pglogrepl.UpdateMessage:
		if s.skipTxn {
			return nil
		}
		return s.change(ctx, m.RelationID, m.OldTuple, m.NewTuple, 'U')
	case *pglogrepl.DeleteMessage:
		if s.skipTxn {
			return nil
		}
		return s.change(ctx, m.RelationID, m.OldTuple, nil, 'D')
	case *pglogrepl.TruncateMessage:
		s.c.log.Warn("truncate of a published table ignored; endpoint records stay as they were")
	case *pglogrepl.LogicalDecodingMessage:
		// A heartbeat outside any transaction: everything before it has been received. With
		// nothing waiting for Kafka, the slot may move up to it.
		if !m.Transactional && !s.inTxn && s.pending == nil && s.inflight == nil && records.LSN(m.LSN) > s.confirmed {
			s.confirmed = records.LSN(m.LSN)
		}
	}
	return nil
}

// change applies one row change of the current PostgreSQL transaction.
func (s *session) change(ctx context.Context, relID uint32, oldTuple, newTuple *pglogrepl.TupleData, kind byte) error {
	rel, err := s.rels.get(relID)
	if err != nil {
		return err
	}
	_, old, err := s.rels.decode(relID, oldTuple)
	if err != nil {
		return err
	}
	var rw row
	if newTuple != nil {
		if _, rw, err = s.rels.decode(relID, newTuple); err != nil {
			return err
		}
	}
	if oldTuple == nil {
		old = nil
	}
	if len(s.queued) >= maxQueued { // memory stays bounded while a commit takes long
		if err := s.reap(ctx, true); err != nil {
			return err
		}
	}
	if err := s.beginKafka(); err != nil {
		return err
	}
	switch rel.RelationName {
	case "outbox_event":
		if kind != 'I' {
			return nil
		}
		if s.fenced {
			// The first event after an endpoint change that alters matching: the fenced
			// transaction (complete PostgreSQL transactions only; this one's endpoint records
			// are produced at its commit) starts committing first, and the event opens the
			// next, which takes no partition before the fenced one's markers are written.
			if err := s.reap(ctx, true); err != nil {
				return err
			}
			if err := s.startCommit(ctx); err != nil {
				return err
			}
		}
		return s.publishEvent(ctx, rw)
	case "endpoint":
		if kind == 'D' {
			return s.table.deleteEndpoint(s.rels, old)
		}
		// Unchanged TOAST columns of an update keep the stored value (endpointFromRow).
		return s.table.upsertEndpoint(s.rels, old, rw, s.commitLSN)
	case "endpoint_secret":
		if kind == 'D' {
			return s.table.deleteSecret(s.rels, old, s.commitLSN)
		}
		return s.table.upsertSecret(s.rels, rw, s.commitLSN)
	}
	return nil
}

// beginKafka opens a Kafka transaction if none is open. While one commits, the next opens
// when that commit returns (reap).
func (s *session) beginKafka() error {
	if s.txnOpen {
		return nil
	}
	if err := s.prod.BeginTransaction(); err != nil {
		return fmt.Errorf("cdc: begin kafka transaction: %w", err)
	}
	s.txnOpen = true
	return nil
}

// queuedRecord is a record of the next Kafka transaction, made while the previous one's records
// were still being written, or while it commits after an endpoint change that alters matching.
type queuedRecord struct {
	r        *kgo.Record
	onOffset func(int64)
}

// maxQueued bounds the records queued while a commit is in flight, like the producer's own
// buffer (MaxBufferedRecords).
const maxQueued = 20000

// produce adds r to the Kafka transaction being filled: to the producer, or to the queue while
// the previous transaction holds it back (commit.releases). The transaction is begun here if
// none is: the rows of a
// PostgreSQL transaction may be decoded while a commit is in flight (their change opens
// nothing then) and its endpoint records produced at its commit message, after that commit
// returned with nothing queued (reap leaves no transaction open then). Produced outside a
// transaction, the record failed and the session with it, holding every event about a second.
func (s *session) produce(r *kgo.Record, onOffset func(int64)) {
	s.records++
	if r.Topic == s.c.names.Endpoints {
		s.endpointRecords++
	}
	if c := s.inflight; c != nil && !c.releases() {
		s.queued = append(s.queued, queuedRecord{r, onOffset})
		return
	}
	if err := s.beginKafka(); err != nil {
		s.failProduce(err)
		return
	}
	s.sendQueued()
	s.send(r, onOffset)
}

// sendQueued produces the queued records, in their order, into the transaction being filled,
// which is open.
func (s *session) sendQueued() {
	for i, q := range s.queued {
		s.send(q.r, q.onOffset)
		s.queued[i] = queuedRecord{}
	}
	s.queued = s.queued[:0]
}

// failProduce keeps the first error of a record of the transaction being filled; its commit
// fails with it (commitKafka), and the session restarts from the last checkpoint.
func (s *session) failProduce(err error) {
	s.produceMu.Lock()
	if s.produceErr == nil {
		s.produceErr = err
	}
	s.produceMu.Unlock()
}

func (s *session) send(r *kgo.Record, onOffset func(int64)) { s.sendWith(s.prod, r, onOffset) }

func (s *session) sendWith(p *kgo.Client, r *kgo.Record, onOffset func(int64)) {
	p.Produce(context.Background(), r, func(r *kgo.Record, err error) {
		if err != nil {
			s.failProduce(err)
			return
		}
		if onOffset != nil {
			onOffset(r.Offset)
		}
	})
}

// publishEvent produces an outbox row to the events topic, or dead-letters it when it cannot
// become a valid envelope or the catalog refuses it: only events of the published catalog, with
// data that fits their type's schema, reach partners (R4, R31).
func (s *session) publishEvent(ctx context.Context, rw row) error {
	env, body, err := envelopeFromRow(s.rels, rw)
	if err != nil {
		return s.deadLetter(ctx, env, rw, ReasonMalformed, err)
	}
	if len(body) > s.c.cfg.MaxEventBytes {
		return s.deadLetter(ctx, env, rw, ReasonTooLarge, fmt.Errorf("envelope is %d bytes, limit %d", len(body), s.c.cfg.MaxEventBytes))
	}
	if cat := s.c.cfg.Catalog; cat != nil {
		if err := cat.CheckEvent(env.Event()); err != nil {
			return s.deadLetter(ctx, env, rw, catalogReason(err), err)
		}
	}
	events := s.c.names.Events
	partition, err := outbox.PartitionFor(env.PartnerID, s.parts[events])
	if err != nil {
		return fmt.Errorf("cdc: %w", err)
	}
	r := &kgo.Record{
		Topic:     events,
		Partition: partition,
		Key:       []byte(env.EventID),
		Value:     body,
		Headers: []kgo.RecordHeader{
			{Key: records.HeaderPartnerID, Value: []byte(env.PartnerID)},
			{Key: records.HeaderType, Value: []byte(env.Type)},
			{Key: records.HeaderSchemaVersion, Value: []byte(strconv.Itoa(env.SchemaVersion))},
			{Key: records.HeaderCommitLSN, Value: []byte(s.commitLSN.String())},
			{Key: records.HeaderCommitTime, Value: []byte(s.commitTime.UTC().Format(time.RFC3339Nano))},
		},
	}
	if s.c.tracer != nil {
		span := s.c.tracer.Start(traceparentOf(rw), tracing.SpanCDCPublish, trace.SpanKindProducer,
			tracing.Hop{EventID: env.EventID, PartnerID: env.PartnerID, EventType: env.Type})
		span.Set(tracing.AttrCommitLSN.String(s.commitLSN.String()))
		tracing.SetHeader(r, span.Traceparent())
		s.spans = append(s.spans, span)
	}
	if s.fansOut(env.PartnerID, env.Type) {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: records.HeaderFannedOut, Value: []byte(records.FannedOutByCDC)})
		s.fanPending = append(s.fanPending, endpoints.Event{ID: env.EventID, PartnerID: env.PartnerID, Type: env.Type,
			SchemaVersion: env.SchemaVersion, LSN: s.commitLSN, CommitTime: s.commitTime.UTC(), Envelope: body,
			Traceparent: tracing.Header(r.Headers)})
	}
	s.produce(r, nil)
	s.events++
	s.bytes += len(body)
	s.commits = append(s.commits, s.commitTime)
	return nil
}

// fansOut reports whether cdc makes the deliveries of an event of the partner and type itself
// (design.md section 5): at most FanoutMax of the partner's endpoints receive the type (none
// included), none of them is ordered, every filter among them parses, and the PostgreSQL
// transaction has not yet given cdc maxFanPending such events to hold until its commit. The
// rest is fanout's:
//   - an ordered endpoint's deliveries all come from fanout, in its partner's commit order: were
//     some of its events fanned out by cdc and others (of a type more endpoints receive) by
//     fanout, which runs behind cdc, a later event could reach its partition first;
//   - a filter that does not parse comes from a newer grammar than this cdc's (the admin API
//     parsed it at registration): fanout's view keeps such an endpoint's last good state.
func (s *session) fansOut(partnerID, eventType string) bool {
	limit := s.c.cfg.FanoutMax
	if limit == 0 || len(s.fanPending) >= maxFanPending {
		return false
	}
	r := s.table.receiversOf(partnerID, eventType)
	return r.n <= limit && r.filtersParse && !r.ordered
}

// maxFanPending bounds the events of one PostgreSQL transaction cdc fans out itself, which it
// holds until the transaction's commit: the rest of a huge transaction is fanout's.
const maxFanPending = 1000

// fanOut makes the deliveries of the PostgreSQL transaction's events that cdc fans out itself,
// in the Kafka transaction that holds them, against the endpoint tables as of its commit, as
// fanout would match them once that transaction is committed.
func (s *session) fanOut() {
	now := time.Now().UTC()
	fanning := endpoints.Fanning{Deliveries: s.c.names.Deliveries, DLQ: s.c.names.DLQ, Component: "cdc",
		Convert: eventcatalog.ConvertEnvelope, Tracer: s.c.tracer}
	for i, ev := range s.fanPending {
		out := fanning.Fan(s.table, ev, now)
		for _, r := range out.Records {
			if r.Topic == fanning.DLQ {
				r.Partition = records.EventPartition(string(r.Key), s.parts[fanning.DLQ])
			}
			s.produce(r, nil)
		}
		s.fannedOut++
		if len(out.Records) == 0 {
			s.unmatched++
		}
		s.deliveries += out.Deliveries
		s.filtered += out.Filtered
		s.fanPending[i] = endpoints.Event{}
	}
	s.fanPending = s.fanPending[:0]
}

// commitPG closes the current PostgreSQL transaction inside the open Kafka transaction: its
// endpoint changes are produced, then the deliveries cdc makes itself, and the checkpoint to
// write moves up to it. It reports whether the transaction changed which events an endpoint
// receives.
func (s *session) commitPG(end records.LSN) (rematch bool, err error) {
	s.inTxn = false
	for _, t := range s.table.takeTouched() {
		var value []byte
		if t.Endpoint != nil {
			b, err := json.Marshal(t.Endpoint)
			if err != nil {
				return false, fmt.Errorf("cdc: endpoint %s: %w", t.ID, err)
			}
			value = b
		}
		s.produce(&kgo.Record{Topic: s.c.names.Endpoints, Partition: 0, Key: []byte(t.ID), Value: value}, func(off int64) {
			s.produceMu.Lock()
			if off+1 > s.endpointsAt {
				s.endpointsAt = off + 1
			}
			s.produceMu.Unlock()
		})
		s.c.metrics.endpointChanges.Inc()
	}
	s.fanOut()
	if end == 0 {
		end = s.commitLSN
	}
	s.pending = &records.Checkpoint{V: records.CheckpointVersion, Slot: s.c.cfg.Slot, CommitLSN: s.commitLSN, EndLSN: end,
		EventsPartitions: s.parts[s.c.names.Events], EventsPartitionsBefore: s.partsBefore}
	return s.table.takeRematch(), nil
}

// batch is what the Kafka transaction being filled holds.
type batch struct {
	records         int
	endpointRecords int
	events          int
	bytes           int
	fannedOut       int                 // events whose deliveries are in it (cdc fanned them out)
	deliveries      int                 // their deliveries
	filtered        int                 // their endpoints whose payload filter refused them
	unmatched       int                 // of those events, the ones no endpoint receives
	commits         []time.Time         // commit times of the PostgreSQL transactions in it, one per event
	deadLetters     map[string]int      // outbox rows refused in it, by reason
	spans           []tracing.Span      // spans of its events, ended when it commits (tracing on)
	pending         *records.Checkpoint // checkpoint to write when it commits
}

func newBatch() batch { return batch{deadLetters: map[string]int{}} }

// commit is a Kafka transaction committing in the background.
type commit struct {
	batch
	cp   records.Checkpoint // its checkpoint, as written
	prod *kgo.Client        // the producer whose transaction it is
	done chan error         // receives the outcome once
	wake context.Context    // done once the outcome is sent, to end the stream's wait for WAL
	// fenced: it holds an endpoint change that alters matching, so the next transaction is
	// the same producer's, begun once this one returns (startCommit).
	fenced bool
	// written is closed once every record of the transaction, its checkpoint included, is
	// written: from then on, unless fenced, the next transaction's records follow them on
	// every partition, from the other producer. flushWake is done then, or with wake.
	written   chan struct{}
	flushWake context.Context
}

// releases reports whether records may join the transaction being filled while c commits: c
// is not fenced and its records are all written, so the next ones land after them.
func (c *commit) releases() bool {
	if c.fenced {
		return false
	}
	select {
	case <-c.written:
		return true
	default:
		return false
	}
}

// flush commits the Kafka transaction being filled and waits for it, after any commit in flight.
func (s *session) flush(ctx context.Context) error {
	if err := s.reap(ctx, true); err != nil {
		return err
	}
	if err := s.startCommit(ctx); err != nil {
		return err
	}
	return s.reap(ctx, true)
}

// commitDue is when the batch being filled may start committing. Transactions are paced, not
// delayed: after a quiet spell a commit starts at once, and under a steady stream one starts
// every CommitInterval, or every WriteInterval when the batch holds a record a reader waits to
// see committed (awaited), twice that in a burst. So the broker sees a bounded number of
// transactions a second, which is most of its work at a moderate rate, while a delivery waits
// only for its record to be written (within WriteInterval), never for the commit.
func (s *session) commitDue() time.Time {
	wait := s.c.cfg.CommitInterval
	if s.batch.awaited() {
		wait = s.c.cfg.writeInterval()
	}
	if s.burst {
		wait *= 2
	}
	return s.lastStart.Add(wait)
}

// awaited reports whether the batch holds a record some reader waits to see committed: an
// event cdc leaves to fanout, which reads the events topic read_committed and fans it out only
// then, or an endpoint record, which the sender, fanout and the retry tiers take from the
// endpoints topic read_committed. The events cdc fans out itself and their deliveries are
// awaited by nobody: the sender takes the deliveries as they are written (design.md section 6).
func (b *batch) awaited() bool { return b.events > b.fannedOut || b.endpointRecords > 0 }

// burst reports whether a commit of records records, since the time since the commit before it
// started, carries the stream of a burst: at least burstRate records a second. A steady stream
// keeps the short wait, its latency; a burst is carried in half as many transactions (the
// broker's work and each hop's is per transaction), whose wait is a small part of the burst's
// queue.
func burst(records int, since time.Duration) bool {
	return since > 0 && float64(records) >= burstRate*since.Seconds()
}

// burstRate is the stream, in records a second, from which cdc's transactions start twice their
// interval apart (design.md section 5): four times the steady 1,000 events a second the
// intervals are chosen for, below the rate of a burst of transactions of many events (a
// thousand commits of a hundred events a second).
const burstRate = 4000

// startCommit commits the Kafka transaction being filled in the background, with its
// checkpoint; the stream goes on and fills the next. No commit may be in flight.
//
// The next transaction is the other producer's, whose own last transaction has returned (it
// was the commit before this one), so the records that follow need not wait for this one's
// end (EndTxn, and the commit markers the broker writes before the same producer may take a
// partition again), only for its records to be written, so that they land after them on every
// partition. The order of transactions is still the WAL's: the next one ends only after this
// one returned committed (a commit starts only with none in flight), and were this one to
// fail, the session ends and aborts both. A fenced transaction (an endpoint change that alters
// matching) keeps its producer for the next one, which therefore takes no partition before
// every marker of the fenced one is written (handleWAL's commit case).
func (s *session) startCommit(ctx context.Context) error {
	if s.pending == nil {
		return nil
	}
	now := time.Now()
	// The stream's rate is the outbox's: the deliveries cdc makes are not counted, so an event
	// weighs the same whoever fans it out.
	s.burst = burst(s.records-s.deliveries, now.Sub(s.lastStart))
	s.lastStart = now
	// A batch of PostgreSQL transactions that produced nothing (an outbox UPDATE) still
	// writes its checkpoint, in a transaction of its own.
	if err := s.beginKafka(); err != nil {
		return err
	}
	wake, woken := context.WithCancel(ctx)
	flushWake, flushWoken := context.WithCancel(wake)
	c := &commit{batch: s.batch, cp: *s.pending, prod: s.prod, done: make(chan error, 1), wake: wake,
		fenced: s.fenced, written: make(chan struct{}), flushWake: flushWake}
	s.batch, s.fenced = newBatch(), false
	s.inflight = c
	if !c.fenced {
		s.prod = s.other(c.prod)
		s.txnOpen = false // its last transaction was the commit reaped before this one
	}
	go func() {
		c.done <- s.commitKafka(ctx, c, flushWoken)
		woken()
	}()
	return nil
}

// other is the session's producer that is not p.
func (s *session) other(p *kgo.Client) *kgo.Client {
	if s.prods[0] == p {
		return s.prods[1]
	}
	return s.prods[0]
}

// commitKafka ends c's Kafka transaction: its records flushed, its checkpoint written (then
// c.written is closed and flushed called), the transaction committed. It runs beside the
// stream, which touches neither c's producer nor endpointsAt meanwhile (it queues, until
// c.written when c is not fenced, and then produces with the other producer).
func (s *session) commitKafka(ctx context.Context, c *commit, flushed func()) error {
	began := time.Now()
	checkpoint := func() *kgo.Record {
		s.produceMu.Lock()
		c.cp.EndpointsOffset = s.endpointsAt
		s.produceMu.Unlock()
		c.cp.At = time.Now().UTC()
		b, _ := json.Marshal(c.cp)
		return &kgo.Record{Topic: s.c.names.Checkpoints, Partition: 0, Key: []byte(s.c.cfg.Slot), Value: b}
	}
	// Without endpoint records the endpoints offset is known now, so the checkpoint goes in
	// the same produce requests as the events: one round trip less before the commit.
	var early *kgo.Record
	if c.endpointRecords == 0 {
		early = checkpoint()
		s.sendWith(c.prod, early, nil)
	}
	if err := c.prod.Flush(ctx); err != nil {
		return fmt.Errorf("cdc: flush: %w", err)
	}
	s.produceMu.Lock()
	perr := s.produceErr
	s.produceMu.Unlock()
	if perr != nil {
		return fmt.Errorf("cdc: produce: %w", perr)
	}
	if early == nil {
		res := c.prod.ProduceSync(ctx, checkpoint())
		if err := res.FirstErr(); err != nil {
			return fmt.Errorf("cdc: produce checkpoint: %w", err)
		}
	}
	close(c.written)
	flushed()
	if err := c.prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("cdc: commit kafka transaction at %s: %w", c.cp.CommitLSN, err)
	}
	s.c.metrics.commitSeconds.Observe(time.Since(began).Seconds())
	return nil
}

// reap takes the outcome of the commit in flight, if any: waiting for it when wait is set,
// else only if it is there. Once committed, the slot may move past it, and the records queued
// meanwhile open the next transaction.
func (s *session) reap(ctx context.Context, wait bool) error {
	c := s.inflight
	if c == nil {
		return nil
	}
	var err error
	if wait {
		select {
		case err = <-c.done:
		case <-ctx.Done():
			return ctx.Err() // close waits for it
		}
	} else {
		select {
		case err = <-c.done:
		default:
			if len(s.queued) > 0 && c.releases() {
				if err := s.beginKafka(); err != nil {
					return err
				}
				s.sendQueued()
			}
			return nil
		}
	}
	s.inflight = nil
	if err != nil {
		return err // the transaction stays open: close aborts it
	}
	if c.prod == s.prod {
		s.txnOpen = false // fenced: the next transaction is this producer's
	}
	s.committed(c)
	if len(s.queued) > 0 {
		if err := s.beginKafka(); err != nil {
			return err
		}
		s.sendQueued()
	}
	if time.Since(s.lastStatus) >= 100*time.Millisecond {
		return s.sendStatus(ctx)
	}
	return nil
}

// committed records what a committed Kafka transaction confirms.
func (s *session) committed(c *commit) {
	now := time.Now()
	m := s.c.metrics
	m.transactions.Inc()
	m.events.Add(float64(c.events))
	m.bytes.Add(float64(c.bytes))
	m.fannedOut.Add(float64(c.fannedOut))
	m.deliveries.Add(float64(c.deliveries))
	m.filtered.Add(float64(c.filtered))
	m.unmatched.Add(float64(c.unmatched))
	for reason, n := range c.deadLetters {
		m.deadLetters.WithLabelValues(reason).Add(float64(n))
	}
	for _, t := range c.commits {
		m.outboxAge.Observe(now.Sub(t).Seconds())
	}
	for _, span := range c.spans {
		span.EndAt(now)
	}
	m.checkpointLSN.Set(float64(c.cp.CommitLSN))
	cp := c.cp
	s.checkpoint = &cp
	if cp.EndLSN > s.confirmed {
		s.confirmed = cp.EndLSN
	}
}

// sendStatus reports the confirmed position: PostgreSQL may discard WAL before it.
func (s *session) sendStatus(ctx context.Context) error {
	pos := pglogrepl.LSN(s.confirmed)
	if err := pglogrepl.SendStandbyStatusUpdate(ctx, s.repl, pglogrepl.StandbyStatusUpdate{WALWritePosition: pos}); err != nil {
		return fmt.Errorf("cdc: status update: %w", err)
	}
	s.lastStatus = time.Now()
	s.observeServerEnd(s.serverEnd)
	return nil
}

// maintain creates the coming days' outbox partitions and drops expired ones once the confirmed
// position has passed the WAL position at which they were found expired.
func (s *session) maintain(ctx context.Context, now time.Time) error {
	created, err := outbox.CreatePartitions(ctx, s.lock, now)
	if err != nil {
		return fmt.Errorf("cdc: %w", err)
	}
	s.c.metrics.partitions.WithLabelValues("created").Add(float64(len(created)))
	if s.c.cfg.OutboxRetention == 0 {
		return nil
	}
	if err := s.expireDeadLetters(ctx, now.Add(-s.c.cfg.OutboxRetention)); err != nil {
		return err
	}
	if s.dropAt != nil && s.confirmed >= s.dropAt.lsn {
		dropped, err := outbox.DropPartitions(ctx, s.lock, s.dropAt.before)
		if err != nil {
			return fmt.Errorf("cdc: %w", err)
		}
		s.dropAt = nil
		if len(dropped) > 0 {
			s.c.metrics.partitions.WithLabelValues("dropped").Add(float64(len(dropped)))
			s.c.log.Info("expired outbox partitions dropped", "partitions", dropped)
		}
	}
	if s.dropAt == nil {
		before := now.Add(-s.c.cfg.OutboxRetention).UTC().Truncate(24 * time.Hour)
		var lsn pglogrepl.LSN
		if err := s.lock.QueryRow(ctx, `SELECT pg_current_wal_lsn()`).Scan(&lsn); err != nil {
			return fmt.Errorf("cdc: current wal lsn: %w", err)
		}
		s.dropAt = &dropMark{before: before, lsn: records.LSN(lsn)}
	}
	return nil
}
