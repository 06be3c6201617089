package cdc

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
)

// The first bytes of the two messages of the replication stream: the server's keepalive, and
// WAL.
var (
	keepalive = []byte{pglogrepl.PrimaryKeepaliveMessageByteID, 0, 0, 0, 0}
	xlogData  = []byte{pglogrepl.XLogDataByteID, 0, 0, 0, 0}
)

// The wait for WAL keeps its context while the wanted deadline is not earlier than the one it
// has (ending early only turns the loop once more), and makes a new one when the deadline moves
// earlier, the parent changes or the context has ended.
func TestWaitContextKeepsAnEarlierDeadline(t *testing.T) {
	var w waitContext
	defer w.stop()
	parent := context.Background()
	at := time.Now().Add(time.Hour)

	first := w.until(parent, at)
	if got := w.until(parent, at.Add(time.Minute)); got != first {
		t.Fatal("a later deadline made a new context; the earlier one serves")
	}
	if d, _ := first.Deadline(); !d.Equal(at) {
		t.Fatalf("deadline %v, want %v", d, at)
	}
	earlier := w.until(parent, at.Add(-time.Minute))
	if earlier == first {
		t.Fatal("an earlier deadline kept the later context: the loop would wake too late")
	}
	if d, _ := earlier.Deadline(); !d.Equal(at.Add(-time.Minute)) {
		t.Fatalf("deadline %v, want %v", d, at.Add(-time.Minute))
	}
	if first.Err() == nil {
		t.Fatal("the context given up was not released")
	}
	other, cancel := context.WithCancel(parent)
	defer cancel()
	if got := w.until(other, at); got == earlier {
		t.Fatal("a new parent kept the old context: ending the parent would not end the wait")
	}
	soon := w.until(other, time.Now().Add(10*time.Millisecond))
	<-soon.Done()
	if got := w.until(other, at); got == soon || got.Err() != nil {
		t.Fatal("an ended context was handed out again")
	}
}

// While WAL flows, a read of the replication connection waits until the read interval since the
// previous one is up, or less when the loop must act sooner or wake ends; after a quiet spell
// (nothing read yet, or a read that brought only the server's keepalives), and after a read that
// left a large part of the buffer to parse, the next read is at once.
func TestGatherSpacesReadsWhileWALFlows(t *testing.T) {
	const interval = time.Hour // a wait that is not cut short never ends within the test
	never := time.Now().Add(24 * time.Hour)
	returns := func(name string, wake context.Context, until time.Time, g *gather) {
		t.Helper()
		done := make(chan struct{})
		go func() { g.wait(wake, until); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the read was held", name)
		}
	}
	holds := func(name string, g *gather) {
		t.Helper()
		wake, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { g.wait(wake, never); close(done) }()
		select {
		case <-done:
			t.Fatalf("%s: the read was not held", name)
		case <-time.After(200 * time.Millisecond):
		}
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: ending wake did not end the wait", name)
		}
	}

	g := newGather(interval)
	defer g.stop()
	returns("first read", context.Background(), never, g)
	g.read(100)
	g.wal()
	holds("a read after a small one", g)
	returns("the loop must act", context.Background(), time.Now().Add(50*time.Millisecond), g)
	g.read(gatherFullRead)
	g.wal()
	returns("a read after a large one", context.Background(), never, g)
	g.read(0)
	g.wal()
	holds("a read after a drained one", g)
	g.read(0)
	returns("a read that brought only keepalives", context.Background(), never, g)
	// A steady stream's reads begin with the server's keepalive (isWAL false), then WAL.
	g.read(0)
	if isWAL(keepalive) || !isWAL(xlogData) {
		t.Fatal("isWAL: a keepalive is not WAL, an XLogData message is")
	}
	g.wal()
	holds("a read that brought a keepalive, then WAL", g)

	off := newGather(0)
	off.read(0)
	off.wal()
	returns("no interval", context.Background(), never, off)
}

// The reads are spaced by the read interval, but never by more than the write interval less
// the producer's linger: a record read waits no longer than the write interval in all, and an
// operator who lowers the write interval for latency keeps what they bought.
func TestReadIntervalAndLingerFitInTheWriteInterval(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct{ read, write, commit, wantRead, wantLinger time.Duration }{
		{20 * ms, 25 * ms, 100 * ms, 20 * ms, 5 * ms}, // the defaults
		{5 * ms, 50 * ms, 100 * ms, 5 * ms, 5 * ms},
		{5 * ms, 6 * ms, 100 * ms, 4800 * time.Microsecond, 1200 * time.Microsecond},
		{time.Second, 50 * ms, 100 * ms, 45 * ms, 5 * ms},
		{time.Second, 50 * ms, 20 * ms, 16 * ms, 4 * ms}, // the write interval is at most the commit interval
		{0, 50 * ms, 100 * ms, 0, 5 * ms},
	} {
		cfg := Config{ReadInterval: c.read, WriteInterval: c.write, CommitInterval: c.commit}
		if got := cfg.readInterval(); got != c.wantRead {
			t.Errorf("read %v, write %v, commit %v: reads spaced by %v, want %v", c.read, c.write, c.commit, got, c.wantRead)
		}
		if got := cfg.writeLinger(); got != c.wantLinger {
			t.Errorf("read %v, write %v, commit %v: linger %v, want %v", c.read, c.write, c.commit, got, c.wantLinger)
		}
	}
}
