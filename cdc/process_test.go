package cdc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// child is a `hookstream cdc` process.
type child struct {
	cmd         *exec.Cmd
	metricsAddr string
	done        chan struct{}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startChild runs `hookstream cdc` against the test's database and Kafka.
func startChild(t *testing.T, e *env, extra ...string) *child {
	t.Helper()
	c := &child{metricsAddr: freeAddr(t), done: make(chan struct{})}
	args := append([]string{"cdc",
		"--database-url", e.db.URL,
		"--kafka-brokers", strings.Join(e.kafka.Brokers, ","),
		"--topic-prefix", e.kafka.Prefix,
		"--cdc-slot", e.db.Name,
		"--metrics-addr", c.metricsAddr,
		"--log-format", "text",
	}, extra...)
	c.cmd = exec.Command(testenv.Binary(t), args...)
	c.cmd.Env = os.Environ()
	var logs io.Writer = io.Discard
	if testing.Verbose() {
		logs = os.Stderr
	}
	c.cmd.Stdout, c.cmd.Stderr = logs, logs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(c.kill)
	return c
}

func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
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
	stop      atomic.Bool // ends run early
}

type committedEvent struct{ id, partner string }

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
		var batch []committedEvent
		tx, err := e.db.Pool.Begin(ctx)
		if err != nil {
			return err
		}
		for i := 0; i < size; i++ {
			seq++
			p := partners[rng.IntN(len(partners))]
			id, err := outbox.Append(ctx, tx, outbox.Event{
				PartnerID: p, Type: "usage.recorded", Subject: outbox.Subject{Type: "usage", ID: strconv.Itoa(seq)},
				Data: json.RawMessage(`{"seq":` + strconv.Itoa(seq) + `}`),
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
	got := settle(t, e, e.names.Events, len(w.committed), 3*time.Minute)
	if len(got.records) != len(w.committed) {
		t.Errorf("events topic holds %d records, %d events were committed", len(got.records), len(w.committed))
	}
	want := map[string]string{}
	order := map[string][]string{}
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
}

// R10, R12: SIGKILL cdc at random moments during a stream of transactions; every committed event
// ends up in Kafka exactly once, in commit order per partner, and nothing rolled back does.
func TestKillNineDuringLoad(t *testing.T) {
	e := newEnv(t)
	const total = 20000
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 42))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	w := &writer{}
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
			proc.kill()
			kills++
			proc = startChild(t, e)
		}
	}
	t.Logf("%d events committed, cdc killed %d times", w.count(), kills)
	verifyExactlyOnce(t, e, w)
}

// R12: a second cdc waits while the first reads the slot and takes over when it dies.
func TestStandbyTakesOver(t *testing.T) {
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
	w := &writer{}
	werr := make(chan error, 1)
	go func() { werr <- w.run(ctx, e, 5000, rng) }()

	time.Sleep(time.Second)
	first.kill()
	killedAt := time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for !second.active() {
		if time.Now().After(deadline) {
			t.Fatal("standby did not take over within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
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
// the whole transaction (about 100 MiB of envelopes) in memory.
func TestLargeTransactionHasBoundedMemory(t *testing.T) {
	e := newEnv(t)
	proc := startChild(t, e)
	deadline := time.Now().Add(60 * time.Second)
	for !proc.active() {
		if time.Now().After(deadline) {
			t.Fatal("cdc not active")
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitSlotActive(t, e, e.db.Name)

	const rows = 100000
	ctx := context.Background()
	filler := strings.Repeat("x", 1000)
	err := pgx.BeginFunc(ctx, e.db.Pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
			SELECT 'evt_' || lpad(upper(to_hex(i)), 26, '0'), 'p' || (i % 7), 'usage.recorded', 'usage', i::text, now(),
			       jsonb_build_object('i', i, 'filler', $1::text)
			FROM generate_series(1, $2) AS i`, filler, rows)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got := countRecords(t, e, e.names.Events, rows, 3*time.Minute)
	if got != rows {
		t.Fatalf("%d records, want %d", got, rows)
	}
	peak := proc.peakRSS(t)
	t.Logf("cdc peak RSS %d MiB for %d rows of ~1 KiB", peak>>20, rows)
	if peak > 150<<20 {
		t.Fatalf("cdc peak RSS %d MiB: the transaction was buffered whole", peak>>20)
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
// failed session ends and the next one resumes from the committed checkpoint.
func TestBrokerRestartDuringStream(t *testing.T) {
	e := &env{db: testenv.NewDatabase(t), kafka: testenv.NewRestartableKafka(t)}
	e.names = e.kafka.CreateTopics(t)
	startStreaming(t, e, e.config(t))

	rng := rand.New(rand.NewPCG(11, 13))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := &writer{}
	werr := make(chan error, 1)
	go func() { werr <- w.run(ctx, e, 1<<30, rng) }()
	waitCount := func(n int) {
		for w.count() < n {
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitCount(2000)
	e.kafka.Restart(t)
	restartedAt := w.count()
	waitCount(restartedAt + 2000) // the stream goes on after the broker is back
	w.stop.Store(true)
	t.Logf("broker restarted after %d committed events; %d events in all", restartedAt, w.count())
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	verifyExactlyOnce(t, e, w)
}
