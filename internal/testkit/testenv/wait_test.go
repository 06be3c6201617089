package testenv

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestPoll(t *testing.T) {
	n := 0
	if !Poll(time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("poll stopped after %d checks", n)
	}
	if Poll(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never holds held")
	}
}

func TestValueOfEveryKind(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c_total", Help: "c"}, []string{"k"})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g", Help: "g"})
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h_seconds", Help: "h"})
	reg.MustRegister(c, g, h)
	c.WithLabelValues("a").Add(2)
	c.WithLabelValues("b").Add(3)
	g.Set(7)
	h.Observe(1)
	h.Observe(2)
	for _, v := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"c_total", nil, 5}, {"c_total", []string{"k", "b"}, 3}, {"g", nil, 7}, {"h_seconds", nil, 2}, {"missing", nil, 0},
	} {
		if got := Value(t, reg, v.name, v.labels...); got != v.want {
			t.Errorf("%s %v = %v, want %v", v.name, v.labels, got, v.want)
		}
	}
	WaitValue(t, reg, "c_total", 5, time.Second)
}
