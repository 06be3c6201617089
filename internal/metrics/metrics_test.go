package metrics_test

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
)

func counter(name string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Namespace: metrics.Namespace, Name: name, Help: name})
}

func TestRegisterRefusesASecondOwner(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, counter("a_total"), counter("b_total")); err != nil {
		t.Fatal(err)
	}
	err := metrics.Register(reg, counter("c_total"), counter("a_total"))
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		t.Fatalf("registering a_total again: %v, want AlreadyRegisteredError", err)
	}
	if err := metrics.Register(nil, counter("a_total")); err != nil {
		t.Fatalf("nil registerer: %v", err)
	}
}

func TestAdoptSharesTheSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	first := metrics.Adopt(reg, counter("shared_total"))
	second := metrics.Adopt(reg, counter("shared_total"))
	first.Inc()
	second.Inc()
	if first != second {
		t.Fatal("the second counter was not adopted")
	}
	own := counter("own_total")
	if got := metrics.Adopt(nil, own); got != own {
		t.Fatal("a nil registerer must return the collector itself")
	}
}

func TestAdoptPanicsOnAClash(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.Adopt(reg, counter("clash_total"))
	defer func() {
		if recover() == nil {
			t.Fatal("a gauge under a counter's name was accepted")
		}
	}()
	metrics.Adopt(reg, prometheus.NewGauge(prometheus.GaugeOpts{Namespace: metrics.Namespace, Name: "clash_total", Help: "other"}))
}
