package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/probes"
)

// hookstream probe against the probe routes every component serves (internal/probes): 0 while
// /readyz answers 200, 1 with the failing check named when it answers 503, when nothing
// listens, and when the answer takes longer than --timeout; 2 for a command line without a
// usable URL.
func TestProbe(t *testing.T) {
	var down atomic.Bool
	h := probes.Handler(prometheus.NewRegistry(), probes.Check{Name: "kafka", Ping: func(context.Context) error {
		if down.Load() {
			return errors.New("no broker answers")
		}
		return nil
	}})
	srv := httptest.NewServer(h)
	defer srv.Close()

	status, stdout, stderr := cli(t, "probe", srv.URL+"/readyz")
	if status != 0 || !strings.Contains(stdout, "200 OK") || !strings.Contains(stdout, `"ready":true`) {
		t.Errorf("probe of a ready process: status %d\nstdout: %s\nstderr: %s", status, stdout, stderr)
	}
	down.Store(true)
	status, stdout, stderr = cli(t, "probe", srv.URL+"/readyz")
	if status != 1 || stdout != "" || !strings.Contains(stderr, "503 Service Unavailable") || !strings.Contains(stderr, "no broker answers") {
		t.Errorf("probe of a process not ready: status %d\nstdout: %s\nstderr: %s", status, stdout, stderr)
	}
	if status, _, stderr := cli(t, "probe", srv.URL+"/healthz"); status != 0 {
		t.Errorf("probe of /healthz while not ready (alive all the same): status %d\n%s", status, stderr)
	}

	// Nothing listening.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/readyz"
	l.Close()
	if status, _, stderr := cli(t, "probe", closed); status != 1 || !strings.Contains(stderr, "probe failed") {
		t.Errorf("probe of a closed port: status %d\n%s", status, stderr)
	}

	// Too slow.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	start := time.Now()
	if status, _, stderr := cli(t, "probe", "--timeout", "200ms", slow.URL+"/readyz"); status != 1 || time.Since(start) > 3*time.Second {
		t.Errorf("probe of a route slower than --timeout: status %d after %s\n%s", status, time.Since(start), stderr)
	}

	for _, args := range [][]string{{"probe"}, {"probe", "127.0.0.1:9464/readyz"}, {"probe", "ftp://127.0.0.1/x"},
		{"probe", "--timeout", "0s", srv.URL}, {"probe", srv.URL, "extra"}} {
		if status, stdout, stderr := cli(t, args...); status != 2 || stdout != "" || stderr == "" {
			t.Errorf("hookstream %s: status %d, want 2 with the reason\nstdout: %s\nstderr: %s", strings.Join(args, " "), status, stdout, stderr)
		}
	}
}
