package harness

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

// Process is one running hookstream command, its output going to a log file.
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	err     error         // its exit status, once done is closed
}

// StartProcess starts bin with args and env, output appended to logPath. The child gets
// SIGKILL if this program dies without stopping it (Pdeathsig), and its own process group so a
// terminal's Ctrl-C reaches only this program, which then stops its children in order.
func StartProcess(name, bin string, args, env []string, logPath string) (*Process, error) {
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
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM and waits up to grace for the process to end, then kills it. It returns
// an error when the process had to be killed.
func (p *Process) Stop(grace time.Duration) error {
	if done, _ := p.Exited(); done {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if err := p.Kill(); err != nil {
		return err
	}
	return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed (see %s)", p.Name, grace, p.LogPath)
}

// Kill ends the process with SIGKILL, as a crash or an OOM kill does, and waits (at most 10 s)
// until it is gone.
func (p *Process) Kill() error {
	if done, _ := p.Exited(); done {
		return nil
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL for 10s", p.Name, p.PID())
	}
}

// Dump asks the process for a dump of its goroutines (SIGQUIT: the Go runtime writes every
// goroutine's stack to the log and exits) and waits (at most 10 s) until it is gone. It is
// how a test or the chaos run shows where a process that stopped making progress was waiting.
func (p *Process) Dump() error {
	if done, _ := p.Exited(); done {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return p.Kill()
	}
}

// LogTail returns the last lines of the process's log, for error messages.
func (p *Process) LogTail() string {
	return TailFile(p.LogPath, 15)
}

// RunToEnd runs a short command (migrate, topics create) to completion within timeout, output
// appended to logPath.
func RunToEnd(ctx context.Context, bin string, args, env []string, logPath string, timeout time.Duration) error {
	p, err := StartProcess(strings.Join(args, " "), bin, args, env, logPath)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.Stop(5 * time.Second)
		return fmt.Errorf("hookstream %s: not done after %s:\n%s", strings.Join(args, " "), timeout, p.LogTail())
	case <-ctx.Done():
		_ = p.Stop(5 * time.Second)
		return ctx.Err()
	}
	if p.err != nil {
		return fmt.Errorf("hookstream %s: %w:\n%s", strings.Join(args, " "), p.err, p.LogTail())
	}
	return nil
}

// StopAll stops every process at once, each with the same grace, and joins what went wrong.
func StopAll(procs []*Process, grace time.Duration) error {
	errs := make(chan error, len(procs))
	for _, p := range procs {
		go func() { errs <- p.Stop(grace) }()
	}
	var all []error
	for range procs {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// TailFile returns the last n lines of the file at path, indented.
func TailFile(path string, n int) string {
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
