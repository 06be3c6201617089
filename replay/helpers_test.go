package replay

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// env is one test's database, Kafka, topics and engine, configured as the admin API configures
// it by default but for a short poll interval.
type env struct {
	*testenv.Env
	t   testing.TB
	cfg Config
	eng *Engine
	// readers is MaxReaders of the events-topic reader of the next newEngine.
	readers int
}

func newEnv(t testing.TB, change ...func(*Config)) *env {
	t.Helper()
	e := &env{Env: testenv.NewEnv(t), t: t, readers: 16}
	e.cfg = Config{
		Deliveries: e.Names.Deliveries, AutomaticAttempts: 20, Batch: 500, Workers: 2,
		JobLease: 30 * time.Second, PollInterval: 100 * time.Millisecond, MaxScan: 20000, MaxDeliveries: 100_000,
		Logger: slog.New(slog.NewJSONHandler(&testenv.LogBuffer{}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, c := range change {
		c(&e.cfg)
	}
	e.eng = e.newEngine()
	return e
}

// newEngine builds another engine, with its own Kafka client and events-topic reader, over
// the same database and Kafka (a restarted process).
func (e *env) newEngine() *Engine {
	e.t.Helper()
	cl := e.Kafka.Client(e.t, kgo.ProducerBatchMaxBytes(1<<20))
	log := eventlog.New(eventlog.Config{Topic: e.Names.Events, Brokers: e.Kafka.Brokers, Admin: kadm.NewClient(cl),
		MaxReaders: e.readers, LookupWindow: time.Hour})
	e.t.Cleanup(log.Close)
	cfg := e.cfg
	cfg.Client, cfg.Log = cl, log
	eng, err := New(cfg, e.DB.Pool)
	if err != nil {
		e.t.Fatal(err)
	}
	return eng
}

// run runs the job runner of eng until the returned stop is called or the test ends.
func run(t testing.TB, eng *Engine) (stop func()) {
	return testenv.Go(t, "Run", eng.Run)
}

// exec runs sql on the test's database.
func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	e.DB.Exec(e.t, sql, args...)
}

// partner creates a partner.
func (e *env) partner(id string) {
	e.t.Helper()
	e.exec(`INSERT INTO partner (id, name) VALUES ($1, $1)`, id)
}

// endpoint creates an active endpoint of pid subscribed to types (all when none) and returns
// its id.
func (e *env) endpoint(pid string, types ...string) string {
	e.t.Helper()
	if len(types) == 0 {
		types = []string{"*"}
	}
	id := "ep_" + ulid.Make().String()
	e.exec(`INSERT INTO endpoint (id, partner_id, url, event_types) VALUES ($1, $2, $3, $4)`,
		id, pid, "https://hooks.example.com/"+pid, types)
	return id
}

// queue queues a job as the admin API does, and tells the engine.
func (e *env) queue(pid, eid, source string, f Filter) string {
	e.t.Helper()
	id := "rpl_" + ulid.Make().String()
	tx, err := e.DB.Pool.Begin(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	err = Queue(context.Background(), tx, NewJob{ID: id, PartnerID: pid, EndpointID: eid, Source: source, Filter: f, RequestedBy: "test"})
	if err == nil {
		err = tx.Commit(context.Background())
	}
	if err != nil {
		e.t.Fatal(err)
	}
	e.eng.Notify()
	return id
}

// job reads a job.
func (e *env) job(pid, id string) Job {
	e.t.Helper()
	j, err := e.eng.Job(context.Background(), pid, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// waitJob polls a job until it is finished, calling seen with each observation.
func (e *env) waitJob(pid, id string, timeout time.Duration, seen func(Job)) Job {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j := e.job(pid, id)
		if seen != nil {
			seen(j)
		}
		if j.State == JobSucceeded || j.State == JobFailed {
			return j
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("job %s still %s after %s: %+v", id, j.State, timeout, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// seedDeliveries writes, set-wise, one delivery per event id at endpoint eid with attempts
// 1..attempts recorded and the given state, created at created[i].
func (e *env) seedDeliveries(pid, eid, typ, state string, attempts int, eventIDs []string, created []time.Time) []string {
	e.t.Helper()
	ids := make([]string, len(eventIDs))
	for i, ev := range eventIDs {
		ids[i] = records.DeliveryID(ev, eid)
	}
	e.exec(`INSERT INTO delivery (delivery_id, event_id, endpoint_id, partner_id, event_type, state,
			attempt_count, last_status, created_at, updated_at)
		SELECT u.id, u.ev, $3, $4, $5, $6, $7, 500, u.created, u.created FROM unnest($1::text[], $2::text[], $8::timestamptz[]) AS u(id, ev, created)`,
		ids, eventIDs, eid, pid, typ, state, attempts, created)
	e.exec(`INSERT INTO delivery_attempt (delivery_id, attempt_no, trigger, started_at, status, latency_ms, error_category)
		SELECT d, n, CASE WHEN n = 1 THEN 'initial' ELSE 'retry' END, now(), 500, 12, 'http_status'
		FROM unnest($1::text[]) AS d, generate_series(1, $2) AS n`, ids, attempts)
	return ids
}

// seedOutbox writes n events of pid to the outbox set-wise and returns their ids in order.
func (e *env) seedOutbox(pid, typ string, n int) []string {
	e.t.Helper()
	return e.DB.SeedOutbox(e.t, pid, typ, n)
}

// seedHistory writes n failed deliveries of new outbox events at endpoint eid, with attempts
// 1..attempts, created a millisecond apart from an hour ago; it returns the delivery ids, the
// event ids and the first creation time.
func (e *env) seedHistory(pid, eid string, n, attempts int) (dids, events []string, base time.Time) {
	e.t.Helper()
	events = e.seedOutbox(pid, "customer.created", n)
	created := make([]time.Time, n)
	base = time.Now().Add(-time.Hour)
	for i := range created {
		created[i] = base.Add(time.Duration(i) * time.Millisecond)
	}
	return e.seedDeliveries(pid, eid, "customer.created", "failed", attempts, events, created), events, base
}

// deliveries reads the deliveries topic from the start until want records arrived, then a
// little longer to catch extras.
func (e *env) deliveries(want int, timeout time.Duration) []records.Delivery {
	e.t.Helper()
	return e.Kafka.ReadDeliveries(e.t, e.Names.Deliveries, want, timeout)
}

// produceEvents writes n events of pid to the events topic as cdc does (cdc/session.go
// publishEvent), committed now, and returns their ids.
func (e *env) produceEvents(pid string, n int) []string {
	e.t.Helper()
	cl := e.Kafka.Client(e.t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	p := records.EventPartition(pid, e.Kafka.TopicConfig().Partitions)
	var (
		recs []*kgo.Record
		ids  []string
	)
	for i := range n {
		env := outbox.Envelope{
			EventID: outbox.NewEventID(), Type: "customer.created", OccurredAt: time.Now().UTC().Truncate(time.Microsecond),
			PartnerID: pid, Subject: outbox.Subject{Type: "customer", ID: "cus_1"}, SchemaVersion: 1,
			Data: json.RawMessage(`{"customer_id":"cus_1","n":` + strconv.Itoa(i) + `}`),
		}
		body, err := MarshalEnvelope(env)
		if err != nil {
			e.t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: e.Names.Events, Partition: p, Key: []byte(env.EventID), Value: body,
			Headers: []kgo.RecordHeader{
				{Key: records.HeaderPartnerID, Value: []byte(pid)},
				{Key: records.HeaderType, Value: []byte(env.Type)},
				{Key: records.HeaderSchemaVersion, Value: []byte("1")},
				{Key: records.HeaderCommitLSN, Value: []byte(records.LSN(1000 + i).String())},
				{Key: records.HeaderCommitTime, Value: []byte(time.Now().UTC().Format(time.RFC3339Nano))},
			}})
		ids = append(ids, env.EventID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		e.t.Fatalf("produce events: %v", err)
	}
	return ids
}
