package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// AdminClient calls the admin API as the operator, the way a partner platform's operator would.
type AdminClient struct {
	Base  string // http://127.0.0.1:port
	token string
	http  *http.Client
}

// NewAdminClient returns a client of the admin API at base with the operator token.
func NewAdminClient(base, token string) *AdminClient {
	return &AdminClient{Base: base, token: token, http: &http.Client{Timeout: 30 * time.Second}}
}

// Call sends body as JSON and decodes the answer into out, which it expects with status want.
func (a *AdminClient) Call(ctx context.Context, method, path string, body any, want int, out any) error {
	var payload io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("admin %s %s: %w", method, path, err)
		}
		payload = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.Base+path, payload)
	if err != nil {
		return fmt.Errorf("admin %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("admin %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != want {
		return fmt.Errorf("admin %s %s: %d %s, want %d", method, path, resp.StatusCode, strings.TrimSpace(string(raw)), want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("admin %s %s: decode %q: %w", method, path, raw, err)
		}
	}
	return nil
}

// CreatePartner creates the partner id.
func (a *AdminClient) CreatePartner(ctx context.Context, id string) error {
	return a.Call(ctx, "POST", "/v1/partners", map[string]string{"id": id, "name": id}, http.StatusCreated, nil)
}

// CreateEndpoint creates an endpoint of partner at url subscribed to types and returns its id
// and its secret, which only this response shows.
func (a *AdminClient) CreateEndpoint(ctx context.Context, partner, url string, types []string) (id, secret string, err error) {
	return a.CreateFilteredEndpoint(ctx, partner, url, types, "")
}

// CreateFilteredEndpoint is CreateEndpoint with the payload filter flt ("": none).
func (a *AdminClient) CreateFilteredEndpoint(ctx context.Context, partner, url string, types []string, flt string) (id, secret string, err error) {
	var ep struct{ ID, Secret, Status string }
	body := map[string]any{"url": url, "event_types": types}
	if flt != "" {
		body["filter"] = flt
	}
	err = a.Call(ctx, "POST", "/v1/partners/"+partner+"/endpoints", body, http.StatusCreated, &ep)
	if err != nil {
		return "", "", err
	}
	if ep.Status != "active" || !strings.HasPrefix(ep.Secret, "whsec_") {
		return "", "", fmt.Errorf("admin: endpoint created as %+v, want an active endpoint with a whsec_ secret", ep)
	}
	return ep.ID, ep.Secret, nil
}

// SetFilter replaces the payload filter of partner's endpoint id.
func (a *AdminClient) SetFilter(ctx context.Context, partner, id, flt string) error {
	return a.Call(ctx, "PATCH", "/v1/partners/"+partner+"/endpoints/"+id, map[string]any{"filter": flt}, http.StatusOK, nil)
}

// EndpointStatus returns the status of partner's endpoint id as the API states it.
func (a *AdminClient) EndpointStatus(ctx context.Context, partner, id string) (string, error) {
	var ep struct{ Status string }
	if err := a.Call(ctx, "GET", "/v1/partners/"+partner+"/endpoints/"+id, nil, http.StatusOK, &ep); err != nil {
		return "", err
	}
	return ep.Status, nil
}
