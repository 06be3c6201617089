package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// R22, as a partner sees it: one endpoint whose retry policy gives its event types
// their own schedules, against a receiver that fails every request. customer.created is tried
// 3 times a second apart, customer.updated twice 2.5 s apart, and customer.deleted, answered
// 400 under a policy that stops on client errors, once, although the deployment's schedule
// (one retry after 1 s) and its 4xx policy (retry) would treat all three alike. The receiver's
// request times and counts and the delivery history show each type's own schedule.
func TestDevRetryPolicyPerEventType(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db, "--retry-schedule", "1s", "--retry-min-delay", "500ms", "--retry-client-errors", "retry")

	var (
		mu  sync.Mutex
		got = map[string][]time.Time{} // event type → request times
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var env struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(body, &env)
		mu.Lock()
		got[env.Type] = append(got[env.Type], time.Now())
		mu.Unlock()
		if env.Type == "customer.deleted" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()

	ctx := context.Background()
	created, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "pa"})
	must(t, "create partner", created, err)
	var policy adminclient.RetryPolicy
	if err := json.Unmarshal([]byte(`{"event_types": {
		"customer.created": {"delays_seconds": [1, 1]},
		"customer.updated": {"delays_seconds": [2.5]},
		"customer.deleted": {"client_errors": "stop"}}}`), &policy); err != nil {
		t.Fatal(err)
	}
	res, err := dev.api.CreateEndpointWithResponse(ctx, "pa", adminclient.EndpointCreate{
		URL: srv.URL + "/hooks", EventTypes: []string{"customer.*"}, RetryPolicy: &policy})
	must(t, "create endpoint", res, err)
	if res.JSON201.RetryPolicy == nil || res.JSON201.RetryPolicy.EventTypes == nil || len(*res.JSON201.RetryPolicy.EventTypes) != 3 {
		t.Fatalf("created endpoint shows policy %s", res.Body)
	}
	epID := res.JSON201.ID

	// The same from a terminal: endpoints create takes a filter and a policy, get shows them,
	// and a filter that does not parse is refused with its position.
	hs := func(args ...string) (int, string, string) {
		return cli(t, append(args, "--admin-url", dev.adminURL, "--data-dir", dev.dataDir)...)
	}
	status, stdout, stderr := hs("endpoints", "create", "--url", srv.URL+"/other", "--events", "api_key.*",
		"--filter", `data.status == "revoked"`, "--retry-policy", `{"attempts": 3}`, "--output", "json")
	var other adminclient.Endpoint
	if err := json.Unmarshal([]byte(stdout), &other); status != 0 || err != nil {
		t.Fatalf("endpoints create --filter --retry-policy: %d %v\n%s%s", status, err, stdout, stderr)
	}
	if status, stdout, _ = hs("endpoints", "get", other.ID); status != 0 || !hasRow(stdout, "filter", `data.status`, "==", `"revoked"`) ||
		!hasRow(stdout, "retry", "policy", `{"attempts":3}`) {
		t.Fatalf("endpoints get: %d\n%s", status, stdout)
	}
	if status, _, stderr = hs("endpoints", "create", "--url", srv.URL+"/bad", "--events", "*", "--filter", "data.x =="); status != 2 ||
		!strings.Contains(stderr, "position 10") {
		t.Fatalf("endpoints create with a bad filter: %d\n%s", status, stderr)
	}
	time.Sleep(500 * time.Millisecond) // the endpoint record reaches the views before the events

	schedules := map[string][]time.Duration{
		"customer.created": {time.Second, time.Second},
		"customer.updated": {2500 * time.Millisecond},
		"customer.deleted": nil,
	}
	events := map[string]string{} // event type → id
	for typ := range schedules {
		events[typ] = appendEvent(t, db, "pa", typ)
	}

	// Every delivery ends failed in the history, after its type's attempts.
	deadline := time.Now().Add(90 * time.Second)
	for {
		list, err := dev.api.ListDeliveriesWithResponse(ctx, "pa", epID, nil)
		must(t, "list deliveries", list, err)
		done := 0
		for _, d := range list.JSON200.Data {
			if d.State == adminclient.DeliveryStateFailed {
				done++
			}
		}
		if done == len(events) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history after 90 s: %s", list.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}

	const jitter = 0.2 // the deployment's, stated by GET /v1/limits
	mu.Lock()
	defer mu.Unlock()
	for typ, delays := range schedules {
		times := got[typ]
		if len(times) != len(delays)+1 {
			t.Errorf("%s: the receiver got %d requests, want %d", typ, len(times), len(delays)+1)
			continue
		}
		detail, err := dev.api.GetDeliveryWithResponse(ctx, "pa", records.DeliveryID(events[typ], epID))
		must(t, "get delivery", detail, err)
		d := detail.JSON200
		if d.AttemptCount != len(delays)+1 || len(d.Attempts) != len(delays)+1 {
			t.Errorf("%s: history has %d attempts (%d rows), want %d", typ, d.AttemptCount, len(d.Attempts), len(delays)+1)
			continue
		}
		// Each retrying attempt names its next attempt at its type's delay, within the jitter, and
		// the receiver gets that next request no earlier (one clock: the test's machine).
		for i, want := range delays {
			a := d.Attempts[i]
			if earliest := a.StartedAt.Add(time.Duration(float64(want) * (1 - jitter))); times[i+1].Before(earliest) {
				t.Errorf("%s: request %d came %s after attempt %d started, want at least %s (%s -%v)", typ, i+2,
					times[i+1].Sub(a.StartedAt), i+1, earliest.Sub(a.StartedAt), want, jitter)
			}
			if a.NextAttemptAt == nil {
				t.Errorf("%s: attempt %d has no next attempt time: %s", typ, i+1, detail.Body)
				continue
			}
			if wait := a.NextAttemptAt.Sub(a.StartedAt); wait < time.Duration(float64(want)*(1-jitter)) || wait > time.Duration(float64(want)*(1+jitter)) {
				t.Errorf("%s: attempt %d names its next attempt %s after it started, want %s ±%v", typ, i+1, wait, want, jitter)
			}
		}
		if last := d.Attempts[len(d.Attempts)-1]; last.NextAttemptAt != nil {
			t.Errorf("%s: the last attempt names a next one at %s", typ, last.NextAttemptAt)
		}
	}
}
