package recorder_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// env is one test's PostgreSQL database, Kafka and topics.
type env = testenv.Env

// background runs fn until the test ends.
func background(t *testing.T, name string, fn func(ctx context.Context) error) (stop func()) {
	return testenv.Go(t, name, fn)
}

// startCDC runs cdc and waits until it streams, so the events the recorder writes through the
// outbox (endpoint.disabled) reach the events topic.
func startCDC(t *testing.T, e *env) {
	t.Helper()
	cfg := cdc.DefaultConfig()
	cfg.Base = e.Kafka.Base(t, nil)
	cfg.DatabaseURL, cfg.Slot = e.DB.URL, e.DB.Name
	c, err := cdc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	background(t, "cdc", c.Run)
	testenv.WaitSlotStreaming(t, e.DB.Pool, e.DB.Name, time.Minute)
}

func sqlExec(t *testing.T, e *env, sql string, args ...any) {
	t.Helper()
	if _, err := e.DB.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// consume reads topic's committed records (testenv.Kafka.ReadCommitted).
func consume(t *testing.T, e *env, topic string, want int, quiet time.Duration) []*kgo.Record {
	t.Helper()
	return e.Kafka.ReadCommitted(t, topic, want, quiet)
}
