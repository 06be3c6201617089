package reseller

import (
	"fmt"
	"math/big"
	"slices"
)

// The crossing rule of R5, the one the catalog publishes for budget.threshold_crossed and
// balance.low. It is a rule about one change, from a value before to a value after, so it needs
// no remembered "armed" flag: a level fires when the change takes the value from the quiet side
// of it to the alarm side (from below to at-or-above a budget threshold; from at-or-above to
// below a balance floor), and only then. A change back to the quiet side (a reversal, a credit)
// is what re-arms it: the next change across fires again. Applied to changes serialised on the
// budget's or customer's row (the platform locks it), every crossing fires exactly once.
//
// Decisions are made on exact values: spent x 100 >= threshold x limit in integers, never on the
// rounded percent that the event shows (eventcatalog.PercentPrecision).

// DefaultThresholds are a budget's thresholds when it names none (percent of the limit).
var DefaultThresholds = []int{80, 100}

// AllowedThresholds are the thresholds the catalog publishes for budget.threshold_crossed.
var AllowedThresholds = []int{50, 80, 90, 100}

// Crossing is one threshold a change crossed, with the spend ratio before and after in the
// catalog's percent form.
type Crossing struct {
	Threshold       int
	PreviousPercent string
	CurrentPercent  string
}

// Crossings returns the thresholds that a budget's spend crosses upward when it changes from
// before to after under limit (> 0), lowest first: one change across both 80 and 100 is two
// crossings, 80 then 100. A change that ends below a threshold, or that starts at or above it,
// crosses nothing.
func Crossings(limit Decimal, thresholds []int, before, after Decimal) []Crossing {
	var out []Crossing
	ts := slices.Clone(thresholds)
	slices.Sort(ts)
	for _, t := range slices.Compact(ts) {
		if crossed(atOrAbove(before, t, limit), atOrAbove(after, t, limit)) {
			out = append(out, Crossing{Threshold: t, PreviousPercent: Percent(before, limit), CurrentPercent: Percent(after, limit)})
		}
	}
	return out
}

// BalanceLow reports whether a balance change from before to after crosses the floor downward:
// before at or above it, after below it (balance.low).
func BalanceLow(floor, before, after Decimal) bool {
	return crossed(before.Cmp(floor) < 0, after.Cmp(floor) < 0)
}

// crossed is the rule itself: the change left the quiet side for the alarm side.
func crossed(wasAlarm, isAlarm bool) bool { return !wasAlarm && isAlarm }

// atOrAbove reports spent / limit >= t %, exactly.
func atOrAbove(spent Decimal, t int, limit Decimal) bool {
	var l, r big.Int
	l.Mul(big.NewInt(spent.micros), big.NewInt(100))
	r.Mul(big.NewInt(limit.micros), big.NewInt(int64(t)))
	return l.Cmp(&r) >= 0
}

// Percent is spent / limit x 100 with 2 decimals, truncated toward zero; a negative spend
// (more reversed than used) shows as 0.
func Percent(spent, limit Decimal) string {
	if spent.Sign() <= 0 || limit.Sign() <= 0 {
		return "0.00"
	}
	var hundredths big.Int
	hundredths.Mul(big.NewInt(spent.micros), big.NewInt(10_000))
	hundredths.Quo(&hundredths, big.NewInt(limit.micros))
	var whole, frac big.Int
	whole.QuoRem(&hundredths, big.NewInt(100), &frac)
	return fmt.Sprintf("%s.%02d", whole.String(), frac.Int64())
}

// validThresholds checks a budget's thresholds against the catalog's.
func validThresholds(ts []int) error {
	if len(ts) == 0 || len(ts) > len(AllowedThresholds) {
		return fmt.Errorf("thresholds: give 1 to %d of %v", len(AllowedThresholds), AllowedThresholds)
	}
	for _, t := range ts {
		if !slices.Contains(AllowedThresholds, t) {
			return fmt.Errorf("thresholds: %d is not one of %v", t, AllowedThresholds)
		}
	}
	return nil
}
