package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// The quick start: `hookstream dev` migrates an empty database, starts embedded Kafka, and
// answers its probes; once ready it prints the console's URL and where the operator token is;
// it stops cleanly on cancellation.
func TestDevStartsAndAnswersProbes(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	adminAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	resellerAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	dataDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out testenv.Buffer
	go func() {
		done <- run(ctx, []string{"dev",
			"--database-url", db.URL,
			"--admin-addr", adminAddr,
			"--dev-kafka-port", fmt.Sprint(testenv.FreePort(t)),
			"--reseller-addr", resellerAddr,
			"--data-dir", dataDir,
			"--topic-partitions", "2",
			"--cdc-slot", db.Name, // slots are cluster-wide; the test database's own
		}, &out)
	}()

	var ready map[string]any
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + adminAddr + "/readyz")
		if err == nil {
			ready = map[string]any{}
			_ = json.NewDecoder(resp.Body).Decode(&ready)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("dev exited early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("dev not ready after 60s: %v %v", err, ready)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if fmt.Sprint(ready["checks"]) != "map[kafka:ok postgres:ok]" {
		t.Fatalf("readyz = %v", ready)
	}
	resp, err := http.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(body.String(), "go_goroutines") {
		t.Fatalf("metrics lack the runtime collector:\n%.300s", body.String())
	}
	var tables int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM schema_migration`).Scan(&tables); err != nil || tables == 0 {
		t.Fatalf("dev did not migrate: %d %v", tables, err)
	}

	waitOutput(t, &out, "hookstream dev is ready", cancel)
	for _, want := range []string{"console    http://" + adminAddr + "/console/", "operator token: " + filepath.Join(dataDir, "dev-admin-token")} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dev's announcement lacks %q:\n%s", want, out.String())
		}
	}
	// docs/getting-started.md shows it as make dev prints it, with the default addresses.
	shown := strings.NewReplacer(adminAddr, "127.0.0.1:8080", resellerAddr, "127.0.0.1:8081", dataDir+"/", ".data/").Replace(out.String())
	if !strings.Contains(docsSection(t, "docs/getting-started.md", ""), "```console\n"+shown+"```") {
		t.Errorf("docs/getting-started.md does not show dev's announcement as it is printed:\n%s", shown)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dev stopped with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("dev did not stop within 30s")
	}
}
