package inbox_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
	"github.com/hookstream/hookstream/webhook/inbox"
)

// Every receiver metric, read after a scripted sequence of deliveries and outcomes.
func TestMetrics(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)
	stranger := newPartner(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig(t)
	cfg.Registerer = reg
	cfg.MaxAttempts = 2
	cfg.Retention = time.Hour
	cfg.PurgeInterval = time.Hour
	cfg.Authorize = func(_ context.Context, _ pgx.Tx, ev inbox.Event) error {
		if ev.Type == "customer.deleted" {
			return fmt.Errorf("deletes are not allowed: %w", inbox.ErrRefused)
		}
		return nil
	}
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(_ context.Context, _ pgx.Tx, ev inbox.Event) error {
		if ev.Type == "customer.created" {
			return fmt.Errorf("always fails")
		}
		return nil
	}, cfg)
	gh, err := in.Handler(githubSource(t))
	if err != nil {
		t.Fatal(err)
	}
	counter := func(name string, labels ...string) float64 { return testenv.Counter(t, reg, name, labels...) }
	gauge := func(name string, labels ...string) float64 { return testenv.Gauge(t, reg, name, labels...) }
	histogram := func(name string, labels ...string) uint64 { return testenv.HistogramCount(t, reg, name, labels...) }

	// Before any traffic the counters of both sources exist at zero.
	if n := testenv.Series(t, reg, "hookstream_inbox_received_total"); n != 2 {
		t.Fatalf("%d series of hookstream_inbox_received_total before traffic, want 2 (hookstream, github)", n)
	}

	now := time.Now()
	ok, deleted, failing := outbox.NewEventID(), outbox.NewEventID(), outbox.NewEventID()
	for _, s := range []struct {
		req  *http.Request
		h    http.Handler
		want int
	}{
		{hookstream.request(ok, customerUpdated(t, ok, 1), now), in, 204},
		{hookstream.request(ok, customerUpdated(t, ok, 1), now), in, 204},                                            // duplicate
		{hookstream.request(ok, customerUpdated(t, ok, 2), now), in, 409},                                            // body mismatch
		{hookstream.request(deleted, envelope(t, deleted, "customer.deleted", `{"customer_id":"c"}`), now), in, 204}, // refused later
		{hookstream.request(failing, envelope(t, failing, "customer.created", `{"customer_id":"c"}`), now), in, 204}, // dead later
		{stranger.request(outbox.NewEventID(), customerUpdated(t, ok, 1), now), in, 401},                             // wrong secret
		{hookstream.request(ok, customerUpdated(t, ok, 1), now.Add(-time.Hour)), in, 401},                            // stale
		{hookstream.request(ok, customerUpdated(t, ok, 1), now.Add(time.Hour)), in, 401},                             // future
		{func() *http.Request {
			r := hookstream.request(ok, nil, now)
			r.Header.Del(webhook.HeaderSignature)
			return r
		}(), in, 401},
		{githubRequest("d-1", []byte(`{}`)), gh, 204},
		{func() *http.Request {
			r := githubRequest("d-2", []byte(`{}`))
			r.Body = bodyOf([]byte(`{} `))
			return r
		}(), gh, 401},
		{httptest.NewRequest(http.MethodPost, "/webhooks/twilio", bodyOf([]byte(`{}`))), in.UnknownSource(), 404},
	} {
		if rec := serve(s.h, s.req); rec.Code != s.want {
			t.Fatalf("scripted request: %d %q, want %d", rec.Code, rec.Body, s.want)
		}
	}
	// Stored, not yet processed: rows in received, and how long the oldest has waited.
	time.Sleep(1100 * time.Millisecond)
	for _, c := range []struct {
		name   string
		got    float64
		labels []string
		want   float64
	}{
		{"hookstream_inbox_received_total", counter("hookstream_inbox_received_total", "source", "hookstream"), nil, 3},
		{"hookstream_inbox_received_total", counter("hookstream_inbox_received_total", "source", "github"), nil, 1},
		{"hookstream_inbox_duplicates_total", counter("hookstream_inbox_duplicates_total", "source", "hookstream"), nil, 1},
		{"hookstream_inbox_body_mismatches_total", counter("hookstream_inbox_body_mismatches_total", "source", "hookstream"), nil, 1},
		{"no_matching_signature", counter("hookstream_inbox_verification_failures_total", "source", "hookstream", "reason", "no_matching_signature"), nil, 1},
		{"timestamp_too_old", counter("hookstream_inbox_verification_failures_total", "source", "hookstream", "reason", "timestamp_too_old"), nil, 1},
		{"timestamp_too_new", counter("hookstream_inbox_verification_failures_total", "source", "hookstream", "reason", "timestamp_too_new"), nil, 1},
		{"missing_header", counter("hookstream_inbox_verification_failures_total", "source", "hookstream", "reason", "missing_header"), nil, 1},
		{"github failures", counter("hookstream_inbox_verification_failures_total", "source", "github", "reason", "no_matching_signature"), nil, 1},
		{"stale", counter("hookstream_inbox_timestamp_outside_tolerance_total", "source", "hookstream", "direction", "past"), nil, 1},
		{"ahead", counter("hookstream_inbox_timestamp_outside_tolerance_total", "source", "hookstream", "direction", "future"), nil, 1},
		{"skew observations", float64(histogram("hookstream_inbox_clock_skew_seconds", "source", "hookstream")), nil, 5},
		{"rows received", gauge("hookstream_inbox_rows", "source", "hookstream", "state", "received"), nil, 3},
		{"github rows received", gauge("hookstream_inbox_rows", "source", "github", "state", "received"), nil, 1},
		{"unknown source", counter("hookstream_inbox_unknown_source_requests_total"), nil, 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if age := gauge("hookstream_inbox_oldest_row_age_seconds", "source", "hookstream", "state", "received"); age < 1 || age > 60 {
		t.Errorf("oldest received row is %v s old, want about 1", age)
	}

	testenv.Go(t, "Run", in.Run)
	testenv.Eventually(t, 10*time.Second, "every event finished", func() bool {
		return testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox WHERE state IN ('processed', 'refused', 'dead')`) == 4
	})
	testenv.Eventually(t, 5*time.Second, "outcomes observed", func() bool {
		return histogram("hookstream_inbox_processing_seconds", "outcome", "dead") == 1
	})
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"refused", counter("hookstream_inbox_refused_total", "source", "hookstream"), 1},
		{"processed", float64(histogram("hookstream_inbox_processing_seconds", "source", "hookstream", "outcome", "processed")), 1},
		{"github processed", float64(histogram("hookstream_inbox_processing_seconds", "source", "github", "outcome", "processed")), 1},
		{"refused outcome", float64(histogram("hookstream_inbox_processing_seconds", "outcome", "refused")), 1},
		{"failed then dead", float64(histogram("hookstream_inbox_processing_seconds", "outcome", "failed")), 1},
		{"rows received", gauge("hookstream_inbox_rows", "state", "received"), 0},
		{"rows refused", gauge("hookstream_inbox_rows", "state", "refused"), 1},
		{"rows dead", gauge("hookstream_inbox_rows", "state", "dead"), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}

	if _, err := db.Pool.Exec(context.Background(), `UPDATE webhook_inbox SET processed_at = processed_at - interval '2 hours' WHERE state = 'processed'`); err != nil {
		t.Fatal(err)
	}
	if n, err := in.Purge(context.Background()); err != nil || n != 2 {
		t.Fatalf("Purge = %d, %v; want the 2 processed rows", n, err)
	}
	if got := counter("hookstream_inbox_purged_total"); got != 2 {
		t.Errorf("hookstream_inbox_purged_total = %v, want 2", got)
	}

	// The example alerts name only metrics the inbox exports.
	raw, err := os.ReadFile("../../deploy/monitoring/receiver-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		exported[mf.GetName()] = true
	}
	names := regexp.MustCompile(`hookstream_inbox_[a-z_]+`).FindAllString(string(raw), -1)
	if len(names) < 5 {
		t.Fatalf("receiver-alerts.yml names %d metrics", len(names))
	}
	for _, name := range names {
		if !exported[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")] {
			t.Errorf("receiver-alerts.yml names %s, which the inbox does not export", name)
		}
	}

	// A second Inbox on the same Registerer is refused rather than silently sharing series.
	if _, err := inbox.New(db.Pool, hookstream.verifier(t), noProcessing, cfg); err == nil {
		t.Error("a second Inbox registered on the same Registerer")
	}
}

// hookstream_inbox_clock_skew_seconds observes the receiver's clock minus the signed time:
// positive for a request signed in the past, negative for one signed ahead of the receiver.
func TestClockSkewObserved(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig(t)
	cfg.Registerer = reg
	in := newInbox(t, db.Pool, hookstream.verifier(t), noProcessing, cfg)
	for _, d := range []time.Duration{-2 * time.Minute, time.Minute} { // net skew: 120 s - 60 s
		id := outbox.NewEventID()
		if rec := serve(in, hookstream.request(id, customerUpdated(t, id, 1), time.Now().Add(d))); rec.Code != http.StatusNoContent {
			t.Fatalf("signed %s from now: %d %q", d, rec.Code, rec.Body)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "hookstream_inbox_clock_skew_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		// Timestamps are whole seconds: each observation is up to 1 s (plus the request's time) more.
		if h.GetSampleCount() != 2 || h.GetSampleSum() < 59 || h.GetSampleSum() > 65 {
			t.Fatalf("clock skew: %d observations summing to %v s, want 2 summing to about 60", h.GetSampleCount(), h.GetSampleSum())
		}
		// The sign: one observation at or below 0 (signed ahead), one above 60 (signed before).
		for _, b := range h.GetBucket() {
			want := map[float64]uint64{-10: 1, 0: 1, 60: 1, 300: 2}
			if n, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != n {
				t.Fatalf("clock skew: %d observations at or below %v, want %d", b.GetCumulativeCount(), b.GetUpperBound(), n)
			}
		}
		return
	}
	t.Fatal("hookstream_inbox_clock_skew_seconds not exported")
}
