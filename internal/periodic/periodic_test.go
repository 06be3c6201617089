package periodic_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/periodic"
)

// calls runs loop until work has been called n times and reports whether the first call came
// before the first interval ended.
func calls(t *testing.T, loop func(context.Context, time.Duration, func(context.Context)), n int) (early bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const interval = 200 * time.Millisecond
	start, count := time.Now(), 0
	loop(ctx, interval, func(context.Context) {
		if count == 0 {
			early = time.Since(start) < interval
		}
		if count++; count == n {
			cancel()
		}
	})
	if count != n {
		t.Fatalf("work ran %d times before the context ended, want %d", count, n)
	}
	return early
}

func TestEveryWaitsAnInterval(t *testing.T) {
	if calls(t, periodic.Every, 3) {
		t.Fatal("Every ran the work before the first interval ended")
	}
}

func TestNowAndEveryStartsAtOnce(t *testing.T) {
	if !calls(t, periodic.NowAndEvery, 3) {
		t.Fatal("NowAndEvery did not run the work at once")
	}
}
