package reseller_test

import (
	"testing"

	"github.com/hookstream/hookstream/reseller"
)

// ParseDecimal never panics; what it accepts writes back to a string that parses to the same
// value, and arithmetic on it stays exact or is refused.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "12.50", "-1.250000", "0.000001", "1000000000000", "1e3", "00.10", "-0", "9999999999999.999999", "1.2345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := reseller.ParseDecimal(s)
		if err != nil {
			return
		}
		back, err := reseller.ParseDecimal(d.String())
		if err != nil || back.Cmp(d) != 0 {
			t.Fatalf("%q -> %s -> %s, %v", s, d, back, err)
		}
		if sum, err := d.Add(d.Neg()); err != nil || sum.Sign() != 0 {
			t.Fatalf("%s - %s = %s, %v", d, d, sum, err)
		}
		_ = reseller.Percent(d, reseller.MustDecimal("100"))
	})
}
