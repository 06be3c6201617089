package main

import (
	"io"
	"testing"
	"time"

	"github.com/hookstream/hookstream/egress"
)

// HOOKSTREAM_REQUEST_TIMEOUT sets the deadline of a webhook request; 15 s by default, and a
// value that is not a positive duration is refused at start.
func TestRequestTimeoutSetting(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want time.Duration
	}{
		{nil, egress.DefaultRequestTimeout},
		{[]string{"--request-timeout", "2s"}, 2 * time.Second},
	} {
		s, err := newCommandFlags("sender", "", egressSettings, nil).parse(tt.args, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		cfg, err := s.egressConfig()
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if cfg.RequestTimeout != tt.want {
			t.Errorf("%v: request timeout %v, want %v", tt.args, cfg.RequestTimeout, tt.want)
		}
	}
	for _, bad := range []string{"0s", "-1s", "soon"} {
		if _, err := newCommandFlags("sender", "", egressSettings, nil).parse([]string{"--request-timeout", bad}, io.Discard); err == nil {
			t.Errorf("--request-timeout %s accepted", bad)
		}
	}
}
