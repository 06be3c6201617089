package main

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

// adminClient calls the admin API as the operator, the way a partner platform's operator would.
type adminClient struct {
	base  string // http://127.0.0.1:port
	token string
	http  *http.Client
}

func newAdminClient(base, token string) *adminClient {
	return &adminClient{base: base, token: token, http: &http.Client{Timeout: 30 * time.Second}}
}

// call sends body as JSON and decodes the answer into out, which it expects with status want.
func (a *adminClient) call(ctx context.Context, method, path string, body any, want int, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("admin %s %s: %w", method, path, err)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(b))
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

// createPartner creates the partner id.
func (a *adminClient) createPartner(ctx context.Context, id string) error {
	return a.call(ctx, "POST", "/v1/partners", map[string]string{"id": id, "name": id}, http.StatusCreated, nil)
}

// createEndpoint creates an endpoint of partner at url subscribed to types and returns its id
// and its secret, which only this response shows.
func (a *adminClient) createEndpoint(ctx context.Context, partner, url string, types []string) (id, secret string, err error) {
	var ep struct{ ID, Secret, Status string }
	err = a.call(ctx, "POST", "/v1/partners/"+partner+"/endpoints",
		map[string]any{"url": url, "event_types": types}, http.StatusCreated, &ep)
	if err != nil {
		return "", "", err
	}
	if ep.Status != "active" || !strings.HasPrefix(ep.Secret, "whsec_") {
		return "", "", fmt.Errorf("admin: endpoint created as %+v, want an active endpoint with a whsec_ secret", ep)
	}
	return ep.ID, ep.Secret, nil
}
