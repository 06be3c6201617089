package deploy

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// script runs deploy/local/<name> with env added to the test's environment, bounded, and returns
// its stdout, its stderr and its error.
func script(t *testing.T, env []string, name string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join("local", name)}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return strings.TrimSpace(stdout.String()), stderr.String(), err
}

// startTime is when the server at u started: it changes when the server restarts.
func startTime(t *testing.T, u string) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("connect %s: %v", u, err)
	}
	defer conn.Close(ctx)
	var at time.Time
	if err := conn.QueryRow(ctx, `SELECT pg_postmaster_start_time()`).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// PG_PORT puts a second local cluster beside the one the tests run on (make pg-up on 54329),
// in a folder of its own, without touching the first; a port another server holds is refused
// before anything is initialised.
func TestPGScriptBesideAnotherCluster(t *testing.T) {
	shared := testenv.ServerURL(t)
	sharedStart := startTime(t, shared)

	port := testenv.FreePort(t)
	dataDir := t.TempDir()
	env := []string{fmt.Sprintf("PG_PORT=%d", port), "HOOKSTREAM_DATA_DIR=" + dataDir, "PG_DATA="}
	t.Cleanup(func() {
		if _, stderr, err := script(t, env, "pg.sh", "down"); err != nil {
			t.Errorf("pg.sh down: %v\n%s", err, stderr)
		}
	})
	u, stderr, err := script(t, env, "pg.sh", "up")
	if err != nil {
		t.Fatalf("PG_PORT=%d pg.sh up: %v\n%s", port, err, stderr)
	}
	if want := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/hookstream?sslmode=disable", port); u != want {
		t.Fatalf("pg.sh up printed %q, want %q", u, want)
	}
	if _, err := os.Stat(filepath.Join(dataDir, fmt.Sprintf("pg-%d", port), "PG_VERSION")); err != nil {
		t.Errorf("the cluster of port %d is not in <data dir>/pg-%d: %v", port, port, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("connect to the new cluster: %v", err)
	}
	var gotPort, walLevel, db string
	if err := conn.QueryRow(ctx, `SELECT current_setting('port'), current_setting('wal_level'), current_database()`).Scan(&gotPort, &walLevel, &db); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if gotPort != fmt.Sprint(port) || walLevel != "logical" || db != "hookstream" {
		t.Errorf("new cluster: port %s, wal_level %s, database %s; want %d, logical, hookstream", gotPort, walLevel, db, port)
	}

	// Again: idempotent.
	if u2, stderr, err := script(t, env, "pg.sh", "up"); err != nil || u2 != u || !strings.Contains(stderr, "already running") {
		t.Errorf("second pg.sh up: %q, %v\n%s", u2, err, stderr)
	}
	if out, _, err := script(t, env, "pg.sh", "status"); err != nil || out != fmt.Sprintf("running on 127.0.0.1:%d", port) {
		t.Errorf("pg.sh status: %q, %v", out, err)
	}

	// The shared cluster's port, with a folder that holds no cluster: refused, nothing made.
	sharedURL, err := url.Parse(shared)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	_, stderr, err = script(t, []string{"PG_PORT=" + sharedURL.Port(), "HOOKSTREAM_DATA_DIR=" + other, "PG_DATA="}, "pg.sh", "up")
	if err == nil || !strings.Contains(stderr, "is taken by another server") {
		t.Errorf("pg.sh up on the taken port %s: %v\n%s; want a refusal naming the port", sharedURL.Port(), err, stderr)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("the refused pg.sh up left %v in its data folder", entries)
	}

	// A folder made for one port is refused for another.
	wrong := append(env, fmt.Sprintf("PG_PORT=%d", testenv.FreePort(t)), "PG_DATA="+filepath.Join(dataDir, fmt.Sprintf("pg-%d", port)))
	if _, stderr, err := script(t, wrong, "pg.sh", "up"); err == nil || !strings.Contains(stderr, "holds a cluster for port") {
		t.Errorf("pg.sh up with a PG_DATA of another port: %v\n%s", err, stderr)
	}

	if got := startTime(t, shared); !got.Equal(sharedStart) {
		t.Errorf("the shared cluster restarted (started %s, now %s)", sharedStart, got)
	}
}

// With HOOKSTREAM_DATABASE_URL set, the quick start (make dev → deploy/local/dev.sh) runs
// `hookstream dev` on that database and starts no cluster of its own, whatever PG_PORT says.
func TestDevScriptUsesDatabaseURL(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dataDir := t.TempDir()
	pgPort, admin, kafka := testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t)
	// Should dev.sh start a cluster against the rule, stop it before its folder goes.
	t.Cleanup(func() {
		_, _, _ = script(t, []string{fmt.Sprintf("PG_PORT=%d", pgPort), "HOOKSTREAM_DATA_DIR=" + dataDir, "PG_DATA="}, "pg.sh", "down")
	})

	cmd := exec.Command("bash", filepath.Join("local", "dev.sh"), "--cdc-slot", db.Name) // slots are cluster-wide
	cmd.Env = append(os.Environ(),
		"HOOKSTREAM_DATABASE_URL="+db.URL,
		"HOOKSTREAM_BIN="+testenv.Binary(t),
		"HOOKSTREAM_DATA_DIR="+dataDir,
		fmt.Sprintf("HOOKSTREAM_ADMIN_ADDR=127.0.0.1:%d", admin),
		fmt.Sprintf("HOOKSTREAM_DEV_KAFKA_PORT=%d", kafka),
		fmt.Sprintf("PG_PORT=%d", pgPort))
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-done
		}
	})

	// Ready: /readyz answers 200 once dev has migrated the database and started everything, and
	// dev says so. Its own word is needed too: the free port picked for its admin API could be
	// taken meanwhile by another test's process, whose /readyz would answer for it.
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", admin)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res, err := http.Get(readyz)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK && strings.Contains(out.String(), "hookstream dev is ready") {
				break
			}
		}
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("dev.sh exited before it was ready: %v\n%s", err, out.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("dev.sh not ready within 2 minutes\n%s", out.String())
		}
	}

	if !strings.Contains(out.String(), "using HOOKSTREAM_DATABASE_URL") {
		t.Errorf("dev.sh did not say it uses HOOKSTREAM_DATABASE_URL:\n%s", out.String())
	}
	var migrated bool
	if err := db.Pool.QueryRow(context.Background(), `SELECT to_regclass('schema_migration') IS NOT NULL`).Scan(&migrated); err != nil || !migrated {
		t.Errorf("dev did not migrate the database of HOOKSTREAM_DATABASE_URL (schema_migration: %v, %v)", migrated, err)
	}
	matches, _ := filepath.Glob(filepath.Join(dataDir, "pg*"))
	if len(matches) > 0 {
		t.Errorf("dev.sh made a local cluster although HOOKSTREAM_DATABASE_URL was set: %v", matches)
	}
	if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", pgPort)); err == nil {
		c.Close()
		t.Errorf("something listens on PG_PORT %d: dev.sh started a cluster", pgPort)
	}

	// dev.sh execs hookstream dev, which stops on SIGTERM.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Errorf("hookstream dev exited with %v after SIGTERM\n%s", err, out.String())
		}
	case <-time.After(time.Minute):
		t.Errorf("hookstream dev still runs a minute after SIGTERM\n%s", out.String())
	}
}

// Ctrl-C on `make dev` (SIGINT to the terminal's foreground process group: make and what it
// runs) stops hookstream dev cleanly: the recipe execs the binary, never `go run` (which exits 1
// when interrupted, and make then reports "Error 1"), so make reports no error. make itself,
// interrupted, dies of the signal as GNU make always does; the shell prints nothing for that.
func TestMakeDevStopsCleanlyOnCtrlC(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make dev needs make: %v", err)
	}
	db := testenv.NewEmptyDatabase(t)
	admin := testenv.FreePort(t)
	// make dev as typed: its build of bin/hookstream (gitignored) included.
	cmd := exec.Command("make", "-s", "dev")
	cmd.Dir = ".."
	var env []string
	for _, kv := range os.Environ() {
		// Not a sub-make of make test's (its jobserver and flags), but make as a user types it.
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env,
		"HOOKSTREAM_DATABASE_URL="+db.URL,
		"HOOKSTREAM_BIN=",
		"HOOKSTREAM_DATA_DIR="+t.TempDir(),
		"HOOKSTREAM_CDC_SLOT="+db.Name, // slots are cluster-wide
		fmt.Sprintf("HOOKSTREAM_ADMIN_ADDR=127.0.0.1:%d", admin),
		fmt.Sprintf("HOOKSTREAM_RESELLER_ADDR=127.0.0.1:%d", testenv.FreePort(t)),
		fmt.Sprintf("HOOKSTREAM_DEV_KAFKA_PORT=%d", testenv.FreePort(t)))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a process group, as a terminal's job
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(out.String(), "hookstream dev is ready"); {
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("make dev exited before it was ready: %v\n%s", err, out.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("make dev not ready within 2 minutes\n%s", out.String())
		}
	}

	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
		stopped = true
	case <-time.After(time.Minute):
		t.Fatalf("make dev still runs a minute after Ctrl-C\n%s", out.String())
	}
	if strings.Contains(out.String(), "make: ***") || !strings.Contains(out.String(), "msg=stopped") {
		t.Errorf("make dev did not stop cleanly on Ctrl-C (%v)\n%s", err, out.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !(ws.Exited() && ws.ExitStatus() == 0 || ws.Signaled() && ws.Signal() == syscall.SIGINT) {
		t.Errorf("make dev ended with %v after Ctrl-C, want 0 or make's own SIGINT\n%s", err, out.String())
	}
}
