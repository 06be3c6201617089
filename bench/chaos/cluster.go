package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/localinfra"
)

// kinds are the long-running commands, in start order; each runs twice but admin.
var kinds = []string{"admin", "cdc", "fanout", "sender", "retry", "recorder"}

// instance is one replica of a component under supervision: restarted after every exit, with
// its own HOOKSTREAM_INSTANCE_ID and probe address kept across restarts (a restarted replica
// takes its place back, as a pod would).
type instance struct {
	kind, id string
	probe    string // http://127.0.0.1:port: /readyz and /metrics
	env      []string
	bin, log string

	mu      sync.Mutex
	proc    *harness.Process
	retired bool // stopped for good: not restarted
	killed  bool // the current process was killed by the controller
	exits   []exit
	started int
}

// errRetired refuses to start a retired instance.
var errRetired = errors.New("retired")

// exit is an end of a process the controller did not cause.
type exit struct {
	at     time.Time
	status string
	tail   string
}

// cluster is every instance of the run.
type cluster struct {
	instances []*instance
	restart   time.Duration // pause before a killed replica is started again
	wg        sync.WaitGroup
}

// newCluster prepares the instances of every kind on the shared variables vars.
func newCluster(bin, logDir string, vars map[string]string, adminAddr string, restart time.Duration) (*cluster, error) {
	c := &cluster{restart: restart}
	for _, kind := range kinds {
		replicas := 2
		if kind == "admin" {
			replicas = 1
		}
		for n := 1; n <= replicas; n++ {
			in, err := newInstance(bin, logDir, kind, n, vars, adminAddr)
			if err != nil {
				return nil, err
			}
			c.instances = append(c.instances, in)
		}
	}
	return c, nil
}

func newInstance(bin, logDir, kind string, n int, vars map[string]string, adminAddr string) (*instance, error) {
	in := &instance{kind: kind, id: fmt.Sprintf("%s-%d", kind, n), bin: bin}
	in.log = filepath.Join(logDir, in.id+".log")
	own := map[string]string{"HOOKSTREAM_INSTANCE_ID": in.id}
	for k, v := range vars {
		own[k] = v
	}
	if kind == "admin" {
		in.probe = "http://" + adminAddr // the admin command serves its probes beside the API
		own["HOOKSTREAM_METRICS_ADDR"] = ""
	} else {
		port, err := localinfra.FreePorts(1)
		if err != nil {
			return nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		in.probe = "http://" + addr
		own["HOOKSTREAM_METRICS_ADDR"] = addr
	}
	in.env = harness.Environ(own)
	return in, nil
}

// start starts every instance under supervision until ctx ends, then waits (bounded by
// timeout) until each is ready.
func (c *cluster) start(ctx context.Context, timeout time.Duration) error {
	for _, in := range c.instances {
		if err := in.launch(); err != nil {
			return err
		}
		c.wg.Add(1)
		go func() { defer c.wg.Done(); in.supervise(ctx, c.restart) }()
	}
	for _, in := range c.instances {
		if err := in.waitReady(ctx, timeout); err != nil {
			return err
		}
	}
	return nil
}

// launch starts the instance's process, marking the start in its log.
func (in *instance) launch() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.retired {
		return errRetired
	}
	in.started++
	if f, err := os.OpenFile(in.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		fmt.Fprintf(f, "=== chaos: start %d of %s at %s\n", in.started, in.id, time.Now().Format(time.RFC3339Nano))
		f.Close()
	}
	p, err := harness.StartProcess(in.id, in.bin, []string{in.kind}, in.env, in.log)
	if err != nil {
		return err
	}
	in.proc, in.killed = p, false
	return nil
}

// supervise restarts the instance after every exit until ctx ends: after restart when the
// controller killed it, after a backoff (1 s doubling to 10 s) when it exited by itself.
func (in *instance) supervise(ctx context.Context, restart time.Duration) {
	backoff := time.Second
	for {
		in.mu.Lock()
		p := in.proc
		in.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-p.Done():
		}
		in.mu.Lock()
		killed, retired := in.killed, in.retired
		if retired {
			in.mu.Unlock()
			return
		}
		if !killed {
			_, err := p.Exited()
			in.exits = append(in.exits, exit{at: time.Now(), status: fmt.Sprint(err), tail: p.LogTail()})
		}
		in.mu.Unlock()
		wait := restart
		if !killed {
			wait, backoff = backoff, min(2*backoff, 10*time.Second)
		}
		if harness.Sleep(ctx, wait) != nil {
			return
		}
		for err := in.launch(); err != nil; err = in.launch() {
			if errors.Is(err, errRetired) || harness.Sleep(ctx, time.Second) != nil {
				return // retired, or ctx ended; otherwise a fork failure: try again
			}
		}
	}
}

// kill ends the instance's process with SIGKILL; its supervisor starts it again.
func (in *instance) kill() error {
	in.mu.Lock()
	p := in.proc
	in.killed = true
	in.mu.Unlock()
	return p.Kill()
}

// waitReady waits (bounded) until the instance's /readyz answers 200.
func (in *instance) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(in.probe + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			in.mu.Lock()
			tail := in.proc.LogTail()
			in.mu.Unlock()
			return fmt.Errorf("%s not ready after %s (%v):\n%s", in.id, timeout, err, tail)
		}
		if err := harness.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// stop ends supervision (ctx of start must be done) and stops every process, SIGTERM then
// SIGKILL after grace.
func (c *cluster) stop(grace time.Duration) error {
	c.wg.Wait()
	var procs []*harness.Process
	for _, in := range c.instances {
		in.mu.Lock()
		procs = append(procs, in.proc)
		in.mu.Unlock()
	}
	return harness.StopAll(procs, grace)
}

// retire stops every replica of kind for good (SIGTERM, SIGKILL after grace): its supervisor
// no longer restarts it.
func (c *cluster) retire(kind string, grace time.Duration) error {
	var procs []*harness.Process
	for _, in := range c.ofKind(kind) {
		in.mu.Lock()
		in.retired = true
		procs = append(procs, in.proc)
		in.mu.Unlock()
	}
	return harness.StopAll(procs, grace)
}

// dump takes a goroutine dump of every live replica of kinds into its log (the process exits
// and its supervisor starts it again, as after a kill). It returns the logs that hold a dump.
func (c *cluster) dump(kinds ...string) []string {
	var logs []string
	for _, kind := range kinds {
		for _, in := range c.ofKind(kind) {
			in.mu.Lock()
			p := in.proc
			in.killed = true // not an unplanned exit
			in.mu.Unlock()
			if done, _ := p.Exited(); !done && p.Dump() == nil {
				logs = append(logs, in.log)
			}
		}
	}
	return logs
}

// metricsURLs are every instance's /metrics.
func (c *cluster) metricsURLs() []string {
	var out []string
	for _, in := range c.instances {
		out = append(out, in.probe+"/metrics")
	}
	return out
}

// ofKind returns the instances of kind.
func (c *cluster) ofKind(kind string) []*instance {
	var out []*instance
	for _, in := range c.instances {
		if in.kind == kind {
			out = append(out, in)
		}
	}
	return out
}

// pick returns a random instance of kind.
func (c *cluster) pick(rng *rand.Rand, kind string) *instance {
	all := c.ofKind(kind)
	return all[rng.IntN(len(all))]
}

// exits returns every instance's unplanned exits, by instance id.
func (c *cluster) exits() map[string][]exit {
	out := map[string][]exit{}
	for _, in := range c.instances {
		in.mu.Lock()
		if len(in.exits) > 0 {
			out[in.id] = append([]exit(nil), in.exits...)
		}
		in.mu.Unlock()
	}
	return out
}
