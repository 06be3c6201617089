package admin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Idempotency-Key on POST (design.md section 10, Conventions): a client that lost an answer sends its request again with
// the same key and gets the first answer back instead of a second endpoint, rotation, test
// event or replay. Keys are scoped by caller (the operator, or one API key), kept
// IdempotencyRetention; the same key with another request (method, path or body) is refused with
// 422, and a request whose first copy is still running with 409. Only a 2xx answer is kept: a
// refused request changed nothing (a 5xx may not have), so its key is free for the request again.

// IdempotencyKeyHeader names the header; IdempotencyReplayedHeader marks a stored answer.
const (
	IdempotencyKeyHeader      = "Idempotency-Key"
	IdempotencyReplayedHeader = "Idempotent-Replayed"
	// IdempotencyRetention is how long a key's answer is kept.
	IdempotencyRetention = 24 * time.Hour
	maxIdempotencyKey    = 255
	// idempotencyAbandoned is when a first request that never stored its answer (its process
	// died) no longer holds its key: well past the HTTP server's write timeout.
	idempotencyAbandoned = 5 * time.Minute
)

// storedAnswer is the sealed form of an answer: what a repeated request gets.
type storedAnswer struct {
	Status     int    `json:"status"`
	Type       string `json:"content_type,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	Location   string `json:"location,omitempty"`
	Body       []byte `json:"body"`
}

// idempotent serves a POST carrying an Idempotency-Key: the first request with the key runs
// serve and keeps its answer; a later one with the same request gets the answer again.
func (a *API) idempotent(w http.ResponseWriter, r *http.Request, c caller, key string, serve func(http.ResponseWriter, *http.Request) error) error {
	if key == "" || len(key) > maxIdempotencyKey || !visibleASCII(key) {
		return invalidField(IdempotencyKeyHeader, "the %s header must be 1 to %d visible ASCII characters", IdempotencyKeyHeader, maxIdempotencyKey)
	}
	body, err := io.ReadAll(r.Body) // bounded by the MaxBytesReader every request gets
	if err != nil {
		return decodeError(err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	hash := requestHash(r.Method, r.URL.Path, body)
	scope := c.actor()
	ctx := r.Context()

	claimed, err := a.claimIdempotencyKey(ctx, scope, key, hash)
	if err != nil {
		return err
	}
	if !claimed {
		return a.replayAnswer(ctx, w, scope, key, hash)
	}
	rec := &answerRecorder{ResponseWriter: w}
	serveErr := serve(rec, r)
	status := rec.status
	if serveErr != nil {
		var ae *apiError
		if !errors.As(serveErr, &ae) {
			ae = a.fault(ctx, "idempotent request", serveErr)
		}
		writeError(rec, ae)
		status = ae.Status
	}
	// A fresh context: the answer is stored even if the client has gone (that is when it matters).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if status < 200 || status >= 300 {
		if _, err := a.pool.Exec(sctx, `DELETE FROM idempotency_key WHERE scope = $1 AND key = $2`, scope, key); err != nil {
			a.log.Warn("idempotency key not released", "request_id", requestID(ctx), "err", err)
		}
		return nil
	}
	h := rec.Header()
	plain, _ := json.Marshal(storedAnswer{Status: status, Type: h.Get("Content-Type"), RetryAfter: h.Get("Retry-After"), Location: h.Get("Location"), Body: rec.body.Bytes()})
	sealed, err := a.cfg.SecretKeys.Seal(plain, idempotencyAAD(scope, key))
	if err == nil {
		_, err = a.pool.Exec(sctx, `UPDATE idempotency_key SET status = $3, response = $4 WHERE scope = $1 AND key = $2`,
			scope, key, status, sealed)
	}
	if err != nil {
		// The answer went out; a repeat will find the key taken until it is abandoned, and say so.
		a.log.Warn("idempotent answer not stored", "request_id", requestID(ctx), "err", err)
	}
	return nil
}

// claimIdempotencyKey inserts the key's row for this request, replacing one past the retention
// or abandoned by a first request that never answered. It reports false when the key is held.
func (a *API) claimIdempotencyKey(ctx context.Context, scope, key string, hash []byte) (bool, error) {
	var claimed bool
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM idempotency_key WHERE scope = $1 AND key = $2
			AND (created_at <= now() - $3 * interval '1 second' OR (status IS NULL AND created_at <= now() - $4 * interval '1 second'))`,
			scope, key, IdempotencyRetention.Seconds(), idempotencyAbandoned.Seconds()); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO idempotency_key (scope, key, request_hash) VALUES ($1, $2, $3)
			ON CONFLICT (scope, key) DO NOTHING`, scope, key, hash)
		claimed = err == nil && tag.RowsAffected() == 1
		return err
	})
	return claimed, err
}

// replayAnswer answers a request whose key is held: the stored answer when the request is the
// same, else a refusal.
func (a *API) replayAnswer(ctx context.Context, w http.ResponseWriter, scope, key string, hash []byte) error {
	var (
		stored []byte
		status *int32
		sealed []byte
	)
	err := a.pool.QueryRow(ctx, `SELECT request_hash, status, response FROM idempotency_key WHERE scope = $1 AND key = $2`,
		scope, key).Scan(&stored, &status, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		// Released between the claim and here (the first request failed): this one may run.
		e := errorf(http.StatusConflict, CodeIdempotencyPending, "the first request with this %s just failed; send it again", IdempotencyKeyHeader)
		e.RetryAfter = time.Second
		return e
	}
	if err != nil {
		return err
	}
	if !bytes.Equal(stored, hash) {
		e := errorf(http.StatusUnprocessableEntity, CodeIdempotencyReused,
			"this %s was used for another request (method, path or body) in the last %s; use a new key for a new request",
			IdempotencyKeyHeader, IdempotencyRetention)
		e.Field = IdempotencyKeyHeader
		return e
	}
	if status == nil {
		e := errorf(http.StatusConflict, CodeIdempotencyPending, "the first request with this %s is still running; retry shortly", IdempotencyKeyHeader)
		e.RetryAfter = time.Second
		return e
	}
	plain, err := a.cfg.SecretKeys.Open(sealed, idempotencyAAD(scope, key))
	if err != nil {
		return err
	}
	var ans storedAnswer
	if err := json.Unmarshal(plain, &ans); err != nil {
		return err
	}
	h := w.Header()
	if ans.Type != "" {
		h.Set("Content-Type", ans.Type)
	}
	if ans.RetryAfter != "" {
		h.Set("Retry-After", ans.RetryAfter)
	}
	if ans.Location != "" {
		h.Set("Location", ans.Location)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set(IdempotencyReplayedHeader, "true")
	w.WriteHeader(ans.Status)
	_, _ = w.Write(ans.Body)
	return nil
}

// sweepIdempotencyKeys deletes the keys past their retention.
func (a *API) sweepIdempotencyKeys(ctx context.Context) {
	if _, err := a.pool.Exec(ctx, `DELETE FROM idempotency_key WHERE created_at <= now() - $1 * interval '1 second'`,
		IdempotencyRetention.Seconds()); err != nil && ctx.Err() == nil {
		a.log.Warn("idempotency keys not swept", "err", err)
	}
}

// requestHash identifies a request for its key: method, path and the body, JSON bodies in a
// canonical form (keys sorted, spacing dropped) so a client that serialises the same object
// again is not refused.
func requestHash(method, path string, body []byte) []byte {
	canonical := bytes.TrimSpace(body)
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil && !dec.More() {
		if b, err := json.Marshal(v); err == nil {
			canonical = b
		}
	}
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n" + strconv.Itoa(len(canonical)) + "\n"))
	h.Write(canonical)
	return h.Sum(nil)
}

func idempotencyAAD(scope, key string) []byte {
	return []byte("idempotency_key\x00" + scope + "\x00" + key)
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// answerRecorder passes an answer through and keeps a copy of its status and body.
type answerRecorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (a *answerRecorder) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
	a.ResponseWriter.WriteHeader(status)
}

func (a *answerRecorder) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	a.body.Write(b)
	return a.ResponseWriter.Write(b)
}
