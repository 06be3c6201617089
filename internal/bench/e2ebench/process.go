package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is one running hookstream command, its output going to a log file.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	logFile *os.File
	done    chan struct{} // closed when the process has exited
	err     error         // its exit status, once done is closed
}

// startProcess starts bin with args and env, output appended to logPath. The child gets
// SIGKILL if this program dies without stopping it (Pdeathsig), and its own process group so a
// terminal's Ctrl-C reaches only this program, which then stops its children in order.
func startProcess(name, bin string, args, env []string, logPath string) (*process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("%s: log directory: %w", name, err)
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: start %s: %w", name, bin, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, logFile: f, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// pid is the process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM and waits up to grace for the process to end, then kills it. It returns
// an error when the process had to be killed.
func (p *process) stop(grace time.Duration) error {
	if done, _ := p.exited(); done {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL for 10s", p.name, p.pid())
	}
	return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed (see %s)", p.name, grace, p.logPath)
}

// logTail returns the last lines of the process's log, for error messages.
func (p *process) logTail() string {
	return tailFile(p.logPath, 15)
}

// runToEnd runs a short command (migrate, topics create) to completion within timeout, output
// appended to logPath.
func runToEnd(ctx context.Context, bin string, args, env []string, logPath string, timeout time.Duration) error {
	p, err := startProcess(strings.Join(args, " "), bin, args, env, logPath)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.stop(5 * time.Second)
		return fmt.Errorf("hookstream %s: not done after %s:\n%s", strings.Join(args, " "), timeout, p.logTail())
	case <-ctx.Done():
		_ = p.stop(5 * time.Second)
		return ctx.Err()
	}
	if p.err != nil {
		return fmt.Errorf("hookstream %s: %w:\n%s", strings.Join(args, " "), p.err, p.logTail())
	}
	return nil
}

// stopAll stops every process at once, each with the same grace, and joins what went wrong.
func stopAll(procs []*process, grace time.Duration) error {
	errs := make(chan error, len(procs))
	for _, p := range procs {
		go func() { errs <- p.stop(grace) }()
	}
	var all []error
	for range procs {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// tailFile returns the last n lines of the file at path, indented.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "  (no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + string(bytes.Join(lines, []byte("\n  ")))
}
