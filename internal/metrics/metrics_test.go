package metrics_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
)

func TestSetRefusesASecondOwner(t *testing.T) {
	reg := prometheus.NewRegistry()
	first := &metrics.Set{Registerer: reg, Subsystem: "test"}
	first.Counter("a_total", "a")
	first.Counter("b_total", "b")
	if err := first.Err(); err != nil {
		t.Fatal(err)
	}
	second := &metrics.Set{Registerer: reg, Subsystem: "test"}
	second.Counter("c_total", "c")
	second.Counter("a_total", "a")
	var are prometheus.AlreadyRegisteredError
	if !errors.As(second.Err(), &are) {
		t.Fatalf("registering a_total again: %v, want AlreadyRegisteredError", second.Err())
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	if want := "[hookstream_test_a_total hookstream_test_b_total hookstream_test_c_total]"; fmt.Sprint(names) != want {
		t.Fatalf("registered %v, want %s", names, want)
	}
	unregistered := &metrics.Set{Subsystem: "test"}
	unregistered.Counter("a_total", "a")
	if err := unregistered.Err(); err != nil {
		t.Fatalf("nil registerer: %v", err)
	}
}

func TestSharedSetSharesTheSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	first := (&metrics.Set{Registerer: reg, Subsystem: "test", Shared: true}).Counter("shared_total", "shared")
	second := (&metrics.Set{Registerer: reg, Subsystem: "test", Shared: true}).Counter("shared_total", "shared")
	first.Inc()
	second.Inc()
	if first != second {
		t.Fatal("the second counter was not adopted")
	}
}

func TestSharedSetPanicsOnAClash(t *testing.T) {
	reg := prometheus.NewRegistry()
	(&metrics.Set{Registerer: reg, Subsystem: "test", Shared: true}).Counter("clash_total", "clash")
	defer func() {
		if recover() == nil {
			t.Fatal("a gauge under a counter's name was accepted")
		}
	}()
	(&metrics.Set{Registerer: reg, Subsystem: "test", Shared: true}).Gauge("clash_total", "other")
}
