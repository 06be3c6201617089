package probes

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check is one dependency that must answer for the process to be ready, e.g. a database ping.
type Check struct {
	Name string
	Ping func(ctx context.Context) error
}

// Handler serves GET /healthz (the process is alive), GET /readyz (every check answers within
// two seconds) and GET /metrics (Prometheus text format from reg).
func Handler(reg prometheus.Gatherer, checks ...Check) http.Handler {
	mux := health(checks)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

// Health serves GET /healthz and GET /readyz as Handler does, without /metrics: for a listener
// that partners reach while the metrics are served on an address of their own.
func Health(checks ...Check) http.Handler { return health(checks) }

func health(checks []Check) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		result := map[string]string{}
		status := http.StatusOK
		for _, c := range checks {
			if err := c.Ping(ctx); err != nil {
				result[c.Name] = err.Error()
				status = http.StatusServiceUnavailable
			} else {
				result[c.Name] = "ok"
			}
		}
		writeJSON(w, status, map[string]any{"ready": status == http.StatusOK, "checks": result})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
