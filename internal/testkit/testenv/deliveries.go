package testenv

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// ReadDeliveries reads the deliveries topic from the start until want records arrived, then a
// little longer to catch extras, and fails t when timeout passes with fewer. A record that is not
// a delivery keyed by its endpoint fails t too (and still counts).
func (k *Kafka) ReadDeliveries(t testing.TB, topic string, want int, timeout time.Duration) []records.Delivery {
	t.Helper()
	cl := k.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	var out []records.Delivery
	deadline := time.Now().Add(timeout)
	quietUntil := time.Time{}
	for {
		if len(out) >= want {
			if quietUntil.IsZero() {
				quietUntil = time.Now().Add(500 * time.Millisecond)
			}
			if time.Now().After(quietUntil) {
				return out
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d records after %s, want %d", topic, len(out), timeout, want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			var d records.Delivery
			if err := json.Unmarshal(r.Value, &d); err != nil {
				t.Errorf("delivery record: %v", err)
			}
			if string(r.Key) != d.EndpointID {
				t.Errorf("delivery record keyed %q, endpoint %q", r.Key, d.EndpointID)
			}
			out = append(out, d)
		})
	}
}
