package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/testkit/localinfra"
)

// Nodes is the number of brokers of the cluster.
const Nodes = 3

// scriptTimeout bounds one call of kafka.sh: three JVMs starting on a busy 2-core machine take
// about a minute.
const scriptTimeout = 4 * time.Minute

// Brokers is a running three-node cluster started by deploy/kafka/kafka.sh cluster.
type Brokers struct {
	scripts localinfra.Scripts
	port    int // node n listens on port+2(n-1), its controller on the port after
	guard   io.Closer
}

// Start starts a cluster of Nodes brokers on free loopback ports with its data under dir,
// sharing the broker jars of the checkout at repo (resolved by Maven on first use). log gets
// the script's output. A guard process stops the cluster if this program dies without Stop.
func Start(ctx context.Context, repo, dir string, log io.Writer) (*Brokers, error) {
	port, err := localinfra.FreePorts(2 * Nodes)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	b := &Brokers{port: port, scripts: localinfra.Scripts{Repo: repo, Dir: dir, Log: log, Timeout: scriptTimeout,
		Vars: []string{fmt.Sprintf("KAFKA_CLUSTER_PORT=%d", port)}}}
	if b.guard, err = b.startGuard(); err != nil {
		return nil, err
	}
	if _, err := b.script(ctx, "up"); err != nil {
		_ = b.Stop()
		return nil, err
	}
	return b, nil
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
	out, err := b.scripts.Run(ctx, "kafka/kafka.sh", append([]string{"cluster"}, args...)...)
	if err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	return out, nil
}

// startGuard starts a shell that waits for its standard input to close and then stops the
// cluster.
func (b *Brokers) startGuard() (io.Closer, error) {
	cmd := exec.Command("bash", "-c", `cat >/dev/null; exec bash "$0" cluster down`, b.scripts.Path("kafka/kafka.sh"))
	cmd.Env = b.scripts.Env()
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	guard, err := localinfra.StartGuard(cmd)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	return guard, nil
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
	if err := localinfra.Kill(pid); err != nil {
		return fmt.Errorf("cluster: node %d: %w", n, err)
	}
	return nil
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

// ask calls query with an admin client on the cluster and ctx bounded to 10 s.
func (b *Brokers) ask(ctx context.Context, query func(context.Context, *kadm.Client) error) error {
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return query(ctx, adm)
}

// Leader returns the node (1 … Nodes) leading partition 0 of topic.
func (b *Brokers) Leader(ctx context.Context, topic string) (int, error) {
	var leader int
	err := b.ask(ctx, func(ctx context.Context, adm *kadm.Client) error {
		details, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return fmt.Errorf("cluster: leader of %s: %w", topic, err)
		}
		p, ok := details[topic].Partitions[0]
		if !ok || p.Err != nil || p.Leader < 1 {
			return fmt.Errorf("cluster: %s/0 has no leader", topic)
		}
		leader = int(p.Leader)
		return nil
	})
	return leader, err
}

// Coordinator returns the node (1 … Nodes) coordinating consumer group group.
func (b *Brokers) Coordinator(ctx context.Context, group string) (int, error) {
	var node int
	err := b.ask(ctx, func(ctx context.Context, adm *kadm.Client) error {
		described, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return fmt.Errorf("cluster: coordinator of %s: %w", group, err)
		}
		d, ok := described[group]
		if !ok || d.Err != nil {
			return fmt.Errorf("cluster: coordinator of %s: %v", group, d.Err)
		}
		node = int(d.Coordinator.NodeID)
		return nil
	})
	return node, err
}
