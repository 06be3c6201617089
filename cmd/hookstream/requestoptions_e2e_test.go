package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// TestDevRequestOptionsEndToEnd runs `hookstream dev` with a forward proxy: an endpoint
// created through the API with a header and basic authentication gets both on every request,
// through the proxy, and the history the API shows holds no secret although the receiver's
// failed first answer echoed the whole request.
func TestDevRequestOptionsEndToEnd(t *testing.T) {
	t.Parallel()
	const password = "b4sic-Pa55word-e2e"
	db := testenv.NewEmptyDatabase(t)
	proxy := testenv.NewConnectProxy(t, "", "")
	dev := startDev(t, db, "--retry-schedule", "1s,1s", "--egress-proxy", proxy.URL.String())

	var (
		mu   sync.Mutex
		seen []http.Header
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		n := len(seen)
		mu.Unlock()
		if n == 1 { // the first attempt fails, and its evidence echoes the request
			user, pass, _ := r.BasicAuth()
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]any{"headers": r.Header, "user": user, "pass": pass})
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	call := func(method, path string, body any) (int, []byte) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, dev.adminURL+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+dev.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	api := func(method, path string, body any) []byte {
		t.Helper()
		status, out := call(method, path, body)
		if status/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, path, status, out)
		}
		return out
	}
	api("POST", "/v1/partners", map[string]string{"id": "pa", "name": "pa"})
	var ep struct {
		ID string `json:"id"`
	}
	created := api("POST", "/v1/partners/pa/endpoints", map[string]any{
		"url": srv.URL + "/hooks", "event_types": []string{"customer.*"},
		"headers": map[string]string{"X-Tenant": "acme"},
		"auth":    map[string]string{"type": "basic", "username": "hooks", "password": password},
	})
	if err := json.Unmarshal(created, &ep); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the endpoint record reaches the views before the event
	eventID := appendEvent(t, db, "pa", "customer.created")

	deadline := time.Now().Add(60 * time.Second)
	var detail []byte
	for {
		var status int
		status, detail = call("GET", "/v1/partners/pa/deliveries/"+records.DeliveryID(eventID, ep.ID), nil)
		if status == http.StatusOK && strings.Contains(string(detail), `"state":"succeeded"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery not succeeded within 60 s: %s", detail)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("the receiver got %d requests, want 2", len(seen))
	}
	for i, h := range seen {
		r := &http.Request{Header: h}
		if user, pass, ok := r.BasicAuth(); !ok || user != "hooks" || pass != password || h.Get("X-Tenant") != "acme" {
			t.Fatalf("request %d: headers %v", i+1, h)
		}
	}
	if got := proxy.Targets(); len(got) == 0 {
		t.Fatal("the deliveries did not go through the configured proxy")
	}
	if !strings.Contains(string(detail), "X-Tenant") {
		t.Fatalf("the first attempt's evidence is not in the history, so this test proves nothing: %s", detail)
	}
	for _, s := range []string{password, base64.StdEncoding.EncodeToString([]byte("hooks:" + password))} {
		if strings.Contains(string(detail), s) {
			t.Fatalf("a secret is in the history: %s", detail)
		}
	}
	if body := api("GET", "/v1/partners/pa/endpoints/"+ep.ID, nil); strings.Contains(string(body), password) || !strings.Contains(string(body), `"username":"hooks"`) {
		t.Fatalf("GET endpoint: %s", body)
	}
}
