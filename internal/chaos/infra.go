package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	pg, err := freePort(1)
	if err != nil {
		return nil, err
	}
	kafka, err := freePort(2)
	if err != nil {
		return nil, err
	}
	return &infra{repo: repo, dir: dir, pgPort: pg, kafkaPort: kafka, log: log}, nil
}

// freePort finds a port p on 127.0.0.1 such that p … p+n-1 are free, below the kernel's
// ephemeral range (32768 and up on Linux by default). PostgreSQL and the broker are stopped and
// started again on their ports during the run: an ephemeral port can meanwhile be taken as the
// source port of some client's connection (the restarted service then cannot bind), while a
// port below that range is only ever taken by a listener.
func freePort(n int) (int, error) {
	for range 100 {
		p := 20000 + rand.IntN(12000-n) // [20000, 32000)
		ok := true
		for i := 0; i < n && ok; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+i))
			if ok = err == nil; ok {
				l.Close()
			}
		}
		if ok {
			return p, nil
		}
	}
	return 0, fmt.Errorf("free port: no run of %d free ports", n)
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
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(i.repo, "deploy", path), action)
	cmd.Env = append(os.Environ(),
		"HOOKSTREAM_DATA_DIR="+i.dir,
		fmt.Sprintf("PG_PORT=%d", i.pgPort),
		fmt.Sprintf("KAFKA_PORT=%d", i.kafkaPort),
		"KAFKA_LIBS="+kafkaLibs(i.repo))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	fmt.Fprintf(i.log, "%s %s %s:\n%s", time.Now().Format(time.RFC3339Nano), path, action, out.String())
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", path, action, err, out.String())
	}
	return nil
}

// kafkaLibs is where `make kafka-up` keeps the broker's jars: under HOOKSTREAM_DATA_DIR when it
// is set, as deploy/kafka/kafka.sh does, else under the checkout's .data.
func kafkaLibs(repo string) string {
	if d := os.Getenv("HOOKSTREAM_DATA_DIR"); d != "" {
		return filepath.Join(d, "kafka", "libs")
	}
	return filepath.Join(repo, ".data", "kafka", "libs")
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
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill broker pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("broker pid %d survived SIGKILL for 30 s", pid)
		}
		time.Sleep(50 * time.Millisecond)
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

// alive says whether pid runs and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
