package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	binaryOnce sync.Once
	binaryDir  string
	binaryErr  error
)

// Binary builds the hookstream command once per test process and returns its path, for tests
// that run components as child processes (and kill them with SIGKILL). Call CleanupBinary from
// TestMain to remove it.
func Binary(t testing.TB) string {
	t.Helper()
	binaryOnce.Do(func() {
		root, err := repoRoot()
		if err != nil {
			binaryErr = err
			return
		}
		if binaryDir, err = os.MkdirTemp("", "hookstream-bin-"); err != nil {
			binaryErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binaryDir, "hookstream"), "./cmd/hookstream")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatalf("testenv: %v", binaryErr)
	}
	return filepath.Join(binaryDir, "hookstream")
}

// CleanupBinary removes the binary Binary built, if any.
func CleanupBinary() {
	if binaryDir != "" {
		os.RemoveAll(binaryDir)
	}
}

// Main runs a package's tests and then CleanupBinary: the TestMain of a package whose tests
// start hookstream processes.
func Main(m *testing.M) {
	code := m.Run()
	CleanupBinary()
	os.Exit(code)
}

// Process is a hookstream command running as a child process.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // how it exited, once done is closed
	tail *tailBuffer
}

// StartProcess runs the hookstream binary (see Binary) with args until Kill is called or the
// test ends. Its output goes to the test's stderr with -v, and its last lines are kept for
// LogTail.
func StartProcess(t testing.TB, args ...string) *Process {
	t.Helper()
	return StartProcessEnv(t, nil, args...)
}

// StartProcessEnv is StartProcess with env ("KEY=value") added to the test's environment.
func StartProcessEnv(t testing.TB, env []string, args ...string) *Process {
	t.Helper()
	p := &Process{cmd: exec.Command(Binary(t), args...), done: make(chan struct{}), tail: &tailBuffer{max: 8 << 10}}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	var out io.Writer = p.tail
	if testing.Verbose() {
		out = io.MultiWriter(os.Stderr, p.tail)
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("testenv: start %v: %v", args, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.Kill)
	return p
}

// Kill ends the process with SIGKILL, as a crash or an OOM kill does: nothing is flushed,
// committed or left, and waits until it is gone.
func (p *Process) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Terminate sends SIGTERM, as an orchestrator stopping a pod does, and waits for the process
// to exit. It returns how long that took and an error when the process did not exit with
// status 0 within bound (then it is killed).
func (p *Process) Terminate(bound time.Duration) (time.Duration, error) {
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, fmt.Errorf("testenv: SIGTERM: %w", err)
	}
	select {
	case <-p.done:
		took := time.Since(began)
		if p.err != nil {
			return took, fmt.Errorf("exited after SIGTERM with %v:\n%s", p.err, p.LogTail())
		}
		return took, nil
	case <-time.After(bound):
		p.Kill()
		return time.Since(began), fmt.Errorf("did not exit within %s of SIGTERM (killed):\n%s", bound, p.LogTail())
	}
}

// Pid is the process id, for reading the process's state under /proc.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogTail returns the last few KiB the process wrote, for a failure message.
func (p *Process) LogTail() string { return p.tail.String() }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, b...)
	if over := len(w.b) - w.max; over > 0 {
		w.b = append(w.b[:0], w.b[over:]...)
	}
	return len(b), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
