package localinfra

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFreePortsCanBeBound(t *testing.T) {
	p, err := FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	if p < 20000 || p+2 >= 32768 {
		t.Fatalf("port %d: want a run below the ephemeral range", p)
	}
	for i := range 3 {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+i)))
		if err != nil {
			t.Fatalf("port %d of the run: %v", p+i, err)
		}
		l.Close()
	}
}

// Ports handed out are not yet bound by their services: a later call must not return them again
// (make chaos picks PostgreSQL's port, then the broker's pair, then every process's probe port,
// before any of them listens).
func TestFreePortsNeverHandsOutAPortTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 500 {
		p, err := FreePorts(2)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []int{p, p + 1} {
			if seen[q] {
				t.Fatalf("port %d handed out twice", q)
			}
			seen[q] = true
		}
	}
}

func TestKillWaitsUntilTheProcessIsGone(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // reaps it, as the script's daemon is reaped by init
	if err := Kill(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the process still runs after Kill")
	}
}

func TestRunPassesTheScriptsVariablesAndLogs(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "deploy", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := `echo "$HOOKSTREAM_DATA_DIR $KAFKA_LIBS $PG_PORT $1"; echo warned >&2; [ "$1" != fail ]`
	if err := os.WriteFile(filepath.Join(repo, "deploy", "x", "s.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOOKSTREAM_DATA_DIR", "/shared")
	var log bytes.Buffer
	s := Scripts{Repo: repo, Dir: "/run", Vars: []string{"PG_PORT=5"}, Log: &log, Timeout: time.Minute}
	out, err := s.Run(context.Background(), "x/s.sh", "up")
	if err != nil {
		t.Fatal(err)
	}
	if want := "/run /shared/kafka/libs 5 up\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if !strings.Contains(log.String(), "x/s.sh up:\n/run") || !strings.Contains(log.String(), "warned") {
		t.Errorf("log %q: want the call and both outputs", log.String())
	}
	if _, err := s.Run(context.Background(), "x/s.sh", "fail"); err == nil || !strings.Contains(err.Error(), "x/s.sh fail: ") || !strings.Contains(err.Error(), "warned") {
		t.Errorf("a failing call: %v, want the call and its output", err)
	}
}
