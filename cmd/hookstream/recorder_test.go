package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// readiness is the status and the checks of a GET /readyz.
func readiness(t *testing.T, addr string) (int, map[string]string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var body struct {
		Checks map[string]string `json:"checks"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Checks
}

// `hookstream recorder` rides out a PostgreSQL outage: it keeps running, /readyz says that
// PostgreSQL does not answer, and every attempt produced during the outage is recorded after it.
// The outage is a proxy between the recorder and the shared server that closes every connection
// and refuses new ones, as a restart does.
func TestRecorderRidesOutPostgresOutage(t *testing.T) {
	t.Parallel()
	db := testenv.NewDatabase(t)
	k := testenv.NewKafka(t)
	names := k.CreateTopics(t)
	proxy, dbURL := db.ThroughProxy(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO partner (id) VALUES ('p1');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example')`); err != nil {
		t.Fatal(err)
	}
	cl := k.Client(t)
	produced := 0
	produce := func(n int) {
		t.Helper()
		var recs []*kgo.Record
		for range n {
			ev := outbox.NewEventID()
			a := records.Attempt{V: records.AttemptVersion, DeliveryID: records.DeliveryID(ev, "ep1"), EventID: ev,
				EndpointID: "ep1", PartnerID: "p1", EventType: "customer.created", AttemptNo: 1, Trigger: records.TriggerInitial,
				StartedAt: time.Now().UTC(), Status: 200, LatencyMS: 5, Outcome: records.OutcomeDelivered}
			recs = append(recs, &kgo.Record{Topic: names.Attempts, Key: []byte(a.DeliveryID), Value: a.AppendJSON(nil)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		produced += n
	}
	recorded := func() int {
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery_attempt`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitRecorded := func(within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for recorded() < produced {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d attempts recorded after %s", recorded(), produced, within)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	metricsAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	rctx, cancel := context.WithCancel(ctx)
	var runErr error
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		runErr = run(rctx, []string{"recorder", "--database-url", dbURL, "--kafka-brokers", strings.Join(k.Brokers, ","),
			"--topic-prefix", k.Prefix, "--metrics-addr", metricsAddr, "--log-format", "text"}, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
			if runErr != nil {
				t.Errorf("recorder: %v", runErr)
			}
		case <-time.After(time.Minute):
			t.Error("recorder did not stop within a minute")
		}
	})
	running := func() {
		t.Helper()
		select {
		case <-exited:
			t.Fatalf("recorder exited: %v", runErr)
		default:
		}
	}

	produce(5)
	waitRecorded(time.Minute)

	proxy.Cut()
	// Attempts keep coming during the outage, which lasts longer than the 6 s restart in which
	// the recorders used to exit.
	outageEnds := time.Now().Add(8 * time.Second)
	sawUnready := false
	for time.Now().Before(outageEnds) {
		produce(3)
		status, checks := readiness(t, metricsAddr)
		if status == http.StatusServiceUnavailable && checks["postgres"] != "" && checks["postgres"] != "ok" {
			sawUnready = true
		}
		running()
		time.Sleep(500 * time.Millisecond)
	}
	if !sawUnready {
		t.Error("/readyz never said PostgreSQL was unreachable during the outage")
	}
	if n := recorded(); n != 5 {
		t.Fatalf("%d attempts recorded while PostgreSQL was unreachable through the proxy, want 5", n)
	}

	proxy.Restore()
	waitRecorded(time.Minute)
	running()
	if status, checks := readiness(t, metricsAddr); status != http.StatusOK {
		t.Errorf("/readyz after the outage: %d %v", status, checks)
	}
	if n := recorded(); n != produced {
		t.Errorf("%d attempts recorded, %d produced", n, produced)
	}
}
