package inbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	hsclip "github.com/hookstream/hookstream/internal/clip"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// refusal is a 4xx answer: the status, a short reason safe to send back (it is recorded in
// hookstream's delivery history, R18), and the cause for the log. unverified marks a request
// whose signature did not verify, counted by reason in the metrics.
type refusal struct {
	status     int
	reason     string
	err        error
	unverified bool
}

// maxReasonBytes keeps answers short; the sender stores only an excerpt anyway.
const maxReasonBytes = 200

// admitFunc authenticates and checks one request's headers and raw body: the event to store,
// or the refusal to answer.
type admitFunc func(h http.Header, body []byte) (Event, *refusal)

// ServeHTTP receives one hookstream webhook: 204 once it is durably stored (or was already),
// 200 with the stored result for a copy of an event processed with one (Event.SetResult), 409
// for a different body under the webhook-id of a stored event, 405 for a method other than
// POST, 413 for a body over Config.MaxBodyBytes, 401 when the Standard Webhooks headers are
// missing or do not verify, 400 when the verified payload is not a valid hookstream envelope
// or ValidatePayload refuses it, and 503 when it could not be stored. An Inbox made with Open
// answers 404 as UnknownSource does.
func (i *Inbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if i.verifier == nil {
		i.unknownSource(w, r, "no hookstream source on this inbox")
		return
	}
	i.receive(w, r, HookstreamSource, i.admitHookstream)
}

// Handler returns the http.Handler receiving src's webhooks into this inbox, answering as
// ServeHTTP does: 401 when src.Verifier refuses the request, 400 when it names no event id or
// src.Validate refuses it, 409 for a different body under a stored event id of src.
func (i *Inbox) Handler(src Source) (http.Handler, error) {
	switch {
	case !sourcePattern.MatchString(src.Name):
		return nil, fmt.Errorf("inbox: source name %q must be lowercase letters, digits, '_', '-' and '.', at most 64 bytes", src.Name)
	case src.Verifier == nil:
		return nil, fmt.Errorf("inbox: source %s: verifier is nil", src.Name)
	}
	i.metrics.addSource(src.Name)
	admit := func(h http.Header, body []byte) (Event, *refusal) { return i.admitSource(src, h, body) }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { i.receive(w, r, src.Name, admit) }), nil
}

// UnknownSource returns the http.Handler for webhook paths that name no source this inbox
// receives: it answers 404 and counts the request in
// hookstream_inbox_unknown_source_requests_total, so unknown senders are watched apart from
// verification failures. Mount it on the prefix under which the sources' handlers are
// mounted, such as "/webhooks/": a sender posting to a path that was never set up, or a
// scanner, then shows in the metrics and not only in the access log.
func (i *Inbox) UnknownSource() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.unknownSource(w, r, "no webhook source at this path")
	})
}

func (i *Inbox) unknownSource(w http.ResponseWriter, r *http.Request, reason string) {
	i.metrics.unknownSources.Inc()
	i.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "inbox: webhook for an unknown source",
		slog.String("method", clip(r.Method, 16)), slog.String("path", clip(r.URL.Path, 200)))
	http.Error(w, reason, http.StatusNotFound)
}

// receive is the handler of every source: read, admit, store, answer.
func (i *Inbox) receive(w http.ResponseWriter, r *http.Request, source string, admit admitFunc) {
	ev, ref := i.read(w, r, admit)
	if ref != nil {
		if ref.unverified {
			i.metrics.verificationFailed(source, ref.err)
		}
		i.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "inbox: webhook refused",
			slog.String("source", source), slog.Int("status", ref.status),
			slog.String("reason", ref.reason), slog.Any("err", ref.err))
		if ref.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
		http.Error(w, ref.reason, ref.status)
		return
	}
	ev.Source = source
	got, err := i.store(r.Context(), ev)
	if err != nil {
		// Never 2xx without a committed row: hookstream retries a 503 (design.md section 1).
		i.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "inbox: store webhook",
			slog.String("source", source), slog.String("event_id", ev.ID), slog.Any("err", err))
		http.Error(w, "the event could not be stored; retry later", http.StatusServiceUnavailable)
		return
	}
	switch got.outcome {
	case storedNew:
		i.metrics.received.WithLabelValues(source).Inc()
		i.signal()
		w.WriteHeader(http.StatusNoContent)
	case storedConflict:
		// Signed by the source, so not a forgery without the secret: a sender reusing an id
		// for another payload, or a leaked secret. Either way it is not the stored event.
		i.metrics.bodyMismatches.WithLabelValues(source).Inc()
		i.cfg.Logger.LogAttrs(r.Context(), slog.LevelWarn, "inbox: different body under a stored event id; refused",
			slog.String("source", source), slog.String("event_id", ev.ID))
		http.Error(w, "a different body was received before under this event id; refused", http.StatusConflict)
	default:
		i.metrics.duplicates.WithLabelValues(source).Inc()
		switch {
		case got.state == stateProcessed && got.result != nil:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(got.result)
		case got.state == stateReceived || got.state == stateRetrying:
			i.signal() // a copy of an unfinished event hurries it along
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

// read reads and admits a request; the order matters. The body is read whole before
// verification because the signature covers the raw bytes (R15), and it is parsed only after
// verification, so unauthenticated input reaches no more than the size check and the HMAC.
func (i *Inbox) read(w http.ResponseWriter, r *http.Request, admit admitFunc) (Event, *refusal) {
	if r.Method != http.MethodPost {
		return Event{}, &refusal{status: http.StatusMethodNotAllowed, reason: "method not allowed; webhooks are POSTed"}
	}
	body, ref := i.readBody(w, r)
	if ref != nil {
		return Event{}, ref
	}
	ev, ref := admit(r.Header, body)
	if ref != nil {
		return Event{}, ref
	}
	ev.Body = body
	return ev, nil
}

// admitHookstream verifies the Standard Webhooks headers and checks the hookstream envelope.
func (i *Inbox) admitHookstream(h http.Header, body []byte) (Event, *refusal) {
	if err := i.verifier.VerifyHeader(h, body); err != nil {
		return Event{}, &refusal{status: http.StatusUnauthorized, reason: verifyReason(err), err: err, unverified: true}
	}
	i.metrics.observeSkew(HookstreamSource, h.Get(webhook.HeaderTimestamp))
	id := h.Get(webhook.HeaderID)
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
	return Event{ID: id, Type: env.Type}, nil
}

// admitSource verifies a request of another source with its verifier and names its event.
func (i *Inbox) admitSource(src Source, h http.Header, body []byte) (Event, *refusal) {
	msg, err := src.Verifier.VerifyRequest(h, body)
	if err != nil {
		return Event{}, &refusal{status: http.StatusUnauthorized, reason: verifyReason(err), err: err, unverified: true}
	}
	if !msg.Timestamp.IsZero() {
		i.metrics.clockSkew.WithLabelValues(src.Name).Observe(time.Since(msg.Timestamp).Seconds())
	}
	if msg.ID == "" {
		return Event{}, invalidPayload(errors.New("the request names no event id"))
	}
	if src.Validate != nil {
		if err := src.Validate(msg, body); err != nil {
			return Event{}, invalidPayload(fmt.Errorf("payload refused: %w", err))
		}
	}
	return Event{ID: msg.ID, Type: msg.Type}, nil
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
		return "missing signature header: " + clip(strings.TrimPrefix(err.Error(), webhook.ErrMissingHeader.Error()+": "), 40)
	case errors.Is(err, webhook.ErrMalformedHeader):
		return "malformed signature header"
	case errors.Is(err, webhook.ErrTimestampTooOld), errors.Is(err, webhook.ErrTimestampTooNew):
		return "signed timestamp outside the tolerance; check the clock"
	case errors.Is(err, webhook.ErrInvalidTimestamp):
		return "signed timestamp is not unix seconds"
	case errors.Is(err, webhook.ErrNoMatchingSignature):
		return "no matching signature; check the endpoint secret"
	}
	return "webhook verification failed"
}

// Row states (see Schema).
const (
	stateReceived  = "received"
	stateRetrying  = "retrying"
	stateProcessed = "processed"
	stateDead      = "dead"
	stateRefused   = "refused"
)

// storeOutcome is what storing a request found.
type storeOutcome int

const (
	storedNew      storeOutcome = iota // a new row
	storedCopy                         // the event was stored before with the same body
	storedConflict                     // the event was stored before with another body
)

type storeResult struct {
	outcome storeOutcome
	state   string // of the stored row, for a copy
	result  []byte // of a processed row, for a copy
}

// store inserts ev unless its (source, id) is stored already, and then reports the stored
// row. The insert runs in its own implicit transaction, so a nil error means the row is
// committed.
func (i *Inbox) store(ctx context.Context, ev Event) (storeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, i.cfg.StoreTimeout)
	defer cancel()
	hash := sha256.Sum256(ev.Body)
	// Twice at most: the stored row can be purged between the insert and the lookup.
	for range 2 {
		tag, err := i.pool.Exec(ctx, i.sql.insert, ev.Source, ev.ID, ev.Type, ev.Body, hash[:])
		if err != nil {
			return storeResult{}, fmt.Errorf("inbox: insert %s/%s: %w", ev.Source, ev.ID, err)
		}
		if tag.RowsAffected() == 1 {
			return storeResult{outcome: storedNew}, nil
		}
		// A new statement, so it sees a row that a concurrent insert committed while ours
		// waited on it.
		var (
			stored []byte
			got    storeResult
		)
		err = i.pool.QueryRow(ctx, i.sql.lookup, ev.Source, ev.ID).Scan(&stored, &got.state, &got.result)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return storeResult{}, fmt.Errorf("inbox: look up %s/%s: %w", ev.Source, ev.ID, err)
		}
		got.outcome = storedCopy
		if !bytes.Equal(stored, hash[:]) {
			got.outcome = storedConflict
		}
		return got, nil
	}
	return storeResult{}, fmt.Errorf("inbox: store %s/%s: the row vanished twice between insert and lookup", ev.Source, ev.ID)
}

// clip shortens s to at most limit bytes (limit ≥ 3) of valid UTF-8 without NUL bytes, for
// answers, logs and the last_error column (PostgreSQL text refuses invalid UTF-8 and NUL).
func clip(s string, limit int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	return hsclip.Marked(s, limit)
}
