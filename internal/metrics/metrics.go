// Package metrics holds the Prometheus registry shared by the components of one process, so
// `hookstream dev` can serve every component's metrics from one /metrics route, and the two ways
// a component registers its collectors there.
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace prefixes every hookstream metric (design.md section 12).
const Namespace = "hookstream"

// NewRegistry returns a registry with the Go runtime and process collectors registered.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Register registers the collectors of one component with reg, in order, and returns the first
// error: a collector reg holds already is refused, as the component owns its series alone. A
// nil reg registers nothing: the component keeps its metrics for itself (tests, libraries).
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Adopt registers c, or returns the collector of the same description registered before, so
// components that share a process and a registry (`hookstream dev`) or are built again in it
// count in the same series. Any other registration error is a name clash, a bug. A nil reg
// registers nothing and returns c.
func Adopt[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}
