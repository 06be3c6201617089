package testenv

import (
	"strings"
	"testing"
)

// ConfigCase is one change to a valid configuration and what its Validate must say of the
// result: Want, a phrase the error holds, or "" when the change leaves it valid. (An alias of a
// struct literal type, so that tables list their cases unkeyed, as rows.)
type ConfigCase[C any] = struct {
	Name   string
	Change func(*C)
	Want   string
}

// CheckValidate runs each case as a subtest: Change applied to a fresh valid(), validate must
// accept the result when Want is "" and otherwise refuse it with an error holding Want.
func CheckValidate[C any](t *testing.T, valid func() C, validate func(C) error, cases []ConfigCase[C]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			cfg := valid()
			c.Change(&cfg)
			err := validate(cfg)
			switch {
			case c.Want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case c.Want != "" && (err == nil || !strings.Contains(err.Error(), c.Want)):
				t.Fatalf("Validate() = %v, want an error about %q", err, c.Want)
			}
		})
	}
}

// ErrorMentions fails t unless err is an error holding every phrase of wants, as a Validate
// that reports every problem at once returns for a zero configuration.
func ErrorMentions(t testing.TB, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one about %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}
