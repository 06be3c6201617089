package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// received is what a test receiver got.
type received struct {
	mu   sync.Mutex
	msgs []receivedMsg
}

type receivedMsg struct {
	header http.Header
	body   []byte
}

func (r *received) handler(status func(n int) int) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.msgs = append(r.msgs, receivedMsg{req.Header.Clone(), body})
		n := len(r.msgs)
		r.mu.Unlock()
		w.WriteHeader(status(n))
	}
}

func (r *received) all() []receivedMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedMsg(nil), r.msgs...)
}

func (r *received) waitFor(t *testing.T, n int, timeout time.Duration) []receivedMsg {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(r.all()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("receiver got %d requests in %s, want %d", len(r.all()), timeout, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r.all()
}

// devInstance is a running `hookstream dev`.
type devInstance struct {
	dataDir, adminURL, token string
	resellerAddr             string
	api                      *adminclient.ClientWithResponses // the admin API as the operator
}

// startDev runs `hookstream dev` on db until the test ends. Its ports come from
// testenv.FreePort, and another test's process can take one before dev binds it: dev then exits
// with "address already in use" and is started again on other ports.
func startDev(t *testing.T, db *testenv.Database, extra ...string) *devInstance {
	t.Helper()
	for attempt := 1; ; attempt++ {
		d, err := launchDev(t, db, extra)
		if err == nil {
			return d
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("%v: again on other ports", err)
	}
}

// launchDev starts dev and waits until it is ready, or returns why it exited first. Ready means
// its /readyz answers 200 and its own operator token is accepted: on a port another test's dev
// has taken, that one's /readyz answers, but it refuses this token.
func launchDev(t *testing.T, db *testenv.Database, extra []string) (*devInstance, error) {
	t.Helper()
	dataDir := t.TempDir()
	adminAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	resellerAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	args := append([]string{"dev",
		"--database-url", db.URL, "--admin-addr", adminAddr, "--reseller-addr", resellerAddr,
		"--dev-kafka-port", fmt.Sprint(testenv.FreePort(t)), "--data-dir", dataDir,
		"--topic-partitions", "2", "--cdc-slot", db.Name, "--log-format", "text",
	}, extra...)
	go func() { done <- run(ctx, args, &bytes.Buffer{}) }()
	exited := false // dev returned before it was ready, and that was reported
	t.Cleanup(func() {
		cancel()
		if exited {
			return
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("dev: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("dev did not stop within 60s")
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	var token string
	for {
		select {
		case err := <-done:
			exited = true
			return nil, fmt.Errorf("dev exited before it was ready: %v", err)
		default:
		}
		if b, err := os.ReadFile(filepath.Join(dataDir, "dev-admin-token")); err == nil {
			token = strings.TrimSpace(string(b))
		}
		if token != "" && answers(adminAddr, "/readyz", "") && answers(adminAddr, "/v1/partners", token) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dev not ready after 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Wait until cdc streams, so what the test writes next flows through the WAL.
	testenv.WaitSlotStreaming(t, db.Pool, db.Name, time.Until(deadline))
	d := &devInstance{dataDir: dataDir, adminURL: "http://" + adminAddr, token: token, resellerAddr: resellerAddr}
	var err error
	if d.api, err = adminclient.New(d.adminURL, d.token); err != nil {
		t.Fatal(err)
	}
	return d, nil
}

// answers reports whether a GET of path on addr, with token as its bearer token when given,
// is answered 200.
func answers(addr, path, token string) bool {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// must fails the test when an admin API call was not answered with a 2xx.
func must(t *testing.T, what string, res adminclient.Response, err error) {
	t.Helper()
	if err := adminclient.Check(res, err); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// createEndpoint creates a partner (once) and an endpoint through the admin API and returns the
// endpoint's id and its secret, shown only in this response.
func (d *devInstance) createEndpoint(t *testing.T, partner, url string, types ...string) (id, secret string) {
	t.Helper()
	ctx := context.Background()
	p, err := d.api.GetPartnerWithResponse(ctx, partner)
	if err == nil && p.ApplicationProblemJSON404 != nil {
		created, err := d.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: partner, Name: &partner})
		must(t, "create partner "+partner, created, err)
	}
	res, err := d.api.CreateEndpointWithResponse(ctx, partner, adminclient.EndpointCreate{URL: url, EventTypes: types})
	must(t, "create endpoint", res, err)
	if ep := res.JSON201; ep == nil || ep.Status != adminclient.EndpointCreatedStatusActive || !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("created endpoint %s", res.Body)
	}
	return res.JSON201.ID, res.JSON201.Secret
}

// appendEvent commits an event of the catalog type typ about customer cus_42, with the catalog's
// example data, and returns its id.
func appendEvent(t *testing.T, db *testenv.Database, partner, typ string) string {
	t.Helper()
	return db.AppendEvent(context.Background(), t, outbox.Event{PartnerID: partner, Type: typ,
		Subject: outbox.Subject{Type: "customer", ID: "cus_42"}, Data: testenv.CatalogData(t, typ, nil)})
}

// The quick start does everything built so far, end to end: an event committed with the outbox
// reaches the partner's receiver as a verifiable Standard Webhooks request, a failure is retried
// with the same webhook-id, and every attempt lands in the history tables (R1, R10, R15, R18).
func TestDevDeliversEndToEnd(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db, "--retry-schedule", "1s,1s")

	var rx received
	srv := httptest.NewServer(rx.handler(func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable // the first attempt fails and is retried
		}
		return http.StatusOK
	}))
	defer srv.Close()
	var other received
	otherSrv := httptest.NewServer(other.handler(func(int) int { return http.StatusOK }))
	defer otherSrv.Close()

	epA, secret := dev.createEndpoint(t, "pa", srv.URL+"/hooks", "customer.*")
	dev.createEndpoint(t, "pb", otherSrv.URL+"/hooks", "*")
	time.Sleep(500 * time.Millisecond) // the endpoint records reach the views before the event
	eventID := appendEvent(t, db, "pa", "customer.created")

	msgs := rx.waitFor(t, 2, 60*time.Second)
	v, err := webhook.NewVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	// R15: the official Standard Webhooks library verifies the real deliveries too.
	official, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if err := v.VerifyHeader(m.header, m.body); err != nil {
			t.Fatalf("request %d does not verify: %v", i+1, err)
		}
		if err := official.Verify(m.body, m.header); err != nil {
			t.Fatalf("request %d: the official Standard Webhooks library refuses it: %v", i+1, err)
		}
		if m.header.Get("webhook-id") != eventID {
			t.Fatalf("request %d webhook-id %q, want %s", i+1, m.header.Get("webhook-id"), eventID)
		}
		var env outbox.Envelope
		if err := json.Unmarshal(m.body, &env); err != nil || env.EventID != eventID || env.PartnerID != "pa" {
			t.Fatalf("request %d body %s (%v)", i+1, m.body, err)
		}
	}
	if n := len(other.all()); n != 0 {
		t.Fatalf("another partner's receiver got %d requests", n)
	}

	// The recorder writes both attempts, and the history shows them (R18).
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := dev.api.ListDeliveriesWithResponse(ctx, "pa", epA, nil)
		must(t, "list deliveries", list, err)
		if d := list.JSON200.Data; len(d) == 1 && d[0].EventID == eventID &&
			d[0].State == adminclient.DeliveryStateSucceeded && d[0].AttemptCount == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history of %s: %s; want the event succeeded after 2 attempts", epA, list.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	detail, err := dev.api.GetDeliveryWithResponse(ctx, "pa", records.DeliveryID(eventID, epA))
	must(t, "get delivery", detail, err)
	var statuses []int
	for _, a := range detail.JSON200.Attempts {
		if a.Status != nil {
			statuses = append(statuses, *a.Status)
		}
	}
	if fmt.Sprint(statuses) != "[503 200]" {
		t.Fatalf("attempts answered %v, want [503 200]: %s", statuses, detail.Body)
	}
}

// R23: with a compressed failure window, a dead endpoint gets endpoint.failing and then is
// disabled with endpoint.disabled, and the partner's other endpoint, subscribed to endpoint.*,
// receives both as ordinary signed webhooks.
func TestDevFailureWindow(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db, "--retry-schedule", "1s,1s,1s,1s,1s,1s,1s,1s",
		"--failing-warn-after", "2s", "--failing-disable-after", "5s")

	var dead received
	deadSrv := httptest.NewServer(dead.handler(func(int) int { return http.StatusInternalServerError }))
	defer deadSrv.Close()
	var ops received
	opsSrv := httptest.NewServer(ops.handler(func(int) int { return http.StatusOK }))
	defer opsSrv.Close()

	deadID, _ := dev.createEndpoint(t, "pa", deadSrv.URL+"/hooks", "customer.*")
	_, opsSecret := dev.createEndpoint(t, "pa", opsSrv.URL+"/ops", "endpoint.*")
	time.Sleep(500 * time.Millisecond)
	appendEvent(t, db, "pa", "customer.created")

	v, err := webhook.NewVerifier([]string{opsSecret})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		var types []string
		for _, m := range ops.all() {
			if err := v.VerifyHeader(m.header, m.body); err != nil {
				t.Fatalf("ops request does not verify: %v", err)
			}
			var env outbox.Envelope
			if err := json.Unmarshal(m.body, &env); err != nil || env.Subject.ID != deadID {
				t.Fatalf("ops request %s (%v)", m.body, err)
			}
			types = append(types, env.Type)
		}
		if strings.Join(types, ",") == "endpoint.failing,endpoint.disabled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ops endpoint received %v, want endpoint.failing then endpoint.disabled", types)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var status string
	if err := db.Pool.QueryRow(context.Background(), `SELECT status FROM endpoint WHERE id = $1`, deadID).Scan(&status); err != nil || status != "disabled" {
		t.Fatalf("dead endpoint %s (%v)", status, err)
	}
}

// R4: rows a platform commits beside the checking writer, of a type the catalog does not
// know or with data their type's schema refuses, reach no receiver, neither one subscribed to
// every type nor one subscribed to exactly theirs; the operator lists them with the reasons, and
// the valid events around them are delivered.
func TestDevRefusesRowsOutsideTheCatalog(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	var every, exact received
	everySrv := httptest.NewServer(every.handler(func(int) int { return http.StatusOK }))
	defer everySrv.Close()
	exactSrv := httptest.NewServer(exact.handler(func(int) int { return http.StatusOK }))
	defer exactSrv.Close()
	dev.createEndpoint(t, "pa", everySrv.URL+"/hooks", "*")
	dev.createEndpoint(t, "pa", exactSrv.URL+"/hooks", "invoice.paid", "balance.credited")
	time.Sleep(500 * time.Millisecond) // the endpoint records reach the views before the events

	ctx := context.Background()
	raw := func(typ, data string) string {
		t.Helper()
		id := outbox.NewEventID()
		if _, err := db.Pool.Exec(ctx, `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
			VALUES ($1, 'pa', $2, 'customer', 'cus_42', now(), $3)`, id, typ, data); err != nil {
			t.Fatal(err)
		}
		return id
	}
	valid := []string{appendEvent(t, db, "pa", "customer.created")}
	unknown := raw("invoice.paid", `{"invoice_id":"inv_1","amount":{"value":"10.00","currency":"USD"}}`)
	invalid := raw("balance.credited", `{"customer_id":"cus_42","credit_id":"crd_1","amount":{"value":50.0,"currency":"USD"},"balance":{"value":"62.40","currency":"USD"}}`)
	// R6: a field the catalog forbids anywhere in data, though the type's schema is open.
	forbidden := raw("customer.created", `{"customer_id":"cus_42","status":"active","created_at":"2026-03-01T09:30:00Z","debug":{"api_key":"rsk_live_leaked"}}`)
	valid = append(valid, appendEvent(t, db, "pa", "balance.credited"), appendEvent(t, db, "pa", "customer.deleted"))

	ids := func(msgs []receivedMsg) []string {
		var out []string
		for _, m := range msgs {
			out = append(out, m.header.Get("webhook-id"))
		}
		return out
	}
	every.waitFor(t, 3, 60*time.Second)
	exact.waitFor(t, 1, 60*time.Second)
	var page adminclient.OutboxDeadLetterList
	deadline := time.Now().Add(30 * time.Second)
	for len(page.Data) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/outbox/dead-letters lists %+v, want the three refused rows", page.Data)
		}
		time.Sleep(100 * time.Millisecond)
		res, err := dev.api.ListOutboxDeadLettersWithResponse(ctx, nil)
		must(t, "list outbox dead letters", res, err)
		page = *res.JSON200
	}
	if d := page.Data[0]; d.EventID != forbidden || d.Reason != adminclient.OutboxDeadLetterReasonInvalidData || !strings.Contains(d.Detail, "data/debug/api_key") {
		t.Errorf("newest refused row %+v, want %s as invalid_data at data/debug/api_key", d, forbidden)
	}
	if d := page.Data[1]; d.EventID != invalid || d.Reason != adminclient.OutboxDeadLetterReasonInvalidData || !strings.Contains(d.Detail, "data/amount/value") {
		t.Errorf("refused row %+v, want %s as invalid_data", d, invalid)
	}
	if d := page.Data[2]; d.EventID != unknown || d.Reason != adminclient.OutboxDeadLetterReasonUnknownType {
		t.Errorf("oldest refused row %+v, want %s as unknown_type", d, unknown)
	}
	// The operator sees them in the metric too, by reason.
	metrics := scrape(t, dev.adminURL+"/metrics")
	for _, want := range []string{`hookstream_cdc_dead_letters_total{reason="invalid_data"} 2`, `hookstream_cdc_dead_letters_total{reason="unknown_type"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	time.Sleep(time.Second) // anything still on its way arrives
	if got := ids(every.all()); !testenv.SameElements(got, valid) {
		t.Errorf("the receiver of every type got %v, want %v", got, valid)
	}
	if got := ids(exact.all()); len(got) != 1 || got[0] != valid[1] {
		t.Errorf("the receiver of invoice.paid and balance.credited got %v, want only %s", got, valid[1])
	}
}

// scrape returns the text of a metrics page.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
