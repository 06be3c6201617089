package durations_test

import (
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/durations"
)

func TestNotPositive(t *testing.T) {
	errs := durations.NotPositive(map[string]time.Duration{
		"poll interval": 0, "timeout": time.Second, "lease": -time.Minute,
	})
	var got []string
	for _, err := range errs {
		got = append(got, err.Error())
	}
	want := []string{"lease -1m0s must be positive", "poll interval 0s must be positive"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %q, want %q", got, want)
	}
	if errs := durations.NotPositive(map[string]time.Duration{"timeout": time.Nanosecond}); errs != nil {
		t.Fatalf("a positive duration refused: %v", errs)
	}
}
