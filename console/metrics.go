package console

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
)

type consoleMetrics struct {
	signIns *prometheus.CounterVec // by outcome: partner, operator, refused
	refused *prometheus.CounterVec // requests refused before reaching a page, by reason
}

func newMetrics(reg prometheus.Registerer) (*consoleMetrics, error) {
	m := &consoleMetrics{
		signIns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookstream_console_sign_ins_total",
			Help: "Console sign-in attempts by outcome: partner, operator, refused (a token the API does not accept).",
		}, []string{"outcome"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookstream_console_requests_refused_total",
			Help: "Console requests refused before any API call, by reason: csrf (a write without the session's CSRF token), cross_origin, no_session.",
		}, []string{"reason"}),
	}
	for _, o := range []string{"partner", "operator", "refused"} {
		m.signIns.WithLabelValues(o)
	}
	for _, r := range []string{"csrf", "cross_origin", "no_session"} {
		m.refused.WithLabelValues(r)
	}
	if err := metrics.Register(reg, m.signIns, m.refused); err != nil {
		return nil, fmt.Errorf("console: metrics: %w", err)
	}
	return m, nil
}
