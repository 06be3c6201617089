package cdc

import (
	"testing"
	"time"
)

// A steady stream keeps the commit interval between the starts of cdc's transactions; from
// burstRate records a second the wait doubles, and drops back as soon as the stream slows
// (the rate is judged on the last transaction alone, so a burst leaves no trace).
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
		if got := commitWait(interval, tc.records, tc.since); got != tc.want {
			t.Errorf("%s: %d records in %v: wait %v, want %v", tc.name, tc.records, tc.since, got, tc.want)
		}
	}
}
