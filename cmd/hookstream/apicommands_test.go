package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/webhook"
)

// design.md section 12: the daily work from a terminal against `hookstream dev`: create an endpoint, see it,
// watch its deliveries, replay one, send a test event, rotate its secret, disable and enable it,
// in tables and in JSON; a partner API key sees its own partner only. Every step is checked by
// what the receiver got or the API answers.
func TestEndpointsAndDeliveriesCommands(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	ctx := context.Background()
	var rx received
	srv := httptest.NewServer(rx.handler(func(int) int { return http.StatusNoContent }))
	defer srv.Close()

	// The operator's token is dev's, read from its data directory.
	hs := func(wantStatus int, args ...string) string {
		t.Helper()
		args = append(args, "--admin-url", dev.adminURL, "--data-dir", dev.dataDir)
		status, stdout, stderr := cli(t, args...)
		if status != wantStatus {
			t.Fatalf("hookstream %s: status %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), status, wantStatus, stdout, stderr)
		}
		if wantStatus != 0 {
			return stderr
		}
		return stdout
	}
	jsonOf := func(out string, v any) {
		t.Helper()
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("not JSON (%v):\n%s", err, out)
		}
	}
	if stderr := hs(2, "endpoints", "list"); !strings.Contains(stderr, "no partner yet") {
		t.Fatalf("endpoints list before any partner:\n%s", stderr)
	}
	res, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "pa"})
	must(t, "create partner", res, err)

	var created struct {
		ID, Secret, Status string
		EventTypes         []string `json:"event_types"`
	}
	jsonOf(hs(0, "endpoints", "create", "--url", srv.URL+"/hooks", "--events", "customer.*,webhook.test", "--output", "json"), &created)
	if created.Status != "active" || !strings.HasPrefix(created.Secret, "whsec_") || strings.Join(created.EventTypes, ",") != "customer.*,webhook.test" {
		t.Fatalf("endpoints create: %+v", created)
	}
	eid := created.ID
	// The only partner needs no --partner; a table names the endpoint, its status and URL.
	if out := hs(0, "endpoints", "list"); !hasRow(out, "ID", "STATUS", "URL") || !hasRow(out, eid, "active", srv.URL+"/hooks", "customer.*,webhook.test") {
		t.Fatalf("endpoints list:\n%s", out)
	}
	var got adminclient.Endpoint
	jsonOf(hs(0, "endpoints", "get", eid, "--partner", "pa", "--output", "json"), &got)
	if got.ID != eid || got.Status != adminclient.EndpointStatusActive || len(got.Secrets) != 1 {
		t.Fatalf("endpoints get: %+v", got)
	}
	if stderr := hs(2, "endpoints", "get", "ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8"); !strings.Contains(stderr, "404 not_found") {
		t.Fatalf("endpoints get of no endpoint:\n%s", stderr)
	}

	// An event is delivered, and its delivery is in the history, then replayed.
	time.Sleep(500 * time.Millisecond) // the endpoint record reaches the views before the event
	eventID := appendEvent(t, db, "pa", "customer.created")
	rx.waitFor(t, 1, 60*time.Second)
	var list []adminclient.Delivery
	for deadline := time.Now().Add(30 * time.Second); ; {
		var page adminclient.DeliveryList
		jsonOf(hs(0, "deliveries", "list", eid, "--output", "json"), &page)
		list = page.Data
		if len(list) == 1 && list[0].State == adminclient.DeliveryStateSucceeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries list: %+v, want the delivery succeeded", list)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d := list[0]; d.EventID != eventID || d.AttemptCount != 1 {
		t.Fatalf("deliveries list: %+v", d)
	}
	did := list[0].DeliveryID
	if out := hs(0, "deliveries", "list", eid, "--state", "failed"); strings.Contains(out, did) {
		t.Fatalf("deliveries list --state failed lists the succeeded delivery:\n%s", out)
	}
	if out := hs(0, "deliveries", "replay", did); !hasRow(out, "attempt", "2", "(replay)") {
		t.Fatalf("deliveries replay:\n%s", out)
	}
	msgs := rx.waitFor(t, 2, 60*time.Second)
	if msgs[1].header.Get("webhook-id") != eventID {
		t.Fatalf("the replay's webhook-id is %q, want %s", msgs[1].header.Get("webhook-id"), eventID)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		out := hs(0, "deliveries", "get", did)
		if hasRow(out, "1", "initial", "*", "204") && hasRow(out, "2", "replay", "*", "204") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries get: want both attempts answered 204:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A test event, then a rotation: the next test event verifies with the new secret alone.
	verifies := func(secret string, m receivedMsg) bool {
		v, err := webhook.NewVerifier([]string{secret})
		return err == nil && v.VerifyHeader(m.header, m.body) == nil
	}
	hs(0, "endpoints", "test", eid)
	if m := rx.waitFor(t, 3, 60*time.Second)[2]; !verifies(created.Secret, m) || !strings.Contains(string(m.body), `"type":"webhook.test"`) {
		t.Fatalf("the test event %s", m.body)
	}
	var rotation adminclient.Rotation
	jsonOf(hs(0, "endpoints", "rotate", eid, "--overlap", "1h", "--output", "json"), &rotation)
	if !strings.HasPrefix(rotation.Secret, "whsec_") || rotation.Secret == created.Secret || rotation.PreviousSecretsExpireAt == nil ||
		rotation.PreviousSecretsExpireAt.Sub(time.Now()) > time.Hour {
		t.Fatalf("endpoints rotate: %+v", rotation)
	}
	time.Sleep(500 * time.Millisecond) // the new secret reaches the sender's view
	hs(0, "endpoints", "test", eid)
	if m := rx.waitFor(t, 4, 60*time.Second)[3]; !verifies(rotation.Secret, m) {
		t.Fatalf("the test event after the rotation does not verify with the new secret: %v", m.header)
	}

	// Disable and enable, as the table shows them.
	if out := hs(0, "endpoints", "disable", eid, "--reason", "receiver maintenance"); !hasRow(out, "status", "disabled") || !hasRow(out, "disabled", "reason", "receiver", "maintenance") {
		t.Fatalf("endpoints disable:\n%s", out)
	}
	if out := hs(0, "endpoints", "get", eid); !hasRow(out, "status", "disabled") {
		t.Fatalf("endpoints get after disable:\n%s", out)
	}
	if out := hs(0, "endpoints", "enable", eid); !hasRow(out, "status", "active") || !hasRow(out, "disabled", "reason", "-") {
		t.Fatalf("endpoints enable:\n%s", out)
	}

	// A partner API key acts on its own partner, found without --partner, and on no other.
	dev.createEndpoint(t, "pb", srv.URL+"/other", "customer.*")
	key, err := dev.api.CreateAPIKeyWithResponse(ctx, "pa", adminclient.APIKeyCreate{})
	must(t, "create API key", key, err)
	if out := hs(0, "endpoints", "list", "--api-key", key.JSON201.Key); !strings.Contains(out, eid) || strings.Contains(out, "/other") {
		t.Fatalf("endpoints list with pa's key:\n%s", out)
	}
	if stderr := hs(2, "endpoints", "list", "--api-key", key.JSON201.Key, "--partner", "pb"); !strings.Contains(stderr, "404") {
		t.Fatalf("endpoints list --partner pb with pa's key:\n%s", stderr)
	}
	if stderr := hs(2, "endpoints", "list"); !strings.Contains(stderr, "several partners (pa, pb)") {
		t.Fatalf("endpoints list as the operator beside two partners:\n%s", stderr)
	}
	if stderr := hs(2, "endpoints", "list", "--partner", "pa", "--output", "yaml"); !strings.Contains(stderr, "json or table") {
		t.Fatalf("--output yaml:\n%s", stderr)
	}
}

// hasRow reports whether a line of a table printed holds fields, in order from its start, split
// at runs of spaces; "*" matches any field.
func hasRow(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		got := strings.Fields(line)
		if len(got) < len(fields) {
			continue
		}
		match := true
		for i, f := range fields {
			if f != "*" && got[i] != f {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
