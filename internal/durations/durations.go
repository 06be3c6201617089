// Package durations checks the durations of a configuration: one rule and one wording for every
// component's Validate, so that a timeout, an interval or a window set to zero or less is refused
// the same way wherever it is set.
package durations

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// NotPositive returns an error "<name> <value> must be positive" for each of settings (a
// setting's name as the error names it, and its value) that is zero or less, in name order.
func NotPositive(settings map[string]time.Duration) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		if d := settings[name]; d <= 0 {
			errs = append(errs, fmt.Errorf("%s %s must be positive", name, d))
		}
	}
	return errs
}
