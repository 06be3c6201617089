package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error codes of the API: stable strings clients may branch on.
const (
	CodeUnauthorized     = "unauthorized"       // 401: no, malformed, unknown or revoked token
	CodeForbidden        = "forbidden"          // 403: a partner key on an operator route
	CodeNotFound         = "not_found"          // 404: no such resource for this caller
	CodeMethodNotAllowed = "method_not_allowed" // 405
	CodeInvalidRequest   = "invalid_request"    // 400: malformed JSON, unknown field, bad query
	CodeInvalidCursor    = "invalid_cursor"     // 400: a cursor this API did not issue for this list
	CodeValidation       = "validation_failed"  // 422: well-formed but unacceptable values
	CodeURLRefused       = "url_refused"        // 422: the egress policy refused the endpoint URL
	CodeConflict         = "conflict"           // 409: the resource's state does not allow it
	CodeQuotaExceeded    = "quota_exceeded"     // 429: a partner quota is reached (error.quota says which)
	CodeReplayTooLarge   = "replay_too_large"   // 422: a replay selects more deliveries than one job may replay
	CodeGone             = "gone"               // 410: past the retention (cursor or event)
	CodeTooLarge         = "body_too_large"     // 413
	CodeUnsupportedMedia = "unsupported_media"  // 415
	CodeUnavailable      = "unavailable"        // 503: a dependency is down
	CodeInternal         = "internal"           // 500: a fault of ours, logged
)

// apiError is an error the client is told about, with its status.
type apiError struct {
	Status  int
	Code    string
	Message string
	Rule    string // the egress rule, for url_refused
	Quota   *quotaDetail
	// RetryAfter, when positive, is sent as the Retry-After header: the wait after which the
	// request can succeed.
	RetryAfter time.Duration
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func notFound(what string) *apiError {
	return errorf(http.StatusNotFound, CodeNotFound, "%s not found", what)
}

func invalid(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, CodeInvalidRequest, format, args...)
}

func conflict(format string, args ...any) *apiError {
	return errorf(http.StatusConflict, CodeConflict, format, args...)
}

// errUnavailable marks failures of a dependency (PostgreSQL, Kafka) the client may retry.
var errUnavailable = errors.New("dependency unavailable")

// errorBody is the JSON of every error response: {"error":{"code","message"}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string       `json:"code"`
	Message string       `json:"message"`
	Rule    string       `json:"rule,omitempty"`
	Quota   *quotaDetail `json:"quota,omitempty"`
}

// quotaDetail names the quota of a quota_exceeded or replay_too_large answer: its name (as in
// GET /v1/limits), its limit, and the partner's usage (for replay_deliveries: the size of the
// refused selection).
type quotaDetail struct {
	Name  string `json:"name"`
	Limit int    `json:"limit"`
	Usage int    `json:"usage"`
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="hookstream"`)
	}
	if e.RetryAfter > 0 {
		// Whole seconds, rounded up: retrying at the stated time never finds the quota still full.
		w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(e.RetryAfter), 10))
	}
	respond(w, e.Status, errorBody{Error: errorDetail{Code: e.Code, Message: e.Message, Rule: e.Rule, Quota: e.Quota}})
}

// respond writes v as JSON. HTML characters are not escaped, so envelopes in a response keep
// the bytes the platform wrote; nosniff keeps browsers from reading it as anything but JSON.
func respond(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every response type marshals; reaching this is a bug, reported as one.
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"internal","message":"response could not be encoded"}}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store") // responses may hold a secret shown once
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// decodeError turns an encoding/json error into a message naming the field, without echoing
// the client's value (it may be long or hold a secret).
func decodeError(err error) *apiError {
	var (
		syntax   *json.SyntaxError
		typeErr  *json.UnmarshalTypeError
		tooLarge *http.MaxBytesError
	)
	switch {
	case errors.As(err, &tooLarge):
		return errorf(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body is larger than %d bytes", MaxBodyBytes)
	case errors.As(err, &syntax):
		return invalid("request body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return invalid("request body must be a JSON object")
		}
		return invalid("field %s must be %s", field, jsonKind(typeErr.Type.Kind().String()))
	case errors.Is(err, errTrailingData):
		return invalid("request body must hold exactly one JSON object")
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return invalid("unknown field %s", name)
	}
	if strings.Contains(msg, "unexpected EOF") {
		return invalid("request body is not valid JSON (truncated)")
	}
	return invalid("request body is not valid JSON")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int32", "int64":
		return "an integer in range"
	case "float64":
		return "a number"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "of another type"
}
