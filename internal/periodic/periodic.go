// Package periodic runs a piece of work at a fixed interval until its context ends: the loop
// behind commits, checks, sweeps and gauges that components refresh on a timer. The work runs
// on the caller's goroutine, one call at a time; a call that takes longer than the interval
// delays the next instead of overlapping it.
package periodic

import (
	"context"
	"time"
)

// Every calls work every interval, the first time one interval from now, until ctx ends.
func Every(ctx context.Context, interval time.Duration, work func(context.Context)) {
	run(ctx, interval, false, work)
}

// NowAndEvery calls work at once and then every interval until ctx ends.
func NowAndEvery(ctx context.Context, interval time.Duration, work func(context.Context)) {
	run(ctx, interval, true, work)
}

func run(ctx context.Context, interval time.Duration, now bool, work func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	if now {
		work(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		work(ctx)
	}
}
