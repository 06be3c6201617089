package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/localinfra"
)

// infra is the run's own PostgreSQL cluster and Kafka broker: deploy/local/pg.sh and
// deploy/kafka/kafka.sh on private ports with their data under dir, so killing them disturbs
// neither other tests nor the developer's services.
type infra struct {
	repo      string // the checkout, for the scripts and the shared Kafka jars
	dir       string // HOOKSTREAM_DATA_DIR of both scripts
	pgPort    int
	kafkaPort int // and kafkaPort+1 for its controller
	log       io.Writer
}

// scriptTimeout bounds one script call: a broker start on a busy 2-core machine takes ~30 s.
const scriptTimeout = 3 * time.Minute

// newInfra picks free ports for a cluster and a broker whose data live under dir.
func newInfra(repo, dir string, log io.Writer) (*infra, error) {
	pg, err := localinfra.FreePorts(1)
	if err != nil {
		return nil, err
	}
	kafka, err := localinfra.FreePorts(2)
	if err != nil {
		return nil, err
	}
	return &infra{repo: repo, dir: dir, pgPort: pg, kafkaPort: kafka, log: log}, nil
}

// databaseURL is the URL of the cluster's hookstream database.
func (i *infra) databaseURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/hookstream?sslmode=disable", i.pgPort)
}

// brokers is the broker's address.
func (i *infra) brokers() []string { return []string{fmt.Sprintf("127.0.0.1:%d", i.kafkaPort)} }

// script runs one action of deploy/<path> for this run's services, within scriptTimeout, its
// output appended to the infra log.
func (i *infra) script(ctx context.Context, path, action string) error {
	_, err := localinfra.Scripts{
		Repo: i.repo, Dir: i.dir, Log: i.log, Timeout: scriptTimeout,
		Vars: []string{fmt.Sprintf("PG_PORT=%d", i.pgPort), fmt.Sprintf("KAFKA_PORT=%d", i.kafkaPort)},
	}.Run(ctx, path, action)
	return err
}

// up starts the cluster and the broker.
func (i *infra) up(ctx context.Context) error {
	if err := i.startPostgres(ctx); err != nil {
		return err
	}
	return i.startBroker(ctx)
}

// down stops both gracefully; each step is bounded, and both are tried.
func (i *infra) down() error {
	ctx := context.Background()
	return errors.Join(i.script(ctx, "kafka/kafka.sh", "down"), i.script(ctx, "local/pg.sh", "down"))
}

func (i *infra) startPostgres(ctx context.Context) error { return i.script(ctx, "local/pg.sh", "up") }

// crashPostgres stops the cluster with pg_ctl -m immediate: no checkpoint, as a power cut.
func (i *infra) crashPostgres(ctx context.Context) error {
	return i.script(ctx, "local/pg.sh", "crash")
}

func (i *infra) startBroker(ctx context.Context) error { return i.script(ctx, "kafka/kafka.sh", "up") }

// killBroker ends the broker's JVM with SIGKILL and waits (at most 30 s) until it is gone.
func (i *infra) killBroker() error {
	pid, err := i.brokerPID()
	if err != nil {
		return err
	}
	if err := localinfra.Kill(pid); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	return nil
}

// brokerPID reads the broker's pid file and checks that the pid is a Kafka JVM.
func (i *infra) brokerPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(i.dir, "kafka", "kafka.pid"))
	if err != nil {
		return 0, fmt.Errorf("broker pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("broker pid file: %w", err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte("kafka.Kafka")) {
		return 0, fmt.Errorf("broker pid %d is not a running Kafka broker", pid)
	}
	return pid, nil
}
