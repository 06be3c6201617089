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
	CodeUnauthorized       = "unauthorized"                // 401: no, malformed, unknown or revoked token
	CodeForbidden          = "forbidden"                   // 403: a partner key on an operator route
	CodeNotFound           = "not_found"                   // 404: no such resource for this caller
	CodeMethodNotAllowed   = "method_not_allowed"          // 405
	CodeInvalidRequest     = "invalid_request"             // 400: malformed JSON, unknown field, bad query
	CodeInvalidCursor      = "invalid_cursor"              // 400: a cursor this API did not issue for this list
	CodeValidation         = "validation_failed"           // 422: well-formed but unacceptable values
	CodeURLRefused         = "url_refused"                 // 422: the egress policy refused the endpoint URL
	CodeConflict           = "conflict"                    // 409: the resource's state does not allow it
	CodeQuotaExceeded      = "quota_exceeded"              // 429: a partner quota is reached (error.quota says which)
	CodeReplayTooLarge     = "replay_too_large"            // 422: a replay selects more deliveries than one job may replay
	CodeGone               = "gone"                        // 410: past the retention (cursor or event)
	CodeTooLarge           = "body_too_large"              // 413
	CodeUnsupportedMedia   = "unsupported_media"           // 415
	CodeIdempotencyReused  = "idempotency_key_reused"      // 422: the Idempotency-Key was used for another request
	CodeIdempotencyPending = "idempotency_key_in_progress" // 409: the first request with this Idempotency-Key is still running
	CodeUnavailable        = "unavailable"                 // 503: a dependency is down
	CodeInternal           = "internal"                    // 500: a fault of ours, logged
)

// apiError is an error the client is told about, with its status. It is written as an RFC 9457
// problem (application/problem+json).
type apiError struct {
	Status  int
	Code    string
	Message string
	// Field names the request field or query parameter that failed (the first of Errors when
	// there are several); empty when the failure is not one field's.
	Field  string
	Errors []fieldError
	Rule   string // the egress rule, for url_refused
	Quota  *quotaDetail
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

// invalidField is a 400 for one query parameter or body field, named in the problem's field.
func invalidField(field, format string, args ...any) *apiError {
	e := invalid(format, args...)
	e.Field = field
	return e
}

func conflict(format string, args ...any) *apiError {
	return errorf(http.StatusConflict, CodeConflict, format, args...)
}

// ProblemContentType is the media type of every error response (RFC 9457).
const ProblemContentType = "application/problem+json"

// RequestIDHeader carries the id the API gives each request; error bodies repeat it as
// request_id, and the request's log lines carry it, so a report names the request exactly.
const RequestIDHeader = "X-Request-Id"

// problemTypePrefix starts every problem type URI; the code follows it. The URN is stable and
// not resolvable: the codes are documented in openapi.json and docs/admin-api.md.
const problemTypePrefix = "urn:hookstream:problem:"

// errorBody is the JSON of every error response, an RFC 9457 problem: the standard members
// type, title, status and detail, and hookstream's extensions: code (the stable string clients
// branch on), request_id, field and errors (every field that failed), rule and quota.
type errorBody struct {
	Type      string       `json:"type"`
	Title     string       `json:"title"`
	Status    int          `json:"status"`
	Detail    string       `json:"detail"`
	Code      string       `json:"code"`
	RequestID string       `json:"request_id"`
	Field     string       `json:"field,omitempty"`
	Errors    []fieldError `json:"errors,omitempty"`
	Rule      string       `json:"rule,omitempty"`
	Quota     *quotaDetail `json:"quota,omitempty"`
}

// fieldError is one failing field of a validation problem: the field, the code of its failure
// (validation_failed, or url_refused with the egress rule) and what is wrong with it.
type fieldError struct {
	Field  string `json:"field"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
	Rule   string `json:"rule,omitempty"`
}

// problemTitles are the problems' short summaries, one per code (RFC 9457 title: the same for
// every occurrence of the type).
var problemTitles = map[string]string{
	CodeUnauthorized:       "Authentication required",
	CodeForbidden:          "Operator token required",
	CodeNotFound:           "Not found",
	CodeMethodNotAllowed:   "Method not allowed",
	CodeInvalidRequest:     "Invalid request",
	CodeInvalidCursor:      "Invalid cursor",
	CodeValidation:         "Validation failed",
	CodeURLRefused:         "URL refused by the egress policy",
	CodeConflict:           "Conflict with the resource's state",
	CodeQuotaExceeded:      "Quota exceeded",
	CodeReplayTooLarge:     "Replay too large",
	CodeGone:               "Gone",
	CodeTooLarge:           "Request body too large",
	CodeUnsupportedMedia:   "Unsupported media type",
	CodeIdempotencyReused:  "Idempotency key reused",
	CodeIdempotencyPending: "Idempotent request in progress",
	CodeUnavailable:        "Service unavailable",
	CodeInternal:           "Internal error",
}

// problem is e as the body of its answer to the request with id requestID.
func (e *apiError) problem(requestID string) errorBody {
	title := problemTitles[e.Code]
	if title == "" {
		title = http.StatusText(e.Status)
	}
	field := e.Field
	if field == "" && len(e.Errors) > 0 {
		field = e.Errors[0].Field
	}
	return errorBody{Type: problemTypePrefix + e.Code, Title: title, Status: e.Status, Detail: e.Message,
		Code: e.Code, RequestID: requestID, Field: field, Errors: e.Errors, Rule: e.Rule, Quota: e.Quota}
}

// quotaDetail names the quota of a quota_exceeded or replay_too_large answer: its name (as in
// GET /v1/limits), its limit, and the partner's usage (for replay_deliveries: the size of the
// refused selection).
type quotaDetail struct {
	Name  string `json:"name"`
	Limit int    `json:"limit"`
	Usage int    `json:"usage"`
}

// writeError writes e as a problem. The request id is the one serve set on the response.
func writeError(w http.ResponseWriter, e *apiError) {
	h := w.Header()
	if e.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="hookstream"`)
	}
	if e.RetryAfter > 0 {
		// Whole seconds, rounded up: retrying at the stated time never finds the quota still full.
		h.Set("Retry-After", strconv.FormatInt(retrySeconds(e.RetryAfter), 10))
	}
	respondAs(w, e.Status, ProblemContentType, e.problem(h.Get(RequestIDHeader)))
}

// respondAt writes v as the 201 or 202 of a request that created, or queued work at, the
// resource at path (under /v1): its Location header names it, the status resource of accepted
// work (a replay job, a delivery) included.
func respondAt(w http.ResponseWriter, status int, path string, v any) {
	w.Header().Set("Location", path)
	respond(w, status, v)
}

// partnerPath is the path of the caller's partner's resources on this request's route:
// /v1/operator for the operator's own (operator.go), else /v1/partners/{pid}.
func partnerPath(r *http.Request) string {
	if strings.Contains(r.Pattern, " /v1/operator/") {
		return "/v1/operator"
	}
	return "/v1/partners/" + r.PathValue("pid")
}

// respond writes v as JSON. HTML characters are not escaped, so envelopes in a response keep
// the bytes the platform wrote; nosniff keeps browsers from reading it as anything but JSON.
func respond(w http.ResponseWriter, status int, v any) {
	respondAs(w, status, "application/json", v)
}

func respondAs(w http.ResponseWriter, status int, contentType string, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every response type marshals; reaching this is a bug, reported as one.
		status = http.StatusInternalServerError
		buf.Reset()
		contentType = ProblemContentType
		buf.WriteString(`{"type":"` + problemTypePrefix + `internal","title":"Internal error","status":500,"detail":"response could not be encoded","code":"internal"}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
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
		return invalidField(field, "field %s must be %s", field, jsonKind(typeErr.Type.Kind().String()))
	case errors.Is(err, errTrailingData):
		return invalid("request body must hold exactly one JSON object")
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return invalidField(strings.Trim(name, `"`), "unknown field %s", name)
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
