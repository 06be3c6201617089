// Package metrics holds the Prometheus registry shared by the components of one process, so
// `hookstream dev` can serve every component's metrics from one /metrics route, and the Set a
// component builds and registers its collectors with.
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

// Set builds the collectors of one component, each named hookstream_<Subsystem>_<name>, and
// registers each with Registerer as it is built: the one way a component makes its metrics. A
// nil Registerer registers nothing: the component keeps its metrics for itself (tests,
// libraries). The collectors are the client library's own, so counting costs what it costs
// without a Set.
//
// A collector Registerer holds already is refused, as the component owns its series alone (Err
// reports it), unless Shared is set: then the collector registered before is returned, so
// components that share a process and a registry (`hookstream dev`) or are built again in it
// count in the same series. Any other registration error of a Shared set is a name clash, a bug:
// it panics.
type Set struct {
	Registerer  prometheus.Registerer
	Subsystem   string
	ConstLabels prometheus.Labels // labels every collector of the set carries (nil: none)
	Shared      bool

	err error
}

// Err returns the first registration error of the set, nil when every collector was
// registered.
func (s *Set) Err() error { return s.err }

// Counter returns a registered counter.
func (s *Set) Counter(name, help string) prometheus.Counter {
	return add(s, prometheus.NewCounter(prometheus.CounterOpts(s.opts(name, help))))
}

// CounterVec returns a registered counter with the given labels.
func (s *Set) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return add(s, prometheus.NewCounterVec(prometheus.CounterOpts(s.opts(name, help)), labels))
}

// Gauge returns a registered gauge.
func (s *Set) Gauge(name, help string) prometheus.Gauge {
	return add(s, prometheus.NewGauge(prometheus.GaugeOpts(s.opts(name, help))))
}

// GaugeVec returns a registered gauge with the given labels.
func (s *Set) GaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return add(s, prometheus.NewGaugeVec(prometheus.GaugeOpts(s.opts(name, help)), labels))
}

// GaugeFunc returns a registered gauge whose value value returns at each scrape.
func (s *Set) GaugeFunc(name, help string, value func() float64) prometheus.GaugeFunc {
	return add(s, prometheus.NewGaugeFunc(prometheus.GaugeOpts(s.opts(name, help)), value))
}

// CommitBuckets are the buckets of a Kafka transaction's commit time: a few round trips to the
// broker, half a millisecond on an idle loopback, seconds when a broker is failing over.
var CommitBuckets = []float64{.0005, .001, .002, .004, .008, .016, .032, .064, .128, .256, .512, 1, 2.5, 10}

// Histogram returns a registered histogram with the given buckets.
func (s *Set) Histogram(name, help string, buckets []float64) prometheus.Histogram {
	o := s.opts(name, help)
	return add(s, prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: o.Namespace, Subsystem: o.Subsystem,
		Name: o.Name, Help: o.Help, ConstLabels: o.ConstLabels, Buckets: buckets}))
}

// HistogramVec returns a registered histogram with the given buckets and labels.
func (s *Set) HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	o := s.opts(name, help)
	return add(s, prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: o.Namespace, Subsystem: o.Subsystem,
		Name: o.Name, Help: o.Help, ConstLabels: o.ConstLabels, Buckets: buckets}, labels))
}

// Collector registers a collector of the component's own making (one that reads its values at
// scrape time, say), whose names are its own.
func (s *Set) Collector(c prometheus.Collector) {
	add(s, c)
}

func (s *Set) opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: Namespace, Subsystem: s.Subsystem, Name: name, Help: help, ConstLabels: s.ConstLabels}
}

// add registers c as s says and returns the collector to count in.
func add[C prometheus.Collector](s *Set, c C) C {
	if s.Registerer == nil {
		return c
	}
	if s.Shared {
		return adopt(s.Registerer, c)
	}
	if s.err == nil {
		s.err = s.Registerer.Register(c)
	}
	return c
}

// adopt registers c, or returns the collector of the same description registered before. Any
// other registration error is a name clash, a bug.
func adopt[C prometheus.Collector](reg prometheus.Registerer, c C) C {
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
