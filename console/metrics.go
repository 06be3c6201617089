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

// newMetrics makes the console's metrics; sessions counts the sessions signed in now.
func newMetrics(reg prometheus.Registerer, sessions func() int) (*consoleMetrics, error) {
	set := &metrics.Set{Registerer: reg, Subsystem: "console"}
	m := &consoleMetrics{
		signIns: set.CounterVec("sign_ins_total",
			"Console sign-in attempts by outcome: partner, operator, refused (a token the API does not accept).", "outcome"),
		refused: set.CounterVec("requests_refused_total",
			"Console requests refused before any API call, by reason: csrf (a write without the session's CSRF token), cross_origin, no_session.",
			"reason"),
	}
	set.GaugeFunc("sessions", "Console sessions signed in and not yet expired or signed out.",
		func() float64 { return float64(sessions()) })
	for _, o := range []string{"partner", "operator", "refused"} {
		m.signIns.WithLabelValues(o)
	}
	for _, r := range []string{"csrf", "cross_origin", "no_session"} {
		m.refused.WithLabelValues(r)
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("console: metrics: %w", err)
	}
	return m, nil
}
