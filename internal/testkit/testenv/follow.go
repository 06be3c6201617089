package testenv

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Follow reads topic from its start in the background until the test ends, and hands each
// poll's fetches to each. opts are added to the client's (isolation level, fetch wait, ...).
// each runs on the reader's goroutine: what it records needs a lock.
func (k *Kafka) Follow(t testing.TB, topic string, each func(kgo.Fetches), opts ...kgo.Opt) {
	t.Helper()
	cl := k.Client(t, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			each(cl.PollFetches(ctx))
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}
