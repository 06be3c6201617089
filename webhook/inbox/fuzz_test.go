package inbox_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// FuzzHandler sends arbitrary bodies and headers through the handler into a real database.
// Whatever arrives, the answer is a 4xx or 204, never a 5xx (a bad request must not look like
// an outage, nor be retried for ever) and never a panic; 204 only for a correctly signed request
// whose exact body is then stored. With sign set the request carries a valid signature, so the
// fuzzer explores the payload checks behind verification.
func FuzzHandler(f *testing.F) {
	db := newDatabase(f)
	// One connection is plenty for one worker's sequential requests.
	pool := testenv.NewPool(f, db.URL+"&pool_max_conns=2")
	hookstream := newPartner(f)
	cfg := testConfig(f)
	cfg.MaxBodyBytes = 8 << 10 // small, so the fuzzer also meets 413
	// The handler logs a body conflict at Warn, and a fuzz target must not log through f.
	cfg.Logger = slog.New(slog.DiscardHandler)
	in := newInbox(f, pool, hookstream.verifier(f), noProcessing, cfg)

	validID := outbox.NewEventID()
	valid := customerUpdated(f, validID, 7)
	id := validID
	for _, seed := range []struct {
		id, signature string
		skew          int64 // seconds added to now for webhook-timestamp
		sign          bool
		body          []byte
	}{
		{id, "", 0, true, valid},
		{id, "", 0, true, append(valid, "  \n"...)},
		{id, "", 0, false, valid},
		{id, "v1,AAAA", 0, false, valid},
		{id, "", -3600, true, valid},
		{id, "", 0, true, []byte(`{}`)},
		{id, "", 0, true, []byte(`null`)},
		{id, "", 0, true, []byte(`[]`)},
		{id, "", 0, true, []byte(``)},
		{id, "", 0, true, []byte(`{"event_id":"` + id + `"}`)},
		{id, "", 0, true, bytes.Replace(valid, []byte(`"data":{`), []byte(`"data":{"x":"\u0000",`), 1)},
		{id, "", 0, true, bytes.Replace(valid, []byte(`"data":{`), []byte(`"data":{"x":"\xff\xfe",`), 1)},
		{id, "", 0, true, bytes.Replace(valid, []byte(`"partner_a"`), []byte(`"partner\u0000a"`), 1)},
		{id, "", 0, true, bytes.Replace(valid, []byte(`"schema_version":1`), []byte(`"schema_version":1e309`), 1)},
		{id, "", 0, true, bytes.Replace(valid, []byte(`2026-03-01`), []byte(`0000-00-00`), 1)},
		{id, "", 0, true, bytes.Repeat([]byte(`[`), 10_000)},
		{"evt_01jnq3zv6w4m0yb8d6qk8s3t2h", "", 0, true, customerUpdated(f, "evt_01jnq3zv6w4m0yb8d6qk8s3t2h", 1)},
		{"", "", 0, true, valid},
		{"evt_\x00", "", 0, true, valid},
	} {
		f.Add(seed.id, seed.signature, seed.skew, seed.sign, seed.body)
	}

	f.Fuzz(func(t *testing.T, id, signature string, skew int64, sign bool, body []byte) {
		if skew < -1<<40 || skew > 1<<40 {
			skew %= 1 << 40 // keep time.Unix in range
		}
		at := time.Now().Add(time.Duration(skew) * time.Second)
		before, existed := storedBody(t, pool, id)
		r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
		if sign {
			hookstream.signer.SetHeaders(r.Header, id, at, body)
		} else {
			r.Header.Set(webhook.HeaderID, id)
			r.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
			r.Header.Set(webhook.HeaderSignature, signature)
		}
		rec := httptest.NewRecorder()
		in.ServeHTTP(rec, r)

		switch rec.Code {
		case http.StatusNoContent:
			if !sign {
				t.Fatalf("accepted a request without a valid signature: id %q signature %q", id, signature)
			}
			after, ok := storedBody(t, pool, id)
			switch {
			case !ok:
				t.Fatalf("204 but no row for %q", id)
			case !existed && !bytes.Equal(after, body):
				t.Fatalf("204 but the stored body is not the one sent")
			case existed && !bytes.Equal(after, before):
				t.Fatalf("a duplicate changed the stored body")
			case existed && !bytes.Equal(body, before):
				t.Fatalf("204 for a different body under a stored id")
			}
			return
		case http.StatusConflict:
			// Only a verified request with another body under a stored id, which stays as it was.
			after, _ := storedBody(t, pool, id)
			if !sign || !existed || bytes.Equal(before, body) || !bytes.Equal(after, before) {
				t.Fatalf("409 for sign %v, existed %v, same body %v; stored body kept %v",
					sign, existed, bytes.Equal(before, body), bytes.Equal(after, before))
			}
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusRequestEntityTooLarge:
			// The well-formed seed must get through, or the harness tests nothing past the HMAC.
			if sign && id == validID && bytes.Equal(body, valid) && skew > -60 && skew < 60 {
				t.Fatalf("the valid delivery was refused: %d %q", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d %q for id %q sign %v body %.200q", rec.Code, rec.Body, id, sign, body)
		}
	})
}

// storedBody returns the stored body of id. Only event ids can be stored; other strings (NUL
// bytes, invalid UTF-8) are not even valid query parameters for a text column.
func storedBody(t *testing.T, pool *pgxpool.Pool, id string) ([]byte, bool) {
	t.Helper()
	if !outbox.ValidEventID(id) {
		return nil, false
	}
	var body []byte
	err := pool.QueryRow(context.Background(), `SELECT body FROM webhook_inbox WHERE id = $1`, id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("read row %q: %v", id, err)
	}
	return body, true
}
