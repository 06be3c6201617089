package cdc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// env is one test's PostgreSQL database, Kafka and topics, with cdc's configuration on them.
type env struct{ *testenv.Env }

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{testenv.NewEnv(t)}
	// The partners the tests write events of: the outbox takes events of existing partners only
	// (migration 0021), as the admin API creates them.
	e.DB.Partners(t, testPartners...)
	return e
}

// testPartners are the partners every test database holds.
var testPartners = []string{"partner_a", "partner_b", "p0", "p1", "p2", "p3", "p4", "p5", "p6"}

func (e *env) config(t *testing.T) cdc.Config {
	cfg := cdc.DefaultConfig()
	cfg.Base = e.Kafka.Base(t, prometheus.NewRegistry())
	cfg.DatabaseURL = e.DB.URL
	cfg.Slot = e.DB.Name // slots are cluster-wide: one per test database
	cfg.RetryInterval = 200 * time.Millisecond
	return cfg
}

// start runs cdc in the background until the test ends or stop is called.
func start(t *testing.T, cfg cdc.Config) (stop func()) {
	t.Helper()
	c, err := cdc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Go(t, "cdc.Run", c.Run)
}

// startStreaming starts cdc and waits until it streams from its slot, so changes made after it
// returns arrive through the WAL rather than the slot's initial snapshot.
func startStreaming(t *testing.T, e *env, cfg cdc.Config) (stop func()) {
	t.Helper()
	stop = start(t, cfg)
	waitSlotActive(t, e, cfg.Slot)
	return stop
}

func waitSlotActive(t *testing.T, e *env, slot string) {
	t.Helper()
	testenv.WaitSlotStreaming(t, e.DB.Pool, slot, 60*time.Second)
}

// appendEvents commits one transaction of n customer.created events for partner, valid against
// the catalog, and returns their ids.
func appendEvents(t *testing.T, e *env, partner string, n int) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	err := pgx.BeginFunc(ctx, e.DB.Pool, func(tx pgx.Tx) error {
		for i := 0; i < n; i++ {
			id, err := outbox.Append(ctx, tx, outbox.Event{
				PartnerID: partner,
				Type:      "customer.created",
				Subject:   outbox.Subject{Type: "customer", ID: fmt.Sprintf("cus_%d", i)},
				Data:      testenv.CatalogData(t, "customer.created", map[string]any{"customer_id": fmt.Sprintf("cus_%d", i), "n": i}),
			})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// deadLetterRow is a row of outbox_dead_letter, the table the operator's route lists.
type deadLetterRow struct {
	eventID, partnerID, typ, reason, detail string
}

// deadLetterRows reads outbox_dead_letter in the order cdc wrote it.
func deadLetterRows(t *testing.T, e *env) []deadLetterRow {
	t.Helper()
	rows, err := e.DB.Pool.Query(context.Background(), `SELECT event_id, partner_id, type, reason, detail FROM outbox_dead_letter ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (deadLetterRow, error) {
		var d deadLetterRow
		err := r.Scan(&d.eventID, &d.partnerID, &d.typ, &d.reason, &d.detail)
		return d, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// consumed is what a read_committed reader of a topic sees.
type consumed struct {
	records []*kgo.Record
	// operator holds the records of the operator's partner (operator.cdc.dead_lettered, which
	// cdc writes for each refused row), apart from the platform's events the tests count.
	operator []*kgo.Record
}

// ofOperator reports whether r is an event of the operator's reserved partner.
func ofOperator(r *kgo.Record) bool {
	for _, h := range r.Headers {
		if h.Key == records.HeaderPartnerID {
			return string(h.Value) == outbox.OperatorPartnerID
		}
	}
	return false
}

func (c *consumed) keys() []string {
	out := make([]string, len(c.records))
	for i, r := range c.records {
		out[i] = string(r.Key)
	}
	return out
}

// consume reads topic from the start until want records arrived (or, with want < 0, for the
// whole timeout), failing after timeout.
func consume(t *testing.T, e *env, topic string, want int, timeout time.Duration) *consumed {
	t.Helper()
	return consumeFor(t, e, topic, want, timeout, 0)
}

// settle reads the topic until the expected count is reached and then 3 s longer with the same
// reader, to catch duplicates arriving late.
func settle(t *testing.T, e *env, topic string, want int, timeout time.Duration) *consumed {
	t.Helper()
	return consumeFor(t, e, topic, want, timeout, 3*time.Second)
}

func consumeFor(t *testing.T, e *env, topic string, want int, timeout, extra time.Duration) *consumed {
	t.Helper()
	cl := e.Kafka.Client(t,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	defer cl.Close()
	out := &consumed{}
	deadline := time.Now().Add(timeout)
	var extraUntil time.Time
	for {
		now := time.Now()
		if want >= 0 && len(out.records) >= want && extraUntil.IsZero() {
			extraUntil = now.Add(extra)
		}
		if !extraUntil.IsZero() && !now.Before(extraUntil) {
			return out
		}
		if now.After(deadline) && extraUntil.IsZero() {
			if want < 0 {
				return out
			}
			t.Fatalf("%s: %d records after %s, want %d (%s)", topic, len(out.records), timeout, want, uncommitted(t, e, topic))
		}
		end := deadline
		if !extraUntil.IsZero() {
			end = extraUntil
		}
		ctx, cancel := context.WithDeadline(context.Background(), minTime(end, now.Add(2*time.Second)))
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic == e.Names.Events && ofOperator(r) {
				out.operator = append(out.operator, r)
				return
			}
			out.records = append(out.records, r)
		})
	}
}

// uncommitted says what a read-uncommitted reader sees of topic, for a failure message: records
// there that a read-committed reader misses belong to a transaction that has not ended.
func uncommitted(t *testing.T, e *env, topic string) string {
	cl := e.Kafka.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	n := 0
	for ctx.Err() == nil {
		n += cl.PollFetches(ctx).NumRecords()
	}
	return fmt.Sprintf("a read-uncommitted reader sees %d", n)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func TestMain(m *testing.M) { testenv.Main(m) }
