package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/hookstream/hookstream/internal/testkit/localinfra"
)

// The broker and the cluster are daemons of their scripts, so Pdeathsig cannot tie them to this
// program. A guard can: a copy of this program started with -guard, which waits for its stdin
// to close (this program exits, however it dies: the kernel closes the pipe) and then stops
// whatever of the run's services still runs. After a clean run it finds nothing to stop.

// startGuard starts the guard of inf; closing the returned writer (or dying) triggers it.
func startGuard(inf *infra) (io.Closer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	cmd := exec.Command(self, "-guard", "-repo", inf.repo, "-dir", inf.dir,
		"-guard-pg-port", fmt.Sprint(inf.pgPort), "-guard-kafka-port", fmt.Sprint(inf.kafkaPort))
	cmd.Stdout, cmd.Stderr = inf.log, inf.log
	return localinfra.StartGuard(cmd)
}

// guard is the body of -guard: wait for stdin to close, then kill the broker and stop the
// cluster at once.
func guard(inf *infra) int {
	_, _ = io.Copy(io.Discard, os.Stdin)
	if _, err := inf.brokerPID(); err == nil {
		if err := inf.killBroker(); err != nil {
			fmt.Fprintln(os.Stderr, "chaos guard:", err)
		}
	}
	if err := inf.crashPostgres(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "chaos guard:", err)
		return 1
	}
	return 0
}
