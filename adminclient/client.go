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
	return NewClientWithResponses(server, append([]ClientOption{WithRequestEditorFn(bearer)}, opts...)...)
}

// APIError is a request the admin API refused or failed: the HTTP status and the error body.
type APIError struct {
	Status int
	// Detail is the body's error; a body that is not the API's error (a proxy's page) is its
	// Message, with the code left empty.
	Detail ErrorDetail
}

func (e *APIError) Error() string {
	if e.Detail.Code == "" {
		return fmt.Sprintf("admin API: %d: %s", e.Status, e.Detail.Message)
	}
	return fmt.Sprintf("admin API: %d %s: %s", e.Status, e.Detail.Code, e.Detail.Message)
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
	var body Error
	if json.Unmarshal(res.GetBody(), &body) == nil && body.Error.Code != "" {
		e.Detail = body.Error
	} else {
		e.Detail.Message = excerpt(res.GetBody())
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
