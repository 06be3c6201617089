package streams_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/streams"
)

// env is one test's PostgreSQL database, Kafka and topics.
type env = testenv.Env

// background runs fn until the test ends.
func background(t *testing.T, name string, fn func(ctx context.Context) error) (stop func()) {
	return testenv.Go(t, name, fn)
}

// startCDC runs cdc and waits until it streams, so later changes arrive through the WAL.
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

// fanout is a running fanout with its metrics.
type fanout struct {
	reg  *prometheus.Registry
	stop func()
}

func startFanout(t *testing.T, e *env) *fanout {
	t.Helper()
	reg := prometheus.NewRegistry()
	view, err := endpoints.NewView(endpoints.ViewConfig{Brokers: e.Kafka.Brokers, Topic: e.Names.Endpoints, Logger: testenv.Logger(t),
		Registerer: reg, Name: "fanout"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := streams.DefaultFanoutConfig()
	cfg.Base = e.Kafka.Base(t, reg)
	cfg.InstanceID = "test-" + e.DB.Name
	f, err := streams.NewFanout(cfg, view)
	if err != nil {
		t.Fatal(err)
	}
	stopView := background(t, "endpoint view", view.Run)
	stopFanout := background(t, "fanout", f.Run)
	return &fanout{reg: reg, stop: func() { stopFanout(); stopView() }}
}

func sqlExec(t *testing.T, e *env, sql string, args ...any) {
	t.Helper()
	if _, err := e.DB.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// appendEvent commits one event of the catalog type typ, with the catalog's example data, and
// returns its id.
func appendEvent(t *testing.T, e *env, partner, typ string) string {
	t.Helper()
	return appendEventWith(t, e, partner, typ, nil)
}

// consume reads topic from the start (committed records only) until want records arrived, then
// keeps reading for `quiet` to catch extra ones.
func consume(t *testing.T, e *env, topic string, want int, quiet time.Duration) []*kgo.Record {
	t.Helper()
	cl := e.Kafka.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
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

func decodeDeliveries(t *testing.T, recs []*kgo.Record) []records.Delivery {
	t.Helper()
	out := make([]records.Delivery, len(recs))
	for i, r := range recs {
		if err := json.Unmarshal(r.Value, &out[i]); err != nil {
			t.Fatal(err)
		}
		if string(r.Key) != out[i].EndpointID {
			t.Fatalf("delivery keyed %q for endpoint %q", r.Key, out[i].EndpointID)
		}
	}
	return out
}

func pairs(ds []records.Delivery) map[string]int {
	m := map[string]int{}
	for _, d := range ds {
		m[d.EventID+"→"+d.EndpointID]++
	}
	return m
}

func pair(event, endpoint string) string { return fmt.Sprintf("%s→%s", event, endpoint) }
