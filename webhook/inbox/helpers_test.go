package inbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
	"github.com/hookstream/hookstream/webhook/inbox"
)

// newDatabase returns a fresh database holding the default inbox table.
func newDatabase(t testing.TB) *testenv.Database {
	t.Helper()
	db := testenv.NewEmptyDatabase(t)
	if err := inbox.Migrate(context.Background(), db.Pool); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return db
}

func newSecret(t testing.TB) string {
	t.Helper()
	s, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// partner is a hookstream endpoint as the receiver knows it: its secret, and a signer playing
// hookstream's sender.
type partner struct {
	secret string
	signer *webhook.Signer
}

func newPartner(t testing.TB) partner {
	t.Helper()
	secret := newSecret(t)
	signer, err := webhook.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	return partner{secret: secret, signer: signer}
}

func (p partner) verifier(t testing.TB) *webhook.Verifier {
	t.Helper()
	v, err := webhook.NewVerifier([]string{p.secret})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// request is a delivery of body with webhook-id id, signed at the given time.
func (p partner) request(id string, body []byte, at time.Time) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhooks/hookstream", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	p.signer.SetHeaders(r.Header, id, at, body)
	return r
}

// deliver posts a fresh signed delivery to h and returns the status code.
func (p partner) deliver(h http.Handler, id string, body []byte) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, p.request(id, body, time.Now()))
	return rec.Code
}

// deliverPickedUp delivers one event to h and waits until the instance's ProcessFunc took it (it
// closes started, then holds the event as a killed or stopping instance does); it returns the
// event's id.
func (p partner) deliverPickedUp(t *testing.T, h http.Handler, started <-chan struct{}) string {
	t.Helper()
	id := outbox.NewEventID()
	if code := p.deliver(h, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
		t.Fatalf("delivery: %d", code)
	}
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the event was not picked up")
	}
	return id
}

// envelope serialises an event the way hookstream's cdc does: encoding/json in the Envelope's
// field order, HTML characters unescaped, no trailing newline.
func envelope(t testing.TB, id, typ, data string) []byte {
	t.Helper()
	env := outbox.Envelope{
		EventID:       id,
		Type:          typ,
		OccurredAt:    time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC),
		PartnerID:     "partner_a",
		Subject:       outbox.Subject{Type: "customer", ID: "cus_8f2k1"},
		SchemaVersion: 1,
		Data:          json.RawMessage(data),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func customerUpdated(t testing.TB, id string, version int) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{"customer_id": "cus_8f2k1", "changed": []string{"status"}, "version": version})
	if err != nil {
		t.Fatal(err)
	}
	return envelope(t, id, "customer.updated", string(data))
}

// testConfig is DefaultConfig with quick polling and retries, logging to the test.
func testConfig(t testing.TB) inbox.Config {
	cfg := inbox.DefaultConfig()
	cfg.PollInterval = 20 * time.Millisecond
	cfg.FirstRetryDelay = 50 * time.Millisecond
	cfg.MaxRetryDelay = 200 * time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return cfg
}

// testWriter sends log lines to t.Log, so they show only for failing tests.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

func newInbox(t testing.TB, pool *pgxpool.Pool, v *webhook.Verifier, process inbox.ProcessFunc, cfg inbox.Config) *inbox.Inbox {
	t.Helper()
	in, err := inbox.New(pool, v, process, cfg)
	if err != nil {
		t.Fatalf("inbox.New: %v", err)
	}
	return in
}

// row is an inbox row as an operator would query it.
type row struct {
	State         string
	Attempts      int
	Body          []byte
	LastError     *string
	NextAttemptAt *time.Time
	ProcessedAt   *time.Time
}

// getRow returns the row of id, or ok false when there is none.
func getRow(t testing.TB, pool *pgxpool.Pool, id string) (r row, ok bool) {
	t.Helper()
	err := pool.QueryRow(context.Background(),
		`SELECT state, attempts, body, last_error, next_attempt_at, processed_at FROM webhook_inbox WHERE id = $1`, id).
		Scan(&r.State, &r.Attempts, &r.Body, &r.LastError, &r.NextAttemptAt, &r.ProcessedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false
	}
	if err != nil {
		t.Fatalf("read inbox row %s: %v", id, err)
	}
	return r, true
}

// noProcessing is a ProcessFunc for tests of the handler alone.
func noProcessing(context.Context, pgx.Tx, inbox.Event) error { return nil }

// bodyOf is a request body holding b.
func bodyOf(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
