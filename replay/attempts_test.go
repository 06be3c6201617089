package replay

import "testing"

func TestNextAttempt(t *testing.T) {
	s := func(v string) *string { return &v }
	const automatic = 10
	tests := []struct {
		name                           string
		state                          *string
		count, highest, reserved, want int
	}{
		{"failed after the schedule: next number", s("failed"), 10, 10, 0, 11},
		{"failed early (not retryable): next number", s("failed"), 3, 3, 0, 4},
		{"succeeded: next number", s("succeeded"), 1, 1, 0, 2},
		{"skipped: next number", s("skipped"), 1, 1, 0, 2},
		{"retrying: above the schedule", s("retrying"), 3, 3, 0, 11},
		{"pending: above the schedule", s("pending"), 0, 0, 0, 11},
		{"never recorded: above the schedule", nil, 0, 0, 0, 11},
		{"replay reserved, not yet recorded: above the schedule", s("failed"), 3, 3, 4, 11},
		{"second replay in flight: above it", s("failed"), 3, 3, 11, 12},
		{"replay recorded and final: next number", s("succeeded"), 12, 12, 12, 13},
		{"attempt rows ahead of the delivery row", s("failed"), 3, 5, 0, 6},
		{"ordered hold past the schedule, retrying", s("retrying"), 14, 14, 0, 15},
	}
	for _, tt := range tests {
		if got := nextAttempt(tt.state, tt.count, tt.highest, tt.reserved, automatic); got != tt.want {
			t.Errorf("%s: nextAttempt = %d, want %d", tt.name, got, tt.want)
		}
	}
}
