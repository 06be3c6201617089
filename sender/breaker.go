package sender

import (
	"math/bits"
	"time"

	"github.com/hookstream/hookstream/internal/records"
)

type circuitState int

const (
	circuitClosed circuitState = iota
	circuitOpen
	circuitHalfOpen
)

// breaker is an endpoint's circuit (R21): a run of `threshold` consecutive failed attempts
// opens it, provided at least half of the endpoint's last 64 results (fewer when it has made
// fewer) are failures too. A run alone is not enough at volume: an endpoint that fails one
// request in five still fails five in a row every few thousand requests, and opening on that
// turned a mostly healthy endpoint's backlog into pulses of the cooldown. While open, new work is deferred without counting an attempt; after `cooldown` it
// half-opens and lets a single probe through, whose success closes it and whose failure opens
// it for another cooldown. Results of requests begun before the circuit opened are ignored,
// so a burst of in-flight failures opens it once. The caller serialises access (lane.mu).
type breaker struct {
	threshold int
	cooldown  time.Duration

	state     circuitState
	recent    uint64 // the last results, a bit each, 1 = failure, newest lowest
	seen      int    // how many of recent's bits hold results (at most recentSize)
	openUntil time.Time
	probing   bool
	// onChange reports transitions into and out of the closed state (the open-circuits gauge).
	onChange func(open bool)
}

// rejects reports whether new work should be deferred at intake: the circuit is open and its
// cooldown has not ended. A half-open circuit takes work; acquire then picks the probe.
func (b *breaker) rejects(now time.Time) bool {
	return b.state == circuitOpen && now.Before(b.openUntil)
}

// acquire asks to make a request now. probe is true for the single request of a half-open
// circuit; its result must be reported with probe set (or released with release).
func (b *breaker) acquire(now time.Time) (ok, probe bool) {
	switch b.state {
	case circuitClosed:
		return true, false
	case circuitOpen:
		if now.Before(b.openUntil) {
			return false, false
		}
		b.state = circuitHalfOpen
	}
	if b.probing {
		return false, false
	}
	b.probing = true
	return true, true
}

// release gives back a probe that made no request (its work was abandoned or refused).
func (b *breaker) release(probe bool) {
	if probe {
		b.probing = false
	}
}

// record reports the result of a request.
func (b *breaker) record(success, probe bool, now time.Time) {
	if probe {
		b.probing = false
		if success {
			b.close()
		} else {
			b.open(now)
		}
		return
	}
	if b.state != circuitClosed {
		return
	}
	b.recent <<= 1
	b.seen = min(b.seen+1, recentSize)
	if success {
		return
	}
	b.recent |= 1
	run := bits.TrailingZeros64(^b.recent) // the newest results that are all failures
	if run >= b.threshold && 2*bits.OnesCount64(b.recent) >= b.seen {
		b.open(now)
	}
}

// recentSize is how many of the latest results the failure share is taken over; it also bounds
// the threshold (Config.BreakerFailures).
const recentSize = 64

func (b *breaker) open(now time.Time) {
	wasClosed := b.state == circuitClosed
	b.state, b.openUntil = circuitOpen, now.Add(b.cooldown)
	if wasClosed && b.onChange != nil {
		b.onChange(true)
	}
}

func (b *breaker) close() {
	wasClosed := b.state == circuitClosed
	b.state, b.recent, b.seen = circuitClosed, 0, 0
	if !wasClosed && b.onChange != nil {
		b.onChange(false)
	}
}

// remaining is how long the circuit stays open, at least a second: the delay for deferred work.
func (b *breaker) remaining(now time.Time) time.Duration {
	d := b.openUntil.Sub(now)
	if d < time.Second {
		d = time.Second
	}
	return d
}

// quiet reports a closed circuit with no failures in its current run: nothing worth keeping.
func (b *breaker) quiet() bool {
	return b.state == circuitClosed && b.recent&1 == 0 && !b.probing
}

// report is the circuit as an attempt record states it: its state and, while open, when it lets
// its next probe through.
func (b *breaker) report() (state string, probeAt *time.Time) {
	switch b.state {
	case circuitOpen:
		t := b.openUntil.UTC()
		return records.CircuitOpen, &t
	case circuitHalfOpen:
		return records.CircuitHalfOpen, nil
	}
	return records.CircuitClosed, nil
}
