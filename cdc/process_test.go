package cdc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// child is a `hookstream cdc` process.
type child struct {
	*testenv.Process
	metricsAddr string
}

// startChild runs `hookstream cdc` against the test's database and Kafka.
func startChild(t *testing.T, e *env, extra ...string) *child {
	t.Helper()
	return startChildEnv(t, e, nil, extra...)
}

// startChildEnv is startChild with env added to the process's environment.
func startChildEnv(t *testing.T, e *env, env []string, extra ...string) *child {
	t.Helper()
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	args := append([]string{"cdc",
		"--database-url", e.DB.URL,
		"--kafka-brokers", strings.Join(e.Kafka.Brokers, ","),
		"--topic-prefix", e.Kafka.Prefix,
		"--cdc-slot", e.DB.Name,
		"--metrics-addr", metricsAddr,
		"--log-format", "text",
	}, extra...)
	return &child{Process: testenv.StartProcessEnv(t, env, args...), metricsAddr: metricsAddr}
}

// terminate stops the child with SIGTERM and returns how long it took to exit; it fails the
// test unless it exited with status 0 within bound.
func (c *child) terminate(t *testing.T, bound time.Duration) time.Duration {
	t.Helper()
	took, err := c.Terminate(bound)
	if err != nil {
		t.Fatalf("cdc %v", err)
	}
	return took
}

// active reports whether the child says it is the slot's reader (hookstream_cdc_active 1).
func (c *child) active() bool {
	resp, err := http.Get("http://" + c.metricsAddr + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "hookstream_cdc_active 1" {
			return true
		}
	}
	return false
}

// peakRSS is the child's peak resident memory in bytes (VmHWM).
func (c *child) peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// writer commits events in random-size transactions, rolling some back, and records the commit
// order. One writer, so the order it sees its commits succeed is the commit order.
type writer struct {
	mu        sync.Mutex
	committed []committedEvent
	refused   []committedEvent // rows of committed transactions that cdc must refuse
	stop      atomic.Bool      // ends run early

	// usage is the catalog's usage.finalized data: every event carries it, numbered.
	usage json.RawMessage
	// refuseEvery > 0 makes every refuseEvery-th row one cdc must refuse, inserted by raw SQL
	// beside the valid ones: alternately a type the catalog does not know and data its type's
	// schema refuses.
	refuseEvery int
}

type committedEvent struct{ id, partner string }

func newWriter(t *testing.T, refuseEvery int) *writer {
	return &writer{usage: testenv.CatalogData(t, "usage.finalized", nil), refuseEvery: refuseEvery}
}

// data is the usage.finalized data of event seq: the catalog's example with a seq property
// (the schema accepts additional properties).
func (w *writer) data(seq int) json.RawMessage {
	return json.RawMessage(`{"seq":` + strconv.Itoa(seq) + `,` + string(w.usage[1:]))
}

func (w *writer) run(ctx context.Context, e *env, total int, rng *rand.Rand) error {
	partners := []string{"p0", "p1", "p2", "p3", "p4"}
	seq := 0
	for w.count() < total && !w.stop.Load() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		size := 1 + rng.IntN(100)
		if remaining := total - w.count(); size > remaining {
			size = remaining
		}
		rollback := rng.IntN(10) == 0
		var batch, refused []committedEvent
		tx, err := e.DB.Pool.Begin(ctx)
		if err != nil {
			return err
		}
		for i := 0; i < size; i++ {
			seq++
			p := partners[rng.IntN(len(partners))]
			if w.refuseEvery > 0 && seq%w.refuseEvery == 0 {
				id := outbox.NewEventID()
				typ, data := "invoice.paid", `{"invoice_id":"inv_1"}`
				if seq/w.refuseEvery%2 == 0 {
					typ, data = "usage.finalized", `{"usage_id":"use_1"}` // misses the required fields
				}
				if _, err := tx.Exec(ctx, `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
					VALUES ($1, $2, $3, 'usage', $4, now(), $5)`, id, p, typ, strconv.Itoa(seq), data); err != nil {
					_ = tx.Rollback(ctx)
					return err
				}
				refused = append(refused, committedEvent{id, p})
				i--
				continue
			}
			id, err := outbox.Append(ctx, tx, outbox.Event{
				PartnerID: p, Type: "usage.finalized", Subject: outbox.Subject{Type: "usage", ID: strconv.Itoa(seq)},
				Data: w.data(seq),
			})
			if err != nil {
				_ = tx.Rollback(ctx)
				return err
			}
			batch = append(batch, committedEvent{id, p})
		}
		if rollback {
			if err := tx.Rollback(ctx); err != nil {
				return err
			}
			continue
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		w.mu.Lock()
		w.committed = append(w.committed, batch...)
		w.refused = append(w.refused, refused...)
		w.mu.Unlock()
		time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
	}
	return nil
}

func (w *writer) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.committed)
}

// verifyExactlyOnce checks the events topic against the writer: every committed event exactly
// once, nothing else, and each partner's events in commit order.
func verifyExactlyOnce(t *testing.T, e *env, w *writer) {
	t.Helper()
	got := settle(t, e, e.Names.Events, len(w.committed), 3*time.Minute)
	if len(got.records) != len(w.committed) {
		t.Errorf("events topic holds %d records, %d events were committed", len(got.records), len(w.committed))
	}
	want := map[string]string{}
	order := map[string][]string{}
	refused := map[string]bool{}
	for _, c := range w.refused {
		refused[c.id] = true
	}
	for _, c := range w.committed {
		want[c.id] = c.partner
		order[c.partner] = append(order[c.partner], c.id)
	}
	seen := map[string]int{}
	gotOrder := map[string][]string{}
	for _, r := range got.records {
		id := string(r.Key)
		seen[id]++
		p, ok := want[id]
		if refused[id] {
			t.Fatalf("record %s was published though cdc must refuse it", id)
		}
		if !ok {
			t.Fatalf("record %s was never committed (rolled back?)", id)
		}
		if header(r, records.HeaderPartnerID) != p {
			t.Fatalf("record %s has partner %s, want %s", id, header(r, records.HeaderPartnerID), p)
		}
		gotOrder[p] = append(gotOrder[p], id)
	}
	dups := 0
	for id, n := range seen {
		if n != 1 {
			if dups++; dups <= 5 {
				t.Errorf("event %s published %d times", id, n)
			}
		}
	}
	if dups > 5 {
		t.Errorf("... %d events published more than once in all", dups)
	}
	for p, ids := range order {
		if fmt.Sprint(gotOrder[p]) != fmt.Sprint(ids) {
			t.Errorf("partner %s: %d events in the topic, order differs from commit order", p, len(gotOrder[p]))
		}
	}
	if len(w.refused) > 0 {
		verifyRefusedOnce(t, e, w.refused)
	}
}

// verifyRefusedOnce checks that each refused row is in the dlq topic once and listed in
// outbox_dead_letter once, and that nothing else is.
func verifyRefusedOnce(t *testing.T, e *env, refused []committedEvent) {
	t.Helper()
	want := map[string]bool{}
	for _, c := range refused {
		want[c.id] = true
	}
	dlq := settle(t, e, e.Names.DLQ, len(refused), time.Minute)
	seen := map[string]int{}
	for _, r := range dlq.records {
		seen[string(r.Key)]++
	}
	for id, n := range seen {
		if n != 1 || !want[id] {
			t.Errorf("dlq topic: %s %d times (refused by the writer: %v)", id, n, want[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("dlq topic: %d refused rows, want %d", len(seen), len(want))
	}
	listed := deadLetterRows(t, e)
	if len(listed) != len(want) {
		t.Errorf("outbox_dead_letter: %d rows, want %d", len(listed), len(want))
	}
	for _, l := range listed {
		if !want[l.eventID] {
			t.Errorf("outbox_dead_letter lists %s (%s), which the writer did not refuse", l.eventID, l.reason)
		}
	}
}

// R10, R12: SIGKILL cdc at random moments during a stream of transactions; every committed event
// ends up in Kafka exactly once, in commit order per partner, and nothing rolled back does. Rows
// the catalog refuses, committed among them, are in the dlq topic and outbox_dead_letter once
// each and never in the events topic.
func TestKillNineDuringLoad(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const total = 20000
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 42))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	w := newWriter(t, 50)
	werr := make(chan error, 1)
	wrng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())) // the writer's own: rand.Rand is not safe for concurrent use
	go func() { werr <- w.run(ctx, e, total, wrng) }()

	kills := 0
	proc := startChild(t, e)
	writing := true
	for writing || kills < 3 {
		select {
		case err := <-werr:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			writing = false
		case <-time.After(time.Duration(400+rng.IntN(1200)) * time.Millisecond):
			proc.Kill()
			kills++
			proc = startChild(t, e)
		}
	}
	t.Logf("%d events committed, cdc killed %d times", w.count(), kills)
	verifyExactlyOnce(t, e, w)
}

// shutdownBound is how soon cdc must exit after SIGTERM (design.md section 12,
// docs/operations.md): it ends the Kafka transaction it has open and lets go of the slot.
const shutdownBound = 30 * time.Second

// R10, R12: cdc stopped with SIGTERM during a stream of transactions exits 0 within
// shutdownBound, handing its open Kafka transaction off (aborted, the slot not confirmed past
// it, so its successor streams it again); every committed event ends up in Kafka exactly once,
// in commit order per partner, across three such stops.
func TestSIGTERMDuringLoad(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 43))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := newWriter(t, 50)
	werr := make(chan error, 1)
	wrng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	go func() { werr <- w.run(ctx, e, 1<<30, wrng) }()

	proc := startChild(t, e)
	waitActive(t, proc, proc)
	var took []time.Duration
	for range 3 {
		time.Sleep(time.Duration(1000+rng.IntN(1500)) * time.Millisecond)
		took = append(took, proc.terminate(t, shutdownBound))
		proc = startChild(t, e)
		waitActive(t, proc, proc)
	}
	time.Sleep(time.Second)
	w.stop.Store(true)
	if err := <-werr; err != nil {
		t.Fatalf("writer: %v", err)
	}
	t.Logf("%d events committed; cdc stopped 3 times, exits after SIGTERM %v", w.count(), took)
	verifyExactlyOnce(t, e, w)
}

// R12: a second cdc waits while the first reads the slot and takes over when it dies.
func TestStandbyTakesOver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := startChild(t, e)
	b := startChild(t, e)
	first, second := waitActive(t, a, b)
	if first.active() && second.active() {
		t.Fatal("both processes active")
	}

	rng := rand.New(rand.NewPCG(7, 7))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := newWriter(t, 0)
	werr := make(chan error, 1)
	go func() { werr <- w.run(ctx, e, 5000, rng) }()

	time.Sleep(time.Second)
	first.Kill()
	killedAt := time.Now()
	testenv.Eventually(t, 30*time.Second, "the standby to take over", second.active)
	t.Logf("standby active %s after the kill", time.Since(killedAt).Round(10*time.Millisecond))
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	verifyExactlyOnce(t, e, w)
}

func waitActive(t *testing.T, a, b *child) (active, standby *child) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if a.active() {
			return a, b
		}
		if b.active() {
			return b, a
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("neither process became active")
	return nil, nil
}

// A 100,000-row transaction streams through a bounded producer buffer: the process does not hold
// the whole transaction (about 100 MiB of envelopes) in memory. The process runs as in a pod
// limited to 128 MiB, whose runtime gotune gives 90 % of it: at GOGC 400 without a limit the
// collector may let garbage grow to several times the live heap, and on a loaded host (the
// producer buffer full while the broker is slow) that slack alone passed 150 MiB; a live heap
// of the whole transaction cannot be collected under any limit.
func TestLargeTransactionHasBoundedMemory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	proc := startChildEnv(t, e, []string{"GOMEMLIMIT=115MiB"})
	testenv.Eventually(t, 60*time.Second, "cdc to be active", proc.active)
	waitSlotActive(t, e, e.DB.Name)

	const rows = 100000
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, e.DB.Pool, func(tx pgx.Tx) error {
		return insertUsageRows(t, tx, rows, 1000)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := countRecords(t, e, e.Names.Events, rows, 3*time.Minute)
	if got != rows {
		t.Fatalf("%d records, want %d", got, rows)
	}
	peak := proc.peakRSS(t)
	t.Logf("cdc peak RSS %d MiB for %d rows of ~1 KiB", peak>>20, rows)
	if peak > 150<<20 {
		t.Fatalf("cdc peak RSS %d MiB: the transaction was buffered whole", peak>>20)
	}
}

// insertUsageRows inserts n valid usage.finalized rows set-wise (the catalog's example with a
// number and filler bytes of padding), partners p0 to p6.
func insertUsageRows(t *testing.T, tx pgx.Tx, n, padding int) error {
	_, err := tx.Exec(context.Background(), `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		SELECT 'evt_' || lpad(upper(to_hex(i)), 26, '0'), 'p' || (i % 7), 'usage.finalized', 'usage', i::text, now(),
		       $3::jsonb || jsonb_build_object('i', i, 'filler', $1::text)
		FROM generate_series(1, $2) AS i`, strings.Repeat("x", padding), n, string(testenv.CatalogData(t, "usage.finalized", nil)))
	return err
}

// A refused row is listed once even when cdc dies after recording it and before the Kafka
// transaction holding its dead letter commits: the restarted cdc streams the transaction again,
// and the row is in the dlq topic and outbox_dead_letter once, its valid neighbours in the events
// topic once each.
func TestRefusedRowListedOnceAcrossACrash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	proc := startChild(t, e)
	waitActive(t, proc, proc)
	waitSlotActive(t, e, e.DB.Name)

	// One large transaction: the refused row first, so cdc records it long before the
	// transaction's end, where its Kafka transaction commits.
	const rows = 50000
	ctx := context.Background()
	refused := outbox.NewEventID()
	err := pgx.BeginFunc(ctx, e.DB.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
			VALUES ($1, 'p1', 'invoice.paid', 'invoice', 'inv_1', now(), '{"invoice_id":"inv_1"}')`, refused); err != nil {
			return err
		}
		return insertUsageRows(t, tx, rows, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for len(deadLetterRows(t, e)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the refused row was not recorded within a minute")
		}
		time.Sleep(2 * time.Millisecond)
	}
	proc.Kill()
	if n := len(consume(t, e, e.Names.Events, -1, 2*time.Second).records); n != 0 {
		t.Fatalf("%d events committed before the kill; the transaction had to be still open", n)
	}

	startChild(t, e)
	// settle: the operator's event is on its own partner's partition, which a reader may reach
	// after the others.
	c := settle(t, e, e.Names.Events, rows, 3*time.Minute)
	if got := len(c.records); got != rows {
		t.Fatalf("%d events, want %d", got, rows)
	}
	c.records = nil
	// The operator is told once too: its event commits with the outbox_dead_letter row.
	if len(c.operator) != 1 || !strings.Contains(string(c.operator[0].Value), `"event_id":"`+refused+`"`) {
		t.Fatalf("operator events %v, want one operator.cdc.dead_lettered of %s", c.operator, refused)
	}
	verifyRefusedOnce(t, e, []committedEvent{{refused, "p1"}})
	if l := deadLetterRows(t, e); l[0].reason != "unknown_type" || !strings.Contains(l[0].detail, "invoice.paid") {
		t.Fatalf("outbox_dead_letter row %+v", l[0])
	}
}

// countRecords counts committed records of topic without keeping them.
func countRecords(t *testing.T, e *env, topic string, want int, timeout time.Duration) int {
	t.Helper()
	c := consume(t, e, topic, want, timeout)
	n := len(c.records)
	c.records = nil
	return n
}

// A Kafka broker restart in the middle of the stream loses nothing and duplicates nothing: the
// failed session ends and the next one resumes from the committed checkpoint, refused rows
// included.
func TestBrokerRestartDuringStream(t *testing.T) {
	t.Parallel()
	e := &env{testenv.NewEnvOn(t, testenv.NewRestartableKafka(t))}
	e.DB.Partners(t, testPartners...)
	startStreaming(t, e, e.config(t))

	rng := rand.New(rand.NewPCG(11, 13))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := newWriter(t, 50)
	werr := make(chan error, 1)
	go func() { werr <- w.run(ctx, e, 1<<30, rng) }()
	waitCount := func(n int) {
		for w.count() < n {
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitCount(2000)
	e.Kafka.Restart(t)
	restartedAt := w.count()
	waitCount(restartedAt + 2000) // the stream goes on after the broker is back
	w.stop.Store(true)
	t.Logf("broker restarted after %d committed events; %d events in all", restartedAt, w.count())
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	verifyExactlyOnce(t, e, w)
}
