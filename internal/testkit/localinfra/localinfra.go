package localinfra

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FreePorts finds a port p on 127.0.0.1 such that p … p+n-1 are free, below the kernel's
// ephemeral range (32768 and up on Linux by default), and never hands out a port it handed out
// before in this process. The services are stopped and started again on their ports: an
// ephemeral port can meanwhile be taken as the source port of some client's connection (the
// restarted service then cannot bind), while a port below that range is only ever taken by a
// listener. And a port is free only until its service binds it: two calls made before either
// service started could otherwise return the same port (a make chaos run once gave PostgreSQL
// the port of the broker's controller).
func FreePorts(n int) (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		p := 20000 + rand.IntN(12000-n) // [20000, 32000)
		ok := true
		for i := 0; i < n && ok; i++ {
			if handedOut.ports[p+i] {
				ok = false
				break
			}
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+i))
			if ok = err == nil; ok {
				l.Close()
			}
		}
		if ok {
			for i := range n {
				handedOut.ports[p+i] = true
			}
			return p, nil
		}
	}
	return 0, fmt.Errorf("localinfra: no run of %d free ports", n)
}

// handedOut holds the ports FreePorts returned in this process.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// KafkaLibs is where `make kafka-up` keeps the broker's jars: under HOOKSTREAM_DATA_DIR when it
// is set, as deploy/kafka/kafka.sh does, else under the checkout's .data. Runs share them rather
// than resolve them again with Maven.
func KafkaLibs(repo string) string {
	if d := os.Getenv("HOOKSTREAM_DATA_DIR"); d != "" {
		return filepath.Join(d, "kafka", "libs")
	}
	return filepath.Join(repo, ".data", "kafka", "libs")
}

// Scripts runs the deploy scripts of a checkout for one set of services.
type Scripts struct {
	Repo    string        // the checkout, for deploy/ and the shared broker jars
	Dir     string        // HOOKSTREAM_DATA_DIR of the scripts: the services' data
	Vars    []string      // more of the scripts' variables (PG_PORT=…, KAFKA_PORT=…)
	Log     io.Writer     // gets everything the scripts print
	Timeout time.Duration // bounds one call
}

// Path is the path of deploy/<script> in the checkout.
func (s Scripts) Path(script string) string { return filepath.Join(s.Repo, "deploy", script) }

// Env is the environment of a script call: this process's, with the scripts' variables.
func (s Scripts) Env() []string {
	env := append(os.Environ(), "HOOKSTREAM_DATA_DIR="+s.Dir, "KAFKA_LIBS="+KafkaLibs(s.Repo))
	return append(env, s.Vars...)
}

// Run runs `deploy/<script> args...` within s.Timeout and returns its standard output; the log
// gets its standard output and then its standard error, under a timestamped line naming the call.
func (s Scripts) Run(ctx context.Context, script string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{s.Path(script)}, args...)...)
	cmd.Env = s.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	call := strings.Join(append([]string{script}, args...), " ")
	fmt.Fprintf(s.Log, "%s %s:\n%s%s", time.Now().Format(time.RFC3339Nano), call, stdout.String(), stderr.String())
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s%s", call, err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// Kill ends pid with SIGKILL, as a crash or a lost machine does, and waits (at most 30 s) until
// it is gone.
func Kill(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d survived SIGKILL for 30 s", pid)
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

// StartGuard starts cmd as the guard of services that are daemons of their scripts, which
// Pdeathsig cannot tie to this program: cmd must wait for its standard input to close (this
// program closes the returned writer, or ends however it ends: the kernel closes the pipe) and
// then stop them. It runs in a process group of its own, so a terminal's Ctrl-C is this
// program's to handle, not the guard's.
func StartGuard(cmd *exec.Cmd) (io.Closer, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return stdin, nil
}
