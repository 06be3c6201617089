package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ReadCommitted reads topic from the start (committed records only) until want records arrived,
// then keeps reading for quiet to catch extra ones; it fails t when two minutes pass with fewer.
func (k *Kafka) ReadCommitted(t testing.TB, topic string, want int, quiet time.Duration) []*kgo.Record {
	t.Helper()
	cl := k.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	defer cl.Close()
	var out []*kgo.Record
	deadline := time.Now().Add(2 * time.Minute)
	var quietUntil time.Time
	for {
		now := time.Now()
		if len(out) >= want && quietUntil.IsZero() {
			quietUntil = now.Add(quiet)
		}
		if !quietUntil.IsZero() && now.After(quietUntil) {
			return out
		}
		if now.After(deadline) {
			t.Fatalf("%s: %d records after 2 minutes, want %d", topic, len(out), want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
}
