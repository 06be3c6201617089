package cdc

import (
	"testing"
	"time"
)

// A steady stream keeps its interval between the starts of cdc's transactions; from burstRate
// records a second the wait doubles, and drops back as soon as the stream slows (the rate is
// judged on the last transaction alone, so a burst leaves no trace).
func TestCommitWaitDoublesOnlyInABurst(t *testing.T) {
	const interval = 25 * time.Millisecond
	for _, tc := range []struct {
		name    string
		records int
		since   time.Duration
		want    time.Duration
	}{
		{"the first commit of a session", 1, 0, interval},
		{"the first after a quiet spell", 1, time.Minute, interval},
		{"1,000 events a second", 25, interval, interval},
		{"2,000 events a second", 50, interval, interval},
		{"just under the burst rate", burstRate/40 - 1, interval, interval},
		{"at the burst rate", burstRate / 40, interval, 2 * interval},
		{"a burst of transactions of 100 events", 320, interval, 2 * interval},
		{"the burst goes on, judged over the doubled wait", 640, 2 * interval, 2 * interval},
		{"2,000 events a second after a burst", 100, 2 * interval, interval},
		{"a commit held back by the one in flight", 300, 200 * time.Millisecond, interval},
	} {
		got := interval
		if burst(tc.records, tc.since) {
			got *= 2
		}
		if got != tc.want {
			t.Errorf("%s: %d records in %v: wait %v, want %v", tc.name, tc.records, tc.since, got, tc.want)
		}
	}
}

// A transaction waits its commit interval when nobody waits to see its records committed (the
// events cdc fans out and their deliveries, which the sender reads as they are written), and
// only the write interval when it holds an event left to fanout or an endpoint record, which
// their readers take committed; in a burst either doubles.
func TestCommitDueByWhatTheBatchHolds(t *testing.T) {
	cfg := Config{CommitInterval: 100 * time.Millisecond, WriteInterval: 25 * time.Millisecond}
	start := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		b     batch
		burst bool
		want  time.Duration
	}{
		{"events cdc fanned out", batch{events: 40, fannedOut: 40, deliveries: 40}, false, 100 * time.Millisecond},
		{"an event left to fanout", batch{events: 40, fannedOut: 39, deliveries: 39}, false, 25 * time.Millisecond},
		{"an endpoint record", batch{events: 3, fannedOut: 3, endpointRecords: 1}, false, 25 * time.Millisecond},
		{"only a checkpoint (an outbox update)", batch{}, false, 100 * time.Millisecond},
		{"events cdc fanned out, in a burst", batch{events: 900, fannedOut: 900}, true, 200 * time.Millisecond},
		{"an event left to fanout, in a burst", batch{events: 900, fannedOut: 0}, true, 50 * time.Millisecond},
	} {
		s := &session{c: &CDC{cfg: cfg}, batch: tc.b, lastStart: start, burst: tc.burst}
		if got := s.commitDue().Sub(start); got != tc.want {
			t.Errorf("%s: the next commit %v after the last, want %v", tc.name, got, tc.want)
		}
	}
	// A write interval above the commit interval is the commit interval: a commit writes
	// everything.
	cfg.WriteInterval = time.Second
	s := &session{c: &CDC{cfg: cfg}, batch: batch{events: 1}, lastStart: start}
	if got := s.commitDue().Sub(start); got != 100*time.Millisecond {
		t.Errorf("write interval over the commit interval: the next commit %v after the last, want 100ms", got)
	}
}
