package fanout_test

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
	"github.com/hookstream/hookstream/fanout"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// env is one test's PostgreSQL database, Kafka and topics.
type env = testenv.Env

// background runs fn until the test ends.
func background(t *testing.T, name string, fn func(ctx context.Context) error) (stop func()) {
	return testenv.Go(t, name, fn)
}

// fanoutBy names who makes the deliveries in a test: fanout for every event (cdc's fan-out
// maximum 0), or cdc for every event of the test (a maximum above any test's endpoint count),
// fanout passing them by (design.md section 5). The matching is one (endpoints.Fan); each
// test of it runs both ways.
type fanoutBy struct {
	name string // the dead letters' source
	max  int    // cdc.Config.FanoutMax
}

var (
	byFanout = fanoutBy{"fanout", 0}
	byCDC    = fanoutBy{"cdc", 100}
)

// bothWays runs test as parallel subtests, fanout and cdc making the deliveries.
func bothWays(t *testing.T, test func(t *testing.T, by fanoutBy)) {
	for _, by := range []fanoutBy{byFanout, byCDC} {
		t.Run(by.name, func(t *testing.T) {
			t.Parallel()
			test(t, by)
		})
	}
}

// startCDC runs cdc, fanning out itself as by says, and waits until it streams, so later
// changes arrive through the WAL. It returns cdc's metrics.
func startCDC(t *testing.T, e *env, by fanoutBy) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	cfg := cdc.DefaultConfig()
	cfg.Base = e.Kafka.Base(t, reg)
	cfg.DatabaseURL, cfg.Slot = e.DB.URL, e.DB.Name
	cfg.FanoutMax = by.max
	c, err := cdc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	background(t, "cdc", c.Run)
	testenv.WaitSlotStreaming(t, e.DB.Pool, e.DB.Name, time.Minute)
	return reg
}

// runningFanout is a running fanout with its metrics.
type runningFanout struct {
	reg  *prometheus.Registry
	stop func()
}

func startFanout(t *testing.T, e *env) *runningFanout {
	t.Helper()
	reg := prometheus.NewRegistry()
	view, err := endpoints.NewView(endpoints.ViewConfig{Brokers: e.Kafka.Brokers, Topic: e.Names.Endpoints, Logger: testenv.Logger(t),
		Registerer: reg, Name: "fanout"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := fanout.DefaultConfig()
	cfg.Base = e.Kafka.Base(t, reg)
	cfg.InstanceID = "test-" + e.DB.Name
	f, err := fanout.New(cfg, view)
	if err != nil {
		t.Fatal(err)
	}
	stopView := background(t, "endpoint view", view.Run)
	stopFanout := background(t, "fanout", f.Run)
	return &runningFanout{reg: reg, stop: func() { stopFanout(); stopView() }}
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

// consume reads topic's committed records (testenv.Kafka.ReadCommitted).
func consume(t *testing.T, e *env, topic string, want int, quiet time.Duration) []*kgo.Record {
	t.Helper()
	return e.Kafka.ReadCommitted(t, topic, want, quiet)
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
