package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/admin"
	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/embeddedkafka"
	"github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/internal/topics"
)

// runDev is the quick start: embedded Kafka persisted under the data directory, the local
// PostgreSQL migrated, every topic created, cdc tailing the outbox into Kafka, and the admin
// routes on 127.0.0.1:8080.
func runDev(ctx context.Context, args []string, _ io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	load := registerFlags(fs, map[string]string{"HOOKSTREAM_LOG_FORMAT": "text", "HOOKSTREAM_ALLOW_HTTP": "true"})
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := load()
	if err != nil {
		return err
	}
	log := s.logger()

	kafka, err := embeddedkafka.Start(embeddedkafka.Config{
		Port:       s.DevKafkaPort,
		DataDir:    filepath.Join(s.DataDir, "kafka-dev"),
		Partitions: s.TopicPartitions,
	})
	if err != nil {
		return fmt.Errorf("%w (is another `hookstream dev` running? HOOKSTREAM_DEV_KAFKA_PORT picks another port)", err)
	}
	defer kafka.Close()
	s.KafkaBrokers = kafka.Brokers()
	log.Info("embedded kafka started", "brokers", s.KafkaBrokers, "data_dir", filepath.Join(s.DataDir, "kafka-dev"))

	if err := migrate(ctx, log, s.DatabaseURL); err != nil {
		return fmt.Errorf("%w (is PostgreSQL up? `make pg-up` starts it)", err)
	}
	pool, err := pgxpool.New(ctx, s.DatabaseURL)
	if err != nil {
		return fmt.Errorf("postgres pool: %w", err)
	}
	defer pool.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(s.KafkaBrokers...))
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = topics.Ensure(tctx, adm, s.topicConfig())
	cancel()
	if err != nil {
		return err
	}
	log.Info("topics ready", "prefix", s.TopicPrefix)
	if s.AllowHTTP {
		log.Warn("development mode: plain-HTTP webhook URLs are allowed")
	}

	reg := metrics.NewRegistry()
	handler := admin.Probes(reg,
		admin.Check{Name: "postgres", Ping: pool.Ping},
		admin.Check{Name: "kafka", Ping: cl.Ping},
	)
	ln, err := net.Listen("tcp", s.AdminAddr)
	if err != nil {
		return fmt.Errorf("admin listen %s: %w", s.AdminAddr, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	log.Info("admin API listening", "addr", "http://"+ln.Addr().String())

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	pipeline, err := cdc.New(s.cdcConfig(log, reg))
	if err != nil {
		return err
	}
	g.Go(func() error { return pipeline.Run(gctx) })
	g.Go(func() error { return runFanoutWith(gctx, s, log, reg) })
	g.Go(func() error { return runRecorderWith(gctx, s, log, reg, pool) })
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	err = g.Wait()
	log.Info("stopped")
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
