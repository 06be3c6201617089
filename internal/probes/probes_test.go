package probes

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestReadyzReportsFailingCheck(t *testing.T) {
	h := Handler(prometheus.NewRegistry(),
		Check{Name: "postgres", Ping: func(context.Context) error { return nil }},
		Check{Name: "kafka", Ping: func(context.Context) error { return errors.New("no brokers") }},
	)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"kafka":"no brokers"`) {
		t.Fatalf("readyz = %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("healthz = %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/healthz", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /healthz = %d", rec.Code)
	}
}

// TestHandlerRoutes: each route the deploy manifests probe and Prometheus scrapes reaches its own
// pattern.
func TestHandlerRoutes(t *testing.T) {
	mux := Handler(prometheus.NewRegistry()).(*http.ServeMux)
	for _, p := range []string{"GET /healthz", "GET /readyz", "GET /metrics"} {
		method, path, _ := strings.Cut(p, " ")
		if _, got := mux.Handler(httptest.NewRequest(method, path, nil)); got != p {
			t.Errorf("Handler does not route %s (got %q)", p, got)
		}
	}
}
