package adminclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// New is a client of the admin API at server (its base URL, e.g. http://127.0.0.1:8080) that
// authenticates every request with token: the operator token or a partner API key.
func New(server, token string, opts ...ClientOption) (*ClientWithResponses, error) {
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
	return NewClientWithResponses(server, append([]ClientOption{WithRequestEditorFn(bearer), WithRequestEditorFn(operatorPaths)}, opts...)...)
}

// OperatorPartnerID is the reserved partner of the operator's own endpoints (outbox's
// OperatorPartnerID; operator events, docs/operations.md). A client from New sends a partner
// method's request for it to the operator's routes, /v1/partners/hookstream:operator/endpoints
// to /v1/operator/endpoints and so on, so the partner methods (and hookstream endpoints
// --operator) manage the operator's endpoints and deliveries as well as the Operator* methods.
const OperatorPartnerID = "hookstream:operator"

func operatorPaths(_ context.Context, req *http.Request) error {
	if rest, ok := strings.CutPrefix(req.URL.Path, "/v1/partners/"+OperatorPartnerID+"/"); ok {
		req.URL.Path, req.URL.RawPath = "/v1/operator/"+rest, ""
	}
	return nil
}

// APIError is a request the admin API refused or failed: the HTTP status and the problem the
// API answered with (RFC 9457).
type APIError struct {
	Status int
	// Problem is the body's problem; a body that is not the API's problem (a proxy's page) is its
	// Detail, with the code left empty.
	Problem Problem
}

func (e *APIError) Error() string {
	if e.Problem.Code == "" {
		return fmt.Sprintf("admin API: %d: %s", e.Status, e.Problem.Detail)
	}
	return fmt.Sprintf("admin API: %d %s: %s", e.Status, e.Problem.Code, e.Problem.Detail)
}

// WithIdempotencyKey sends key as the Idempotency-Key of a POST (pass it as the request editor of
// one call): repeating the call with the same key and body gets the first answer again instead of
// doing the work twice.
func WithIdempotencyKey(key string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Idempotency-Key", key)
		return nil
	}
}

// Response is what every generated OpWithResponse returns.
type Response interface {
	StatusCode() int
	GetBody() []byte
}

// Check returns err when the request was not made, an *APIError when the answer is not 2xx, and
// nil otherwise: Check(c.GetEndpointWithResponse(ctx, pid, eid)) reads as one call.
func Check(res Response, err error) error {
	if err != nil {
		return err
	}
	status := res.StatusCode()
	if status >= 200 && status < 300 {
		return nil
	}
	e := &APIError{Status: status}
	var body Problem
	if json.Unmarshal(res.GetBody(), &body) == nil && body.Code != "" {
		e.Problem = body
	} else {
		e.Problem.Detail = excerpt(res.GetBody())
	}
	return e
}

func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = "empty body"
	}
	return s
}
