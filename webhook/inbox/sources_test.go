package inbox_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
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

const githubSecret = "github webhook secret"

// githubRequest is a push delivery as GitHub sends it.
func githubRequest(delivery string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhooks/github", bytes.NewReader(body))
	m := hmac.New(sha256.New, []byte(githubSecret))
	m.Write(body)
	r.Header.Set(webhook.HeaderGitHubSignature, "sha256="+hex.EncodeToString(m.Sum(nil)))
	r.Header.Set(webhook.HeaderGitHubDelivery, delivery)
	r.Header.Set(webhook.HeaderGitHubEvent, "push")
	return r
}

func githubSource(t testing.TB) inbox.Source {
	t.Helper()
	v, err := webhook.NewGitHubVerifier([]string{githubSecret})
	if err != nil {
		t.Fatal(err)
	}
	return inbox.Source{Name: "github", Verifier: v}
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// Events of other sources share the table, keyed by (source, id): the same id from two
// sources is two events; each is processed once, and its Event names the source.
func TestHandlerForOtherSources(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)
	processed := make(chan inbox.Event, 10)
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(_ context.Context, _ pgx.Tx, ev inbox.Event) error {
		processed <- ev
		return nil
	}, testConfig(t))
	gh, err := in.Handler(githubSource(t))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, "Run", in.Run)

	id := outbox.NewEventID() // GitHub's ids are GUIDs, but any string may collide across sources
	push := []byte(`{"ref":"refs/heads/main","repository":{"full_name":"acme/app"}}`)
	if rec := serve(gh, githubRequest(id, push)); rec.Code != http.StatusNoContent {
		t.Fatalf("GitHub delivery: %d %q", rec.Code, rec.Body)
	}
	if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
		t.Fatalf("hookstream delivery under the same id: %d", code)
	}
	got := map[string]inbox.Event{}
	for range 2 {
		select {
		case ev := <-processed:
			got[ev.Source] = ev
		case <-time.After(5 * time.Second):
			t.Fatalf("processed only %v", got)
		}
	}
	if ev := got["github"]; ev.ID != id || ev.Type != "push" || !bytes.Equal(ev.Body, push) {
		t.Fatalf("GitHub event %+v", ev)
	}
	if ev := got[inbox.HookstreamSource]; ev.ID != id || ev.Type != "customer.updated" {
		t.Fatalf("hookstream event %+v", ev)
	}
	testenv.Eventually(t, 5*time.Second, "one processed row per source", func() bool {
		return testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox WHERE id = $1 AND state = 'processed'`, id) == 2
	})

	// The GitHub handler answers as ServeHTTP does.
	tampered := githubRequest(id, push)
	tampered.Body = bodyOf(append(push, ' '))
	for _, tt := range []struct {
		name string
		req  *http.Request
		want int
		body string
	}{
		{"redelivery", githubRequest(id, push), http.StatusNoContent, ""},
		{"tampered body", tampered, http.StatusUnauthorized, "no matching signature"},
		{"no delivery id", func() *http.Request {
			r := githubRequest("", push)
			r.Header.Del(webhook.HeaderGitHubDelivery)
			return r
		}(),
			http.StatusBadRequest, "no event id"},
		{"no signature", func() *http.Request {
			r := githubRequest(id, push)
			r.Header.Del(webhook.HeaderGitHubSignature)
			return r
		}(),
			http.StatusUnauthorized, "X-Hub-Signature-256"},
	} {
		rec := serve(gh, tt.req)
		if rec.Code != tt.want || !strings.Contains(rec.Body.String(), tt.body) {
			t.Errorf("%s: %d %q, want %d %q", tt.name, rec.Code, rec.Body, tt.want, tt.body)
		}
	}
	select {
	case ev := <-processed:
		t.Fatalf("processed again: %+v", ev)
	case <-time.After(300 * time.Millisecond):
	}

	for _, bad := range []inbox.Source{{Name: "GitHub", Verifier: githubSource(t).Verifier}, {Name: "github"}, {Name: ""}} {
		if _, err := in.Handler(bad); err == nil {
			t.Errorf("Handler(%+v) accepted", bad)
		}
	}
}

// A verified request carrying a stored event's id with another body is refused (409), never
// processed, and leaves the stored event as it was (R29).
func TestHandlerRefusesBodyConflict(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)
	in := newInbox(t, db.Pool, hookstream.verifier(t), noProcessing, testConfig(t))
	id := outbox.NewEventID()
	first := customerUpdated(t, id, 1)
	if code := hookstream.deliver(in, id, first); code != http.StatusNoContent {
		t.Fatalf("first delivery: %d", code)
	}
	rec := serve(in, hookstream.request(id, customerUpdated(t, id, 2), time.Now()))
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "different body") {
		t.Fatalf("different body: %d %q, want 409", rec.Code, rec.Body)
	}
	r, _ := getRow(t, db.Pool, id)
	if !bytes.Equal(r.Body, first) || r.State != "received" {
		t.Fatalf("stored row changed: %s %.80q", r.State, r.Body)
	}
	if code := hookstream.deliver(in, id, first); code != http.StatusNoContent {
		t.Fatalf("the same body again: %d, want 204", code)
	}
}

// A copy of an event processed with a result gets that result back: what a sender that lost
// the first answer needs. A copy of one processed without a result gets 204.
func TestDuplicateOfFinishedEventGetsStoredResult(t *testing.T) {
	db := newEffectsDatabase(t)
	hookstream := newPartner(t)
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		if err := applyEffect(ctx, tx, ev); err != nil {
			return err
		}
		if strings.Contains(string(ev.Body), `"version":1`) {
			return ev.SetResult(json.RawMessage(`{"invoice_id":"in_` + ev.ID[4:12] + `","status":"created"}`))
		}
		return nil
	}, testConfig(t))
	testenv.Go(t, "Run", in.Run)

	withResult, without := outbox.NewEventID(), outbox.NewEventID()
	for _, d := range []struct {
		id      string
		version int
	}{{withResult, 1}, {without, 2}} {
		if code := hookstream.deliver(in, d.id, customerUpdated(t, d.id, d.version)); code != http.StatusNoContent {
			t.Fatalf("first delivery: %d, want 204 (stored, not yet processed)", code)
		}
		testenv.Eventually(t, 5*time.Second, "processed", func() bool { r, _ := getRow(t, db.Pool, d.id); return r.State == "processed" })
	}
	rec := serve(in, hookstream.request(withResult, customerUpdated(t, withResult, 1), time.Now()))
	want := `{"invoice_id":"in_` + withResult[4:12] + `","status":"created"}`
	if rec.Code != http.StatusOK || rec.Body.String() != want || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("copy of a finished event: %d %q (%s), want 200 %s", rec.Code, rec.Body, rec.Header().Get("Content-Type"), want)
	}
	if rec := serve(in, hookstream.request(without, customerUpdated(t, without, 2), time.Now())); rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("copy of an event without a result: %d %q, want 204", rec.Code, rec.Body)
	}
	time.Sleep(200 * time.Millisecond)
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM effects`); n != 2 {
		t.Fatalf("%d effects, want 2: a copy was processed again", n)
	}
	if err := (inbox.Event{}).SetResult(json.RawMessage(`{}`)); err == nil {
		t.Fatal("SetResult outside a ProcessFunc succeeded")
	}
}

// Purge deletes rows finished before the retention, processed and refused, and keeps recent
// ones, dead ones and unfinished ones.
func TestPurge(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.Retention = 24 * time.Hour
	in := newInbox(t, db.Pool, hookstream.verifier(t), noProcessing, cfg)
	ids := map[string]string{} // name → id
	for _, name := range []string{"old processed", "old refused", "recent processed", "old dead", "old received"} {
		id := outbox.NewEventID()
		ids[name] = id
		if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
			t.Fatalf("%s: %d", name, code)
		}
	}
	ctx := context.Background()
	for _, set := range []struct{ name, sql string }{
		{"old processed", `UPDATE webhook_inbox SET state = 'processed', next_attempt_at = NULL, processed_at = now() - interval '25 hours' WHERE id = $1`},
		{"old refused", `UPDATE webhook_inbox SET state = 'refused', next_attempt_at = NULL, refused_at = now() - interval '25 hours' WHERE id = $1`},
		{"recent processed", `UPDATE webhook_inbox SET state = 'processed', next_attempt_at = NULL, processed_at = now() - interval '23 hours' WHERE id = $1`},
		{"old dead", `UPDATE webhook_inbox SET state = 'dead', next_attempt_at = NULL, received_at = now() - interval '90 days' WHERE id = $1`},
		{"old received", `UPDATE webhook_inbox SET received_at = now() - interval '90 days' WHERE id = $1`},
	} {
		if _, err := db.Pool.Exec(ctx, set.sql, ids[set.name]); err != nil {
			t.Fatalf("%s: %v", set.name, err)
		}
	}
	n, err := in.Purge(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Purge = %d, %v; want 2", n, err)
	}
	for name, id := range ids {
		_, ok := getRow(t, db.Pool, id)
		if want := !strings.HasPrefix(name, "old processed") && !strings.HasPrefix(name, "old refused"); ok != want {
			t.Errorf("%s: row kept %v, want %v", name, ok, want)
		}
	}
	cfg.Retention = 0
	keepAll := newInbox(t, db.Pool, hookstream.verifier(t), noProcessing, cfg)
	if n, err := keepAll.Purge(ctx); n != 0 || err != nil {
		t.Fatalf("Purge without a retention = %d, %v", n, err)
	}
}

// A request for a source the inbox does not receive is answered 404, stored nowhere and
// counted: UnknownSource mounted on the sources' common prefix, and ServeHTTP of an inbox made
// with Open, which receives no hookstream webhooks.
func TestUnknownSource(t *testing.T) {
	db := newDatabase(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig(t)
	cfg.Registerer = reg
	in, err := inbox.Open(db.Pool, noProcessing, cfg)
	if err != nil {
		t.Fatal(err)
	}
	gh, err := in.Handler(githubSource(t))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/github", gh)
	mux.Handle("/webhooks/", in.UnknownSource())
	mux.Handle("POST /webhooks/hookstream", in)

	body := []byte(`{"ref":"refs/heads/main"}`)
	for _, tt := range []struct {
		path string
		want int
	}{
		{"/webhooks/github", http.StatusNoContent},
		{"/webhooks/twilio", http.StatusNotFound},
		{"/webhooks/hookstream", http.StatusNotFound}, // Open: no hookstream source
	} {
		r := githubRequest("d-"+tt.path, body)
		r.URL.Path = tt.path
		if rec := serve(mux, r); rec.Code != tt.want {
			t.Errorf("POST %s: %d %q, want %d", tt.path, rec.Code, rec.Body, tt.want)
		}
	}
	if got := testenv.Counter(t, reg, "hookstream_inbox_unknown_source_requests_total"); got != 2 {
		t.Errorf("hookstream_inbox_unknown_source_requests_total = %v, want 2", got)
	}
	if got := testenv.Counter(t, reg, "hookstream_inbox_verification_failures_total"); got != 0 {
		t.Errorf("unknown sources counted as %v verification failures, want 0", got)
	}
	if n := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox`); n != 1 {
		t.Errorf("%d rows, want only the github event's", n)
	}
}
