package testenv

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Go runs fn in the background until the returned stop is called or the test ends. stop cancels
// fn's context and waits up to a minute for it to return; an error or a hang fails the test.
func Go(t testing.TB, name string, fn func(ctx context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
			case <-time.After(time.Minute):
				t.Errorf("%s did not stop within a minute", name)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
