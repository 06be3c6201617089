// Command fanoutbench measures the fanout and recorder rooms on real Kafka and PostgreSQL (make
// bench-fanout): delivery records produced per second by fanout at fanout 1 and fanout 10
// (endpoints per event), and attempts recorded per second by the recorder. Inputs are written to Kafka up front,
// so each figure is the rate of draining a backlog; medians over the runs.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/fanout"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/benchenv"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/recorder"
)

func main() {
	dbURL, brokers, runs := benchenv.ServerFlags()
	var (
		events   = flag.Int("events", 20000, "events per fanout measurement")
		attempts = flag.Int("attempts", 50000, "attempts for the recorder measurement")
	)
	flag.Parse()
	bs := strings.Split(*brokers, ",")
	var f1, f10, rec []float64
	for i := 1; i <= *runs; i++ {
		a, err := fanoutRate(bs, *events*5, 1)
		check(err)
		b, err := fanoutRate(bs, *events, 10)
		check(err)
		c, err := recorderRate(*dbURL, bs, *attempts)
		check(err)
		fmt.Printf("run %d: fanout 1 %8.0f deliveries/s   fanout 10 %8.0f deliveries/s   recorder %8.0f attempts/s\n", i, a, b, c)
		f1, f10, rec = append(f1, a), append(f10, b), append(rec, c)
	}
	fmt.Printf("median over %d runs: fanout 1 %.0f deliveries/s, fanout 10 %.0f deliveries/s, recorder %.0f attempts/s\n",
		*runs, benchenv.Median(f1), benchenv.Median(f10), benchenv.Median(rec))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanoutbench:", err)
		os.Exit(1)
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// setup creates the topics under a fresh prefix.
func setup(ctx context.Context, brokers []string) (topics.Names, func(), error) {
	prefix := "bench" + scratch.RandomHex(4)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return topics.Names{}, nil, err
	}
	adm := kadm.NewClient(cl)
	cfg := topics.DefaultConfig()
	cfg.Prefix, cfg.Partitions = prefix, 6
	if _, err := topics.Ensure(ctx, cl, cfg); err != nil {
		cl.Close()
		return topics.Names{}, nil, err
	}
	var names []string
	for _, s := range cfg.Specs() {
		names = append(names, s.Name)
	}
	return topics.For(prefix), func() { _, _ = adm.DeleteTopics(context.Background(), names...); cl.Close() }, nil
}

// fanoutRate writes `perPartner` endpoints for each of 50 partners and `events` events, then
// times fanout draining them.
func fanoutRate(brokers []string, events, perPartner int) (float64, error) {
	ctx := context.Background()
	names, cleanup, err := setup(ctx, brokers)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	const partners = 50
	var recs []*kgo.Record
	for p := 0; p < partners; p++ {
		for i := 0; i < perPartner; i++ {
			e := records.Endpoint{V: records.EndpointVersion, ID: fmt.Sprintf("ep_%d_%d", p, i), PartnerID: fmt.Sprintf("p%d", p),
				URL: "https://x.example", Status: "active", EventTypes: []string{"*"}, SchemaVersion: 1, MaxInFlight: 8, CreatedLSN: 1, LSN: 1}
			b, _ := json.Marshal(e)
			recs = append(recs, &kgo.Record{Topic: names.Endpoints, Partition: 0, Key: []byte(e.ID), Value: b})
		}
	}
	for i := 0; i < events; i++ {
		p := fmt.Sprintf("p%d", i%partners)
		env := outbox.Envelope{EventID: outbox.NewEventID(), Type: "usage.recorded", OccurredAt: time.Now().UTC(), PartnerID: p,
			Subject: outbox.Subject{Type: "usage", ID: strconv.Itoa(i)}, SchemaVersion: 1,
			Data: json.RawMessage(`{"tokens":1234,"model":"m-large","amount":"0.0123","currency":"USD"}`)}
		b, _ := json.Marshal(env)
		recs = append(recs, &kgo.Record{Topic: names.Events, Key: []byte(env.EventID), Value: b,
			Partition: records.EventPartition(p, 6),
			Headers:   []kgo.RecordHeader{{Key: records.HeaderPartnerID, Value: []byte(p)}, {Key: records.HeaderCommitLSN, Value: []byte("0/10")}}})
	}
	if err := produce(ctx, brokers, recs); err != nil {
		return 0, err
	}

	view, err := endpoints.NewView(endpoints.ViewConfig{Brokers: brokers, Topic: names.Endpoints, Logger: quiet})
	if err != nil {
		return 0, err
	}
	reg := prometheus.NewRegistry()
	cfg := fanout.DefaultConfig()
	cfg.Base = component.Base{Brokers: brokers, Prefix: names.Prefix, Logger: quiet, Registerer: reg}
	cfg.InstanceID = "bench"
	f, err := fanout.New(cfg, view)
	if err != nil {
		return 0, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go view.Run(rctx) //nolint:errcheck
	if err := view.CatchUp(ctx); err != nil {
		return 0, err
	}
	began := time.Now()
	go f.Run(rctx) //nolint:errcheck
	want := float64(events * perPartner)
	for counter(reg, "hookstream_fanout_deliveries_produced_total") < want {
		if time.Since(began) > 5*time.Minute {
			return 0, fmt.Errorf("fanout %d: not done after 5 minutes", perPartner)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return want / time.Since(began).Seconds(), nil
}

// produce writes recs in one transaction, as cdc would (the readers read committed).
func produce(ctx context.Context, brokers []string, recs []*kgo.Record) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.TransactionalID("bench-"+scratch.RandomHex(4)),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	var perr error
	for _, r := range recs {
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				perr = err
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	return cl.EndTransaction(ctx, kgo.TryCommit)
}

// recorderRate writes `attempts` attempt records over 100 endpoints and times the recorder.
func recorderRate(server string, brokers []string, attempts int) (float64, error) {
	ctx := context.Background()
	names, cleanup, err := setup(ctx, brokers)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	dbName := "hstbench_" + scratch.RandomHex(6)
	url, err := scratch.MigratedDatabase(ctx, server, dbName)
	if err != nil {
		return 0, err
	}
	defer scratch.DropDatabase(server, dbName) //nolint:errcheck // a leftover database is harmless
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `INSERT INTO partner (id) VALUES ('p1');
		INSERT INTO endpoint (id, partner_id, url) SELECT 'ep_' || i, 'p1', 'https://x.example' FROM generate_series(0, 99) i`); err != nil {
		return 0, err
	}
	var recs []*kgo.Record
	started := time.Now().UTC()
	for i := 0; i < attempts; i++ {
		ev, ep := outbox.NewEventID(), fmt.Sprintf("ep_%d", i%100)
		a := records.Attempt{V: records.AttemptVersion, DeliveryID: records.DeliveryID(ev, ep), EventID: ev, EndpointID: ep,
			PartnerID: "p1", EventType: "usage.recorded", AttemptNo: 1, Trigger: records.TriggerInitial, StartedAt: started,
			Status: 200, LatencyMS: 42, LatencyUS: 42_317, Outcome: records.OutcomeDelivered, ResponseExcerpt: `{"ok":true}`}
		b, _ := json.Marshal(a)
		recs = append(recs, &kgo.Record{Topic: names.Attempts, Key: []byte(a.DeliveryID), Value: b, Partition: int32(i % 6)})
	}
	if err := produce(ctx, brokers, recs); err != nil {
		return 0, err
	}
	reg := prometheus.NewRegistry()
	cfg := recorder.DefaultConfig()
	cfg.Base = component.Base{Brokers: brokers, Prefix: names.Prefix, Logger: quiet, Registerer: reg}
	r, err := recorder.New(cfg, pool)
	if err != nil {
		return 0, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	began := time.Now()
	go r.Run(rctx) //nolint:errcheck
	for counter(reg, "hookstream_recorder_attempts_recorded_total") < float64(attempts) {
		if time.Since(began) > 5*time.Minute {
			return 0, fmt.Errorf("recorder: not done after 5 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return float64(attempts) / time.Since(began).Seconds(), nil
}

func counter(reg *prometheus.Registry, name string) float64 {
	mfs, _ := reg.Gather()
	var v float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				v += m.GetCounter().GetValue()
			}
		}
	}
	return v
}
