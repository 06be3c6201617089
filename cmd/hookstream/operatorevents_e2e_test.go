package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// Operator events (design.md section 8, "Operator events"), end to end: each operator event
// type is provoked by its real cause and arrives signed at an operator endpoint created with the
// operator token through the generated client; no operator event reaches a partner's endpoint,
// feed or dead-letter-free path, and an operator type written under a partner is refused.
func TestDevOperatorEvents(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db, "--retry-schedule", "1s", "--limit-test-events-per-minute", "1",
		"--limit-replay-deliveries", "1")
	ctx := context.Background()

	var ops, every, gone, dead received
	opsSrv := httptest.NewServer(ops.handler(func(int) int { return http.StatusOK }))
	defer opsSrv.Close()
	everySrv := httptest.NewServer(every.handler(func(int) int { return http.StatusOK }))
	defer everySrv.Close()
	goneSrv := httptest.NewServer(gone.handler(func(int) int { return http.StatusGone }))
	defer goneSrv.Close()
	deadSrv := httptest.NewServer(dead.handler(func(int) int { return http.StatusServiceUnavailable }))
	defer deadSrv.Close()

	// The operator's endpoint, through the generated client with the operator token.
	created, err := dev.api.OperatorCreateEndpointWithResponse(ctx, adminclient.EndpointCreate{URL: opsSrv.URL + "/ops", EventTypes: []string{"operator.*"}})
	must(t, "create operator endpoint", created, err)
	opsVerifier, err := webhook.NewVerifier([]string{created.JSON201.Secret})
	if err != nil {
		t.Fatal(err)
	}

	// A partner with an endpoint subscribed to every type, one answering 410, one dead.
	everyID, _ := dev.createEndpoint(t, "pa", everySrv.URL+"/all", "*")
	goneID, _ := dev.createEndpoint(t, "pa", goneSrv.URL+"/gone", "customer.*")
	deadID, _ := dev.createEndpoint(t, "pa", deadSrv.URL+"/dead", "customer.*")
	oneID, _ := dev.createEndpoint(t, "pa", everySrv.URL+"/one", "customer.updated")
	keyRes, err := dev.api.CreateAPIKeyWithResponse(ctx, "pa", adminclient.APIKeyCreate{})
	must(t, "create api key", keyRes, err)
	partnerKey := keyRes.JSON201.Key
	time.Sleep(500 * time.Millisecond)

	appendEvent(t, db, "pa", "customer.created")
	appendEvent(t, db, "pa", "customer.updated")
	// An operator type written under a partner: refused by cdc, never delivered to pa.
	refused := db.AppendEvent(ctx, t, outbox.Event{PartnerID: "pa", Type: eventcatalog.OperatorQuotaRefused,
		Subject: outbox.Subject{Type: "partner", ID: "pa"}, Data: []byte(`{"partner_id":"pa","quota":"endpoints","limit":1,"usage":1}`)})

	// Two test events, one over the per-minute quota of 1.
	call := func(token, method, path string, body any) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, dev.adminURL+path, rd)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if s, b := call(partnerKey, "POST", "/v1/partners/pa/endpoints/"+everyID+"/test", nil); s != http.StatusAccepted {
		t.Fatalf("first test event: %d %s", s, b)
	}
	if s, b := call(partnerKey, "POST", "/v1/partners/pa/endpoints/"+everyID+"/test", nil); s != http.StatusTooManyRequests {
		t.Fatalf("second test event: %d %s, want 429", s, b)
	}

	// Wait for the dead delivery to fail for good, then replay from history (one delivery:
	// succeeds) and from the log (more than the per-job limit of 1: fails).
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	testenv.Eventually(t, 60*time.Second, "the dead endpoint's deliveries failed, the other's succeeded", func() bool {
		var failed, succeeded int
		_ = db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE endpoint_id = $1 AND state = 'failed'),
			count(*) FILTER (WHERE endpoint_id = $2 AND state = 'succeeded') FROM delivery`, deadID, oneID).Scan(&failed, &succeeded)
		return failed == 2 && succeeded == 1
	})
	if s, b := call(partnerKey, "POST", "/v1/partners/pa/endpoints/"+everyID+"/replay", map[string]string{"since": since, "source": "history", "state": "succeeded"}); s != http.StatusUnprocessableEntity {
		t.Fatalf("history replay of several deliveries: %d %s, want 422 replay_too_large", s, b)
	}
	if s, b := call(partnerKey, "POST", "/v1/partners/pa/endpoints/"+deadID+"/replay", map[string]string{"since": since, "source": "log"}); s != http.StatusAccepted {
		t.Fatalf("log replay: %d %s", s, b)
	}
	testenv.Eventually(t, 60*time.Second, "the log replay job ended", func() bool {
		var n int
		_ = db.Pool.QueryRow(ctx, `SELECT count(*) FROM replay_job WHERE state IN ('queued', 'running')`).Scan(&n)
		return n == 0
	})
	if s, b := call(partnerKey, "POST", "/v1/partners/pa/endpoints/"+oneID+"/replay", map[string]string{"since": since, "source": "history"}); s != http.StatusAccepted {
		t.Fatalf("history replay: %d %s", s, b)
	}

	// Every operator type arrives, signed, at the operator endpoint.
	want := []string{eventcatalog.OperatorEndpointDisabled, eventcatalog.OperatorDeliveryDeadLettered,
		eventcatalog.OperatorReplayJobSucceeded, eventcatalog.OperatorReplayJobFailed,
		eventcatalog.OperatorQuotaRefused, eventcatalog.OperatorOutboxRowDeadLettered}
	seen := map[string]outbox.Envelope{}
	deadline := time.Now().Add(120 * time.Second)
	for len(seen) < len(want) {
		for _, m := range ops.all() {
			if err := opsVerifier.VerifyHeader(m.header, m.body); err != nil {
				t.Fatalf("operator request does not verify: %v", err)
			}
			var env outbox.Envelope
			if err := json.Unmarshal(m.body, &env); err != nil {
				t.Fatal(err)
			}
			if env.PartnerID != outbox.OperatorPartnerID || !slices.Contains(want, env.Type) {
				t.Fatalf("operator endpoint got %s", m.body)
			}
			seen[env.Type] = env
		}
		if time.Now().After(deadline) {
			t.Fatalf("operator endpoint got %d of %d types: %v", len(seen), len(want), ops.all())
		}
		time.Sleep(200 * time.Millisecond)
	}
	data := func(typ string) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(seen[typ].Data, &m)
		return m
	}
	if d := data(eventcatalog.OperatorEndpointDisabled); d["endpoint_id"] != goneID || d["partner_id"] != "pa" {
		t.Errorf("operator.endpoint.disabled %v, want the 410 endpoint %s", d, goneID)
	}
	// The last one may be the log replay's attempt, numbered above the automatic ones.
	if d := data(eventcatalog.OperatorDeliveryDeadLettered); d["endpoint_id"] != deadID || d["attempt_count"].(float64) < 2 {
		t.Errorf("operator.delivery.dead_lettered %v, want a delivery of %s after at least 2 attempts", d, deadID)
	}
	if d := data(eventcatalog.OperatorOutboxRowDeadLettered); d["event_id"] != refused || d["reason"] != "unknown_type" {
		t.Errorf("operator.cdc.dead_lettered %v, want %s refused as unknown_type", d, refused)
	}
	if d := data(eventcatalog.OperatorReplayJobFailed); d["endpoint_id"] != deadID || d["state"] != "failed" {
		t.Errorf("operator.replay_job.failed %v", d)
	}
	if d := data(eventcatalog.OperatorReplayJobSucceeded); d["endpoint_id"] != oneID || d["total"] != 1.0 {
		t.Errorf("operator.replay_job.succeeded %v", d)
	}

	// Never to a partner: pa's endpoint of every type, its feed and its stream of deliveries
	// hold no operator event, and the refused row reached nobody.
	time.Sleep(2 * time.Second)
	for _, m := range every.all() {
		var env outbox.Envelope
		_ = json.Unmarshal(m.body, &env)
		if eventcatalog.IsOperatorType(env.Type) || env.PartnerID != "pa" || env.EventID == refused {
			t.Errorf("partner endpoint got %s", m.body)
		}
	}
	s, b := call(partnerKey, "GET", "/v1/partners/pa/events?limit=100", nil)
	if s != http.StatusOK || strings.Contains(string(b), `"operator.`) || strings.Contains(string(b), refused) {
		t.Errorf("partner feed: %d %s", s, b)
	}
	// The CLI lists the operator's endpoints with --operator, through the generated client.
	var listed bytes.Buffer
	if err := run(ctx, []string{"endpoints", "list", "--operator", "--admin-url", dev.adminURL, "--admin-token", dev.token, "--output", "json"}, &listed); err != nil ||
		!strings.Contains(listed.String(), created.JSON201.ID) || strings.Contains(listed.String(), everyID) {
		t.Errorf("hookstream endpoints list --operator: %v\n%s", err, listed.String())
	}
	// Operator routes refuse the partner's key; the reserved partner is no partner path.
	if s, _ := call(partnerKey, "GET", "/v1/operator/endpoints", nil); s != http.StatusForbidden {
		t.Errorf("partner key on the operator's endpoints: %d, want 403", s)
	}
	for _, token := range []string{partnerKey, dev.token} {
		if s, _ := call(token, "GET", "/v1/partners/hookstream:operator/events", nil); s != http.StatusNotFound {
			t.Errorf("the reserved partner's feed: %d, want 404", s)
		}
	}
	if s, b := call(dev.token, "POST", "/v1/partners", map[string]string{"id": outbox.OperatorPartnerID}); s != http.StatusUnprocessableEntity {
		t.Errorf("creating the reserved partner: %d %s, want 422", s, b)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO partner_api_key (id, partner_id, key_hash) VALUES ('key_x', $1, '\x00')`,
		outbox.OperatorPartnerID); err == nil || !strings.Contains(err.Error(), "partner_api_key_not_operator") {
		t.Errorf("an API key for the reserved partner: %v, want the check partner_api_key_not_operator", err)
	}
}
