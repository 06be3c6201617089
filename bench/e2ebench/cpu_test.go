package main

import (
	"testing"
	"time"
)

// PostgreSQL's kinds add up to PostgreSQL's CPU, and none is negative, when backends come and go
// between the two samples: cdc's walsender replaced by a new one, a connection closed, another
// opened.
func TestPostgresKindsAcrossExitedBackends(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	before := cpuUse{postgres: ms(100 + 400 + 50 + 30), pg: pgSample{own: ms(100), children: map[int]pgChild{
		10: {pgWalsender, ms(400)}, // exits: its 400 and then 20 more land in the postmaster's
		11: {pgHookstream, ms(50)}, // exits after 5 more
		12: {pgPublisher, ms(30)},  // lives on, 70 more
	}}}
	after := cpuUse{postgres: ms(100 + 3 + 420 + 55 + 100 + 8 + 12), pg: pgSample{own: ms(100 + 3 + 420 + 55), children: map[int]pgChild{
		12: {pgPublisher, ms(100)},
		13: {pgWalsender, ms(8)},
		14: {pgHookstream, ms(12)},
	}}}
	d := after.minus(before)
	want := map[string]time.Duration{pgOther: ms(3 + 20 + 5), pgWalsender: ms(8), pgHookstream: ms(12), pgPublisher: ms(70)}
	var sum time.Duration
	for _, k := range pgKinds {
		if d.byKind[k] != want[k] {
			t.Errorf("%s: %v, want %v", k, d.byKind[k], want[k])
		}
		sum += d.byKind[k]
	}
	if sum != d.postgres {
		t.Errorf("the kinds add up to %v, PostgreSQL's CPU is %v", sum, d.postgres)
	}
}
