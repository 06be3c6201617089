package retrytopics_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/retrytopics"
)

// The crash test runs the tier consumers in a child process (this test binary again) so it can
// kill them with SIGKILL: no transaction is finished, no group is left.
const (
	childBrokers  = "RETRYTOPICS_TEST_CHILD_BROKERS"
	childPrefix   = "RETRYTOPICS_TEST_CHILD_PREFIX"
	childInstance = "RETRYTOPICS_TEST_CHILD_INSTANCE"
)

func TestMain(m *testing.M) {
	if brokers := os.Getenv(childBrokers); brokers != "" {
		runChild(brokers, os.Getenv(childPrefix), os.Getenv(childInstance))
		return
	}
	os.Exit(m.Run())
}

// crashConfig is the configuration of the crash test's tier consumers: the compressed tiers and
// a short group session, so a killed member is noticed quickly.
func crashConfig(brokers []string, prefix, instance string) retrytopics.Config {
	cfg := retrytopics.DefaultConfig()
	cfg.Brokers, cfg.Prefix, cfg.InstanceID = brokers, prefix, instance
	cfg.TierDelays = compressedTiers
	cfg.MaxPollWait = 200 * time.Millisecond
	cfg.FetchMaxWait = 100 * time.Millisecond
	cfg.TransactionTimeout = 10 * time.Second
	cfg.RetryInterval = 200 * time.Millisecond
	// kfake can leave a SyncGroup that includes the killed member hanging; franz-go gives up on
	// it after the rebalance timeout (60 s by default) and joins again.
	cfg.KafkaOptions = []kgo.Opt{kgo.SessionTimeout(6 * time.Second), kgo.HeartbeatInterval(500 * time.Millisecond),
		kgo.RebalanceTimeout(10 * time.Second)}
	return cfg
}

func runChild(brokers, prefix, instance string) {
	cfg := crashConfig(strings.Split(brokers, ","), prefix, instance)
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.Registerer = prometheus.NewRegistry()
	ts, err := retrytopics.NewTiers(cfg)
	if err != nil {
		slog.Error("child", "err", err)
		os.Exit(2)
	}
	go func() {
		// Tell the test how many partitions this process owns.
		last := -1
		for range time.Tick(20 * time.Millisecond) {
			n := 0
			for _, s := range ts.Stats() {
				n += s.Assigned
			}
			if n != last {
				fmt.Printf("ASSIGNED %d\n", n)
				last = n
			}
		}
	}()
	_ = ts.Run(context.Background()) // until killed
}

// child is the tier consumers running in a child process.
type child struct {
	cmd      *exec.Cmd
	done     chan struct{}
	assigned atomic.Int64 // partitions the child owns, across tiers
}

// startChild runs the tier consumers in a child process until it is killed.
func startChild(t *testing.T, e *env, instance string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$"), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(),
		childBrokers+"="+strings.Join(e.kafka.Brokers, ","),
		childPrefix+"="+e.kafka.Prefix,
		childInstance+"="+instance)
	c.cmd.Stderr = io.Discard
	if testing.Verbose() {
		c.cmd.Stderr = os.Stderr
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "ASSIGNED "); ok {
				v, _ := strconv.Atoi(n)
				c.assigned.Store(int64(v))
			}
		}
		_ = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(c.kill)
	return c
}

func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// waitOwnsAll waits until the child owns every partition of the tiers: a killed predecessor
// has been expired from the groups. (kfake never expires a member killed between joining and
// syncing; a real broker does, but a kill there would leave the embedded lane stuck.)
func (c *child) waitOwnsAll(t *testing.T) {
	t.Helper()
	want := int64(3 * len(compressedTiers))
	deadline := time.Now().Add(90 * time.Second)
	for c.assigned.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("child owns %d of %d partitions after 90s", c.assigned.Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Killing the tier consumers with SIGKILL mid-hold, possibly inside a release transaction, and
// starting the replica again loses nothing, releases nothing early and nothing twice: the open
// transaction is fenced and aborted, and the commits say what was released.
func TestKillMidHoldLosesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	sched := newScheduler(t, cfg)
	out := e.read(t, e.names.Deliveries)

	const n = 3000
	want := scheduleMix(t, sched, n, 12*time.Second)
	for round := 1; round <= 2; round++ {
		c := startChild(t, e, "replica-0") // the same replica, restarted
		c.waitOwnsAll(t)
		before := out.count()
		deadline := time.Now().Add(60 * time.Second)
		for out.count() < before+300 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		c.kill()
		t.Logf("round %d: killed with %d of %d released", round, out.count(), n)
		if out.count() >= n || out.count() == before {
			t.Fatalf("round %d: killed with %d of %d released: not a kill mid-hold", round, out.count(), n)
		}
	}
	startChild(t, e, "replica-0")
	rs := decodeReleases(t, out.settle(t, n, 2*time.Minute))
	lateness := checkOnceNeverEarly(t, rs, want)
	t.Logf("%s lane: lateness across kills: p50 %s, p99 %s, max %s", e.kafka.Lane,
		percentile(lateness, 50), percentile(lateness, 99), percentile(lateness, 100))
}
