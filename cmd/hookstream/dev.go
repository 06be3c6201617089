package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/embeddedkafka"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/reseller"
)

// devDefaults are dev's own defaults, by variable: text logs, and local receivers (plain HTTP to
// loopback on any unprivileged port).
var devDefaults = map[string]string{
	"HOOKSTREAM_LOG_FORMAT":         "text",
	"HOOKSTREAM_ALLOW_HTTP":         "true",
	"HOOKSTREAM_EGRESS_ALLOW_CIDRS": "127.0.0.0/8,::1/128",
	"HOOKSTREAM_EGRESS_ALLOW_PORTS": "80,443,1024-65535",
}

// runDev is the quick start: embedded Kafka persisted under the data directory, the local
// PostgreSQL migrated, every topic created, cdc tailing the outbox into Kafka, and the admin
// routes on 127.0.0.1:8080, and the reseller reference platform's API on 127.0.0.1:8081.
func runDev(ctx context.Context, args []string, out io.Writer) error {
	s, err := parseSettings("dev", args, out)
	if err != nil {
		return err
	}
	log := s.logger()
	stopTracing, err := s.startTracing(ctx, "dev", log)
	if err != nil {
		return err
	}
	defer stopTracing()
	if s.SecretKey == "" && s.SecretKeys == "" && s.SecretKeysFile == "" {
		if s.SecretKey, err = devSecret(s.DataDir, "dev-secret-key", secretbox.GenerateKey); err != nil {
			return fmt.Errorf("development secret key: %w", err)
		}
	}

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
	pool, err := s.openPool(ctx, "dev")
	if err != nil {
		return fmt.Errorf("postgres pool: %w", err)
	}
	defer pool.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(s.KafkaBrokers...))
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = topics.Ensure(tctx, cl, s.topicConfig())
	cancel()
	if err != nil {
		return err
	}
	log.Info("topics ready", "prefix", s.TopicPrefix)
	if s.AllowHTTP {
		log.Warn("development mode: plain-HTTP webhook URLs are allowed", "allowed_cidrs", s.EgressAllowCIDRs)
	}

	tokenAt := "HOOKSTREAM_ADMIN_TOKEN" // where the operator finds the token, for the banner
	if s.AdminToken == "" {
		tokenAt = filepath.Join(s.DataDir, "dev-admin-token")
		if s.AdminToken, err = devSecret(s.DataDir, "dev-admin-token", randomToken); err != nil {
			return fmt.Errorf("development admin token: %w", err)
		}
		log.Info("operator token: see the file (Authorization: Bearer <token>)", "file", tokenAt)
	}

	reg := newRegistry()
	pipeline, err := cdc.New(s.cdcConfig(log, reg))
	if err != nil {
		return err
	}
	// Export cursors are signed with a key derived from the deployment's secret key, so they
	// survive a restart (docs/reseller.md).
	platform := reseller.New(pool, reseller.Config{Logger: log.With("component", "reseller"),
		CursorKey: reseller.DeriveCursorKey([]byte(s.SecretKey))})
	log.Info("reseller reference platform", "url", "http://"+s.ResellerAddr)
	components := map[string]func(context.Context) error{
		"reseller": func(ctx context.Context) error { return platform.Serve(ctx, s.ResellerAddr) },
		"cdc":      pipeline.Run,
		"banner":   func(ctx context.Context) error { announceDev(ctx, s, tokenAt, out); return nil },
	}
	for name, run := range map[string]componentRun{"fanout": runFanoutWith, "recorder": runRecorderWith, "sender": runSenderWith, "retry": runRetryWith} {
		components[name] = func(ctx context.Context) error { return run(ctx, s, log, reg, pool) }
	}
	err = serveAdmin(ctx, s, log, reg, pool, "", components) // dev serves every metric on its admin address
	log.Info("stopped")
	return err
}

// announceDev prints, once dev answers its readiness probe, where its console and APIs are and
// where the operator token is: the lines a newcomer needs among the log's.
func announceDev(ctx context.Context, s settings, tokenAt string, out io.Writer) {
	base := "http://" + loopbackAddr(s.AdminAddr)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if ctx.Err() != nil {
			return
		}
		if res, err := client.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	fmt.Fprintf(out, "hookstream dev is ready; Ctrl-C stops it.\n"+
		"  console    %s/console/  (sign in with the operator token: %s)\n"+
		"  admin API  %s/v1/  (Authorization: Bearer <the operator token>)\n"+
		"  reseller   http://%s/  (the reference platform's API)\n",
		base, tokenAt, base, loopbackAddr(s.ResellerAddr))
}

// loopbackAddr is addr as this machine reaches it: an unspecified host (":8080", "0.0.0.0:8080")
// becomes 127.0.0.1.
func loopbackAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// randomToken makes a development operator token.
func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "hst_dev_" + hex.EncodeToString(b), nil
}
