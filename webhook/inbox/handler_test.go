package inbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
	"github.com/hookstream/hookstream/webhook/inbox"
)

func TestHandler(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)
	// The receiver holds the current and the previous secret, as during a rotation (R17).
	previous := newPartner(t)
	verifier, err := webhook.NewVerifier([]string{hookstream.secret, previous.secret})
	if err != nil {
		t.Fatal(err)
	}
	stranger := newPartner(t)

	cfg := testConfig(t)
	var (
		mu        sync.Mutex
		validated []string // event types the validator saw
	)
	cfg.ValidatePayload = func(eventType string, body []byte) error {
		mu.Lock()
		validated = append(validated, eventType)
		mu.Unlock()
		if eventType == "customer.deleted" && !bytes.Contains(body, []byte(`"customer_id"`)) {
			return errors.New("data.customer_id is required")
		}
		return nil
	}
	in := newInbox(t, db.Pool, verifier, noProcessing, cfg)

	now := time.Now()
	type delivery struct {
		id   string // webhook-id; the event id unless a case changes it
		body []byte
		req  *http.Request
	}
	// atLimit is a valid envelope padded with JSON whitespace to exactly MaxBodyBytes.
	atLimit := func(id string) []byte {
		b := customerUpdated(t, id, 1)
		return append(b, bytes.Repeat([]byte(" "), inbox.DefaultMaxBodyBytes-len(b))...)
	}
	tests := []struct {
		name string
		// build returns the request and the id whose rows are counted afterwards.
		build      func(id string) delivery
		sends      int // how many times the same request is sent; 0 means 1
		wantStatus int
		wantRows   int
		wantReason string // substring of the answer body
	}{
		{name: "valid", wantStatus: 204, wantRows: 1, build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			return delivery{id: id, body: body, req: hookstream.request(id, body, now)}
		}},
		{name: "duplicate delivery", sends: 3, wantStatus: 204, wantRows: 1, build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			return delivery{id: id, body: body, req: hookstream.request(id, body, now)}
		}},
		{name: "previous secret during rotation", wantStatus: 204, wantRows: 1, build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			return delivery{id: id, body: body, req: previous.request(id, body, now)}
		}},
		{name: "test event from the admin API", wantStatus: 204, wantRows: 1, build: func(id string) delivery {
			body := envelope(t, id, "webhook.test", `{"endpoint_id":"ep_1","message":"This is a test event from hookstream. It needs no action."}`)
			return delivery{id: id, body: body, req: hookstream.request(id, body, now)}
		}},
		{name: "unknown fields and a newer schema version", wantStatus: 204, wantRows: 1, build: func(id string) delivery {
			body := []byte(`{"event_id":"` + id + `","type":"customer.updated","occurred_at":"2026-03-01T09:30:00Z",` +
				`"partner_id":"partner_a","subject":{"type":"customer","id":"cus_1"},"schema_version":2,` +
				`"data":{"customer_id":"cus_1","version":3,"new_field":true},"new_top_level":[1,2]}`)
			return delivery{id: id, body: body, req: hookstream.request(id, body, now)}
		}},
		{name: "body at the size limit", wantStatus: 204, wantRows: 1, build: func(id string) delivery {
			body := atLimit(id)
			return delivery{id: id, body: body, req: hookstream.request(id, body, now)}
		}},
		{name: "unknown secret", wantStatus: 401, wantReason: "no matching signature", build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			return delivery{id: id, req: stranger.request(id, body, now)}
		}},
		{name: "tampered body", wantStatus: 401, wantReason: "no matching signature", build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			r := hookstream.request(id, body, now)
			tampered := customerUpdated(t, id, 8)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(tampered)), int64(len(tampered))
			return delivery{id: id, req: r}
		}},
		{name: "re-serialised body", wantStatus: 401, wantReason: "no matching signature", build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			r := hookstream.request(id, body, now)
			spaced := bytes.ReplaceAll(body, []byte(`":`), []byte(`": `))
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(spaced)), int64(len(spaced))
			return delivery{id: id, req: r}
		}},
		{name: "timestamp too old", wantStatus: 401, wantReason: "tolerance", build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			return delivery{id: id, req: hookstream.request(id, body, now.Add(-webhook.DefaultTolerance-time.Minute))}
		}},
		{name: "timestamp too new", wantStatus: 401, wantReason: "tolerance", build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			return delivery{id: id, req: hookstream.request(id, body, now.Add(webhook.DefaultTolerance+time.Minute))}
		}},
		{name: "missing signature header", wantStatus: 401, wantReason: "missing", build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			r := hookstream.request(id, body, now)
			r.Header.Del(webhook.HeaderSignature)
			return delivery{id: id, req: r}
		}},
		{name: "no webhook headers at all", wantStatus: 401, wantReason: "missing", build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			return delivery{id: id, req: r}
		}},
		{name: "malformed signature header", wantStatus: 401, wantReason: "malformed", build: func(id string) delivery {
			body := customerUpdated(t, id, 7)
			r := hookstream.request(id, body, now)
			r.Header.Set(webhook.HeaderSignature, "garbage")
			return delivery{id: id, req: r}
		}},
		{name: "not JSON", wantStatus: 400, wantReason: "invalid payload", build: func(id string) delivery {
			body := []byte("event_id=" + id)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "JSON array", wantStatus: 400, wantReason: "invalid payload", build: func(id string) delivery {
			body := []byte(`[{"event_id":"` + id + `"}]`)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "JSON null", wantStatus: 400, wantReason: "event_id", build: func(id string) delivery {
			return delivery{id: id, req: hookstream.request(id, []byte("null"), now)}
		}},
		{name: "trailing garbage after the object", wantStatus: 400, wantReason: "invalid payload", build: func(id string) delivery {
			body := append(customerUpdated(t, id, 7), []byte(" {}")...)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "missing type", wantStatus: 400, wantReason: "type", build: func(id string) delivery {
			body := envelope(t, id, "", `{}`)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "missing occurred_at", wantStatus: 400, wantReason: "occurred_at", build: func(id string) delivery {
			body := []byte(`{"event_id":"` + id + `","type":"customer.updated","partner_id":"partner_a",` +
				`"subject":{"type":"customer","id":"cus_1"},"schema_version":1,"data":{}}`)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "missing partner_id", wantStatus: 400, wantReason: "partner", build: func(id string) delivery {
			body := []byte(`{"event_id":"` + id + `","type":"customer.updated","occurred_at":"2026-03-01T09:30:00Z",` +
				`"subject":{"type":"customer","id":"cus_1"},"schema_version":1,"data":{}}`)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "data not an object", wantStatus: 400, wantReason: "data", build: func(id string) delivery {
			body := envelope(t, id, "customer.updated", `[1,2]`)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "event_id differs from webhook-id", wantStatus: 400, wantReason: "webhook-id", build: func(id string) delivery {
			body := customerUpdated(t, outbox.NewEventID(), 7)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "event_id not evt_ and a ULID", wantStatus: 400, wantReason: "event_id", build: func(string) delivery {
			id := "msg_p5jXN8AQM9LWM0D4loKWxJek"
			body := customerUpdated(t, id, 7)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "validator refuses", wantStatus: 400, wantReason: "data.customer_id is required", build: func(id string) delivery {
			body := envelope(t, id, "customer.deleted", `{}`)
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "oversized by Content-Length", wantStatus: 413, wantReason: "larger than", build: func(id string) delivery {
			body := append(atLimit(id), ' ')
			return delivery{id: id, req: hookstream.request(id, body, now)}
		}},
		{name: "oversized without Content-Length", wantStatus: 413, wantReason: "larger than", build: func(id string) delivery {
			body := append(atLimit(id), ' ')
			r := hookstream.request(id, body, now)
			r.ContentLength = -1 // chunked: only reading finds out
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body)))
			return delivery{id: id, req: r}
		}},
		{name: "GET", wantStatus: 405, build: func(id string) delivery {
			r := hookstream.request(id, nil, now)
			r.Method = http.MethodGet
			return delivery{id: id, req: r}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.build(outbox.NewEventID())
			for n := range max(tt.sends, 1) {
				req := d.req
				if n > 0 { // the same delivery again, as a retry sends it
					req = req.Clone(context.Background())
					req.Body = io.NopCloser(bytes.NewReader(d.body))
				}
				rec := httptest.NewRecorder()
				in.ServeHTTP(rec, req)
				if rec.Code != tt.wantStatus {
					t.Fatalf("send %d: status %d %q, want %d", n+1, rec.Code, rec.Body, tt.wantStatus)
				}
				if !strings.Contains(rec.Body.String(), tt.wantReason) {
					t.Errorf("send %d: answer %q does not say %q", n+1, rec.Body, tt.wantReason)
				}
				for _, secret := range []string{hookstream.secret, previous.secret, strings.TrimPrefix(hookstream.secret, webhook.SecretPrefix)} {
					if strings.Contains(rec.Body.String(), secret) {
						t.Fatalf("answer %q contains a secret", rec.Body)
					}
				}
			}
			got := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM webhook_inbox WHERE id = $1`, d.id)
			if got != tt.wantRows {
				t.Fatalf("%d rows for %s, want %d", got, d.id, tt.wantRows)
			}
			if got == 1 {
				r, _ := getRow(t, db.Pool, d.id)
				if !bytes.Equal(r.Body, d.body) {
					t.Fatalf("stored body differs from the one sent:\n got %.200q\nwant %.200q", r.Body, d.body)
				}
				if r.State != "received" || r.Attempts != 0 {
					t.Fatalf("new row is %s with %d attempts, want received with 0", r.State, r.Attempts)
				}
			}
		})
	}
	// The validator sees only verified, well-formed envelopes: the 8 sends answered 204 and the
	// one it refused.
	mu.Lock()
	defer mu.Unlock()
	if len(validated) != 9 {
		t.Errorf("validator called %d times (%v), want 9", len(validated), validated)
	}
}

// Without the database the handler must not acknowledge: hookstream then retries (design.md
// section 1, "a 2xx means the receiver durably accepted the event").
func TestHandlerWithoutDatabase(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)

	closed, err := pgxpool.New(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	noTable := testConfig(t)
	noTable.Table = "not_migrated"
	unreachable := testConfig(t)
	unreachable.StoreTimeout = 200 * time.Millisecond
	blackhole := blackholePool(t)

	tests := []struct {
		name string
		in   *inbox.Inbox
	}{
		{"closed pool", newInbox(t, closed, hookstream.verifier(t), noProcessing, testConfig(t))},
		{"table missing", newInbox(t, db.Pool, hookstream.verifier(t), noProcessing, noTable)},
		{"server not answering", newInbox(t, blackhole, hookstream.verifier(t), noProcessing, unreachable)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := outbox.NewEventID()
			start := time.Now()
			if code := hookstream.deliver(tt.in, id, customerUpdated(t, id, 1)); code != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503", code)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Fatalf("503 took %s", elapsed)
			}
			if _, ok := getRow(t, db.Pool, id); ok {
				t.Fatal("a row was stored")
			}
		})
	}
}

// blackholePool is a pool whose server accepts TCP connections and never answers, like a
// database host that hangs: only the StoreTimeout ends a request.
func blackholePool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	pool, err := pgxpool.New(context.Background(), fmt.Sprintf("postgres://nobody@%s/x?sslmode=disable&connect_timeout=30", ln.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// The handler wakes this process's Run loops: with polling practically off, an event is still
// processed at once.
func TestHandlerWakesRun(t *testing.T) {
	db := newDatabase(t)
	hookstream := newPartner(t)
	cfg := testConfig(t)
	cfg.PollInterval = time.Hour
	processed := make(chan string, 10)
	in := newInbox(t, db.Pool, hookstream.verifier(t), func(_ context.Context, _ pgx.Tx, ev inbox.Event) error {
		processed <- ev.ID
		return nil
	}, cfg)
	testenv.Go(t, "Run", in.Run)
	time.Sleep(100 * time.Millisecond) // let Run pass its first, immediate look

	for range 3 {
		id := outbox.NewEventID()
		if code := hookstream.deliver(in, id, customerUpdated(t, id, 1)); code != http.StatusNoContent {
			t.Fatalf("status %d, want 204", code)
		}
		select {
		case got := <-processed:
			if got != id {
				t.Fatalf("processed %s, want %s", got, id)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("event not processed within 5 s although the poll interval is an hour: no wake-up")
		}
	}
}
