package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// refusal is a 4xx answer: the status, a short reason safe to send back (it is recorded in
// hookstream's delivery history, R18), and the cause for the log.
type refusal struct {
	status int
	reason string
	err    error
}

// maxReasonBytes keeps answers short; the sender stores only an excerpt anyway.
const maxReasonBytes = 200

// ServeHTTP receives one webhook: 204 once it is durably stored (or was already), 405 for a
// method other than POST, 413 for a body over Config.MaxBodyBytes, 401 when the Standard
// Webhooks headers are missing or do not verify, 400 when the verified payload is not a valid
// hookstream envelope or ValidatePayload refuses it, and 503 when it could not be stored.
func (i *Inbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev, ref := i.admit(w, r)
	if ref != nil {
		i.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "inbox: webhook refused",
			slog.Int("status", ref.status), slog.String("webhook_id", clip(r.Header.Get(webhook.HeaderID), 64)),
			slog.String("reason", ref.reason), slog.Any("err", ref.err))
		if ref.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
		http.Error(w, ref.reason, ref.status)
		return
	}
	stored, err := i.store(r.Context(), ev)
	if err != nil {
		// Never 2xx without a committed row: hookstream retries a 503 (design.md section 1).
		i.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "inbox: store webhook",
			slog.String("event_id", ev.ID), slog.Any("err", err))
		http.Error(w, "the event could not be stored; retry later", http.StatusServiceUnavailable)
		return
	}
	if stored {
		i.signal()
	}
	w.WriteHeader(http.StatusNoContent)
}

// admit reads, verifies and validates a request; the order matters. The body is read whole
// before verification because the signature covers the raw bytes (R15), and it is parsed only
// after verification, so unauthenticated input reaches no more than the size check and the HMAC.
func (i *Inbox) admit(w http.ResponseWriter, r *http.Request) (Event, *refusal) {
	if r.Method != http.MethodPost {
		return Event{}, &refusal{status: http.StatusMethodNotAllowed, reason: "method not allowed; webhooks are POSTed"}
	}
	body, ref := i.readBody(w, r)
	if ref != nil {
		return Event{}, ref
	}
	if err := i.verifier.VerifyHeader(r.Header, body); err != nil {
		return Event{}, &refusal{status: http.StatusUnauthorized, reason: verifyReason(err), err: err}
	}
	id := r.Header.Get(webhook.HeaderID)
	var env outbox.Envelope
	if err := json.Unmarshal(body, &env); err != nil {
		// json errors quote at most a type name or an offset, never the input at length.
		return Event{}, invalidPayload(fmt.Errorf("not a JSON envelope object: %w", err))
	}
	if err := env.Validate(); err != nil {
		return Event{}, invalidPayload(err)
	}
	if env.EventID != id {
		return Event{}, invalidPayload(fmt.Errorf("event_id %q is not the webhook-id header", clip(env.EventID, 64)))
	}
	if i.cfg.ValidatePayload != nil {
		if err := i.cfg.ValidatePayload(env.Type, body); err != nil {
			return Event{}, invalidPayload(fmt.Errorf("payload refused: %w", err))
		}
	}
	return Event{ID: id, Type: env.Type, Body: body}, nil
}

func invalidPayload(err error) *refusal {
	return &refusal{status: http.StatusBadRequest, reason: clip("invalid payload: "+err.Error(), maxReasonBytes), err: err}
}

// readBody reads at most MaxBodyBytes; one byte more is 413 (R28 caps what hookstream sends).
func (i *Inbox) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *refusal) {
	tooLarge := &refusal{status: http.StatusRequestEntityTooLarge,
		reason: fmt.Sprintf("body larger than %d bytes", i.cfg.MaxBodyBytes)}
	if r.ContentLength > i.cfg.MaxBodyBytes {
		return nil, tooLarge
	}
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, i.cfg.MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge
		}
		return nil, &refusal{status: http.StatusBadRequest, reason: "could not read the body", err: err}
	}
	return body, nil
}

// verifyReason names the kind of failure without echoing header values or anything secret.
func verifyReason(err error) string {
	switch {
	case errors.Is(err, webhook.ErrMissingHeader):
		return "missing webhook-id, webhook-timestamp or webhook-signature header"
	case errors.Is(err, webhook.ErrMalformedHeader):
		return "malformed webhook-signature header"
	case errors.Is(err, webhook.ErrTimestampTooOld), errors.Is(err, webhook.ErrTimestampTooNew):
		return "webhook-timestamp outside the tolerance; check the clock"
	case errors.Is(err, webhook.ErrInvalidTimestamp):
		return "webhook-timestamp is not unix seconds"
	case errors.Is(err, webhook.ErrNoMatchingSignature):
		return "no matching signature; check the endpoint secret"
	}
	return "webhook verification failed"
}

// store inserts ev unless its id is stored already; stored reports a new row. The insert runs
// in its own implicit transaction, so a nil error means the row is committed.
func (i *Inbox) store(ctx context.Context, ev Event) (stored bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, i.cfg.StoreTimeout)
	defer cancel()
	tag, err := i.pool.Exec(ctx, i.sql.insert, ev.ID, ev.Type, ev.Body)
	if err != nil {
		return false, fmt.Errorf("inbox: insert %s: %w", ev.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// clip shortens s to at most limit bytes (limit ≥ 3) of valid UTF-8 without NUL bytes, for
// answers, logs and the last_error column (PostgreSQL text refuses invalid UTF-8 and NUL).
func clip(s string, limit int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= limit {
		return s
	}
	const ellipsis = "…"
	cut := max(limit-len(ellipsis), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
