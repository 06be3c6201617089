package replay

import (
	"context"
	"sync"

	"golang.org/x/time/rate"
)

// pacers hold each partner's bulk replays in this process to Config.RatePerSec deliveries a
// second, all its jobs together: a token bucket per partner whose burst is one second of the
// rate, waited on before a step produces its deliveries. A step takes at most one second of
// tokens (stepSize), so a job waits at most about a second per job of the partner running
// here, well inside its lease.
type pacers struct {
	rate      int // 0: no limit
	mu        sync.Mutex
	byPartner map[string]*rate.Limiter
}

// wait blocks until partner pid may replay n more deliveries, or ctx ends.
func (p *pacers) wait(ctx context.Context, pid string, n int) error {
	if p.rate == 0 || n == 0 {
		return nil
	}
	p.mu.Lock()
	l, ok := p.byPartner[pid]
	if !ok {
		l = rate.NewLimiter(rate.Limit(p.rate), p.rate)
		p.byPartner[pid] = l
	}
	p.mu.Unlock()
	return l.WaitN(ctx, min(n, p.rate))
}

// stepSize is how many deliveries one step of a job replays: the configured batch, and at
// most one second of the partner's rate.
func (e *Engine) stepSize() int {
	if r := e.cfg.RatePerSec; r > 0 {
		return min(e.cfg.Batch, r)
	}
	return e.cfg.Batch
}
