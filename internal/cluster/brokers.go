package cluster

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

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Nodes is the number of brokers of the cluster.
const Nodes = 3

// scriptTimeout bounds one call of kafka.sh: three JVMs starting on a busy 2-core machine take
// about a minute.
const scriptTimeout = 4 * time.Minute

// Brokers is a running three-node cluster started by deploy/kafka/kafka.sh cluster.
type Brokers struct {
	repo, dir, libs string
	port            int // node n listens on port+2(n-1), its controller on the port after
	log             io.Writer
	guard           io.Closer
}

// Start starts a cluster of Nodes brokers on free loopback ports with its data under dir,
// sharing the broker jars of the checkout at repo (resolved by Maven on first use). log gets
// the script's output. A guard process stops the cluster if this program dies without Stop.
func Start(ctx context.Context, repo, dir string, log io.Writer) (*Brokers, error) {
	port, err := freePorts(2 * Nodes)
	if err != nil {
		return nil, err
	}
	b := &Brokers{repo: repo, dir: dir, libs: kafkaLibs(repo), port: port, log: log}
	if b.guard, err = b.startGuard(); err != nil {
		return nil, err
	}
	if _, err := b.script(ctx, "up"); err != nil {
		_ = b.Stop()
		return nil, err
	}
	return b, nil
}

// kafkaLibs is where `make kafka-up` keeps the broker's jars, as deploy/kafka/kafka.sh does.
func kafkaLibs(repo string) string {
	if d := os.Getenv("HOOKSTREAM_DATA_DIR"); d != "" {
		return filepath.Join(d, "kafka", "libs")
	}
	return filepath.Join(repo, ".data", "kafka", "libs")
}

// freePorts finds a port p on 127.0.0.1 such that p … p+n-1 are free, below the kernel's
// ephemeral range: a killed broker is started again on its ports, which meanwhile no outgoing
// connection can have taken as its source port.
func freePorts(n int) (int, error) {
	for range 100 {
		p := 20000 + rand.IntN(12000-n)
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
	return 0, fmt.Errorf("cluster: no run of %d free ports", n)
}

// Addrs are the brokers' addresses, node 1 first.
func (b *Brokers) Addrs() []string {
	out := make([]string, Nodes)
	for n := 1; n <= Nodes; n++ {
		out[n-1] = fmt.Sprintf("127.0.0.1:%d", b.port+2*(n-1))
	}
	return out
}

// script runs `kafka.sh cluster args...` for this cluster within scriptTimeout and returns its
// standard output; everything it prints also goes to the log.
func (b *Brokers) script(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(b.repo, "deploy", "kafka", "kafka.sh"), "cluster"}, args...)...)
	cmd.Env = b.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	fmt.Fprintf(b.log, "%s kafka.sh cluster %s:\n%s%s", time.Now().Format(time.RFC3339Nano), strings.Join(args, " "), stdout.String(), stderr.String())
	if err != nil {
		return "", fmt.Errorf("kafka.sh cluster %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

func (b *Brokers) env() []string {
	return append(os.Environ(), "HOOKSTREAM_DATA_DIR="+b.dir, fmt.Sprintf("KAFKA_CLUSTER_PORT=%d", b.port), "KAFKA_LIBS="+b.libs)
}

// startGuard starts a shell that waits for its standard input to close (this program ends,
// however it ends: the kernel closes the pipe) and then stops the cluster. The brokers are
// daemons of the script, which Pdeathsig cannot tie to this program.
func (b *Brokers) startGuard() (io.Closer, error) {
	script := filepath.Join(b.repo, "deploy", "kafka", "kafka.sh")
	cmd := exec.Command("bash", "-c", `cat >/dev/null; exec bash "$0" cluster down`, script)
	cmd.Env = b.env()
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("cluster guard: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cluster guard: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return stdin, nil
}

// Stop stops every node (SIGTERM, SIGKILL after 10 s) and the guard.
func (b *Brokers) Stop() error {
	_, err := b.script(context.Background(), "down")
	return errors.Join(err, b.guard.Close())
}

// Kill ends node n's JVM with SIGKILL, as a crash or a lost machine does, and waits (at most
// 30 s) until it is gone.
func (b *Brokers) Kill(n int) error {
	out, err := b.script(context.Background(), "pid", strconv.Itoa(n))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return fmt.Errorf("cluster: pid of node %d: %q", n, out)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("cluster: kill node %d (pid %d): %w", n, pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster: node %d (pid %d) survived SIGKILL for 30 s", n, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
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

// StartNode starts node n again with its data and waits until it answers.
func (b *Brokers) StartNode(ctx context.Context, n int) error {
	_, err := b.script(ctx, "start", strconv.Itoa(n))
	return err
}

// WaitInSync waits (bounded by timeout) until every partition of every topic whose name starts
// with prefix, and of the internal topics, has all Nodes replicas in sync: a node started again
// has caught up, and losing another leaves every partition with min.insync.replicas.
func (b *Brokers) WaitInSync(ctx context.Context, prefix string, timeout time.Duration) error {
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	deadline := time.Now().Add(timeout)
	for {
		behind, err := b.outOfSync(ctx, adm, prefix)
		if err == nil && len(behind) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster: replicas not in sync after %s: %s (%v)", timeout, strings.Join(behind, ", "), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// outOfSync lists the partitions (at most 5) of the watched topics with fewer than Nodes replicas in sync.
func (b *Brokers) outOfSync(ctx context.Context, adm *kadm.Client, prefix string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	details, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, td := range details.Sorted() {
		if !strings.HasPrefix(td.Topic, prefix) && !strings.HasPrefix(td.Topic, "__") {
			continue
		}
		if td.Err != nil {
			return nil, fmt.Errorf("%s: %w", td.Topic, td.Err)
		}
		for _, p := range td.Partitions.Sorted() {
			if len(p.ISR) < Nodes && len(out) < 5 {
				out = append(out, fmt.Sprintf("%s/%d isr %v", td.Topic, p.Partition, p.ISR))
			}
		}
	}
	return out, nil
}

// admin is a Kafka admin client on the cluster; done closes it.
func (b *Brokers) admin() (*kadm.Client, func(), error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...))
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: kafka client: %w", err)
	}
	return kadm.NewClient(cl), cl.Close, nil
}

// Leader returns the node (1 … Nodes) leading partition 0 of topic.
func (b *Brokers) Leader(ctx context.Context, topic string) (int, error) {
	adm, done, err := b.admin()
	if err != nil {
		return 0, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("cluster: leader of %s: %w", topic, err)
	}
	p, ok := details[topic].Partitions[0]
	if !ok || p.Err != nil || p.Leader < 1 {
		return 0, fmt.Errorf("cluster: %s/0 has no leader", topic)
	}
	return int(p.Leader), nil
}

// Coordinator returns the node (1 … Nodes) coordinating consumer group group.
func (b *Brokers) Coordinator(ctx context.Context, group string) (int, error) {
	adm, done, err := b.admin()
	if err != nil {
		return 0, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return 0, fmt.Errorf("cluster: coordinator of %s: %w", group, err)
	}
	d, ok := described[group]
	if !ok || d.Err != nil {
		return 0, fmt.Errorf("cluster: coordinator of %s: %v", group, d.Err)
	}
	return int(d.Coordinator.NodeID), nil
}
