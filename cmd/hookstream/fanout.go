package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/fanout"
	"github.com/hookstream/hookstream/internal/kafkalag"
	"github.com/hookstream/hookstream/internal/kafkatxn"
	"github.com/hookstream/hookstream/internal/topics"
)

// runFanout is `hookstream fanout`: events → deliveries, in a consumer group.
func runFanout(ctx context.Context, args []string, out io.Writer) error {
	return runComponent(ctx, "fanout", args, out, false, runFanoutWith)
}

// runFanoutWith runs an endpoint view and fanout over it until ctx ends; it takes no pool.
func runFanoutWith(ctx context.Context, s settings, log *slog.Logger, reg prometheus.Registerer, _ *pgxpool.Pool) error {
	view, err := endpoints.NewView(endpoints.ViewConfig{Brokers: s.KafkaBrokers, KafkaOptions: s.kafkaOpts,
		Topic: topics.For(s.TopicPrefix).Endpoints, Logger: log, Registerer: reg, Name: "fanout"})
	if err != nil {
		return err
	}
	cfg := fanout.DefaultConfig()
	cfg.Base = s.base(log, reg)
	cfg.TracerProvider = s.tracer
	if s.InstanceID != "" {
		cfg.InstanceID = s.InstanceID
	}
	f, err := fanout.New(cfg, view)
	if err != nil {
		return err
	}
	repair, err := newTxnRepairer(s, log, reg)
	if err != nil {
		return err
	}
	defer repair.close()
	lag, err := lagMonitor(s, log, reg, kafkalag.Consumption{Group: f.Group(), Topic: topics.For(s.TopicPrefix).Events})
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return view.Run(gctx) })
	g.Go(func() error { return f.Run(gctx) })
	g.Go(func() error { return lag(gctx) })
	g.Go(func() error { repair.Run(gctx, txnCheckInterval); return nil })
	return g.Wait()
}

// txnCheckInterval is how often fanout looks for hanging Kafka transactions.
const txnCheckInterval = 10 * time.Second

// txnRepairer is the hanging-transaction repairer every fanout runs beside its work (package
// kafkatxn): a broker that lost a transaction's markers would otherwise stop the installation's
// readers at that partition for ever. Completing one twice is harmless, so every replica runs it.
type txnRepairer struct {
	*kafkatxn.Repairer
	close func()
}

func newTxnRepairer(s settings, log *slog.Logger, reg prometheus.Registerer) (*txnRepairer, error) {
	cl, err := kgo.NewClient(s.base(log, reg).ClientOptions(log.With("component", "kafkatxn"))...)
	if err != nil {
		return nil, fmt.Errorf("hanging transactions: kafka client: %w", err)
	}
	r, err := kafkatxn.NewRepairer(kadm.NewClient(cl), s.TopicPrefix, kafkatxn.DefaultStuckAfter, log, reg)
	if err != nil {
		cl.Close()
		return nil, err
	}
	return &txnRepairer{Repairer: r, close: cl.Close}, nil
}
