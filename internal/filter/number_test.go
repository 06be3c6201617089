package filter

import (
	"math/big"
	"strings"
	"testing"
)

// ratOf is the reference reading of a number: an exact rational, as math/big reads it.
func ratOf(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("big.Rat does not read %q", s)
	}
	return r
}

var decimalSeeds = []string{
	"0", "-0", "0.0", "00", "1", "-1", "1.0", "10", "1e1", "0.1e2", "100e-1", "007.50", "7.5", "-7.5",
	"12.50", "12.5", "12.51", "1204", "1204.0", "880231", "0.25", "2.5e-1", "1e-400", "1e400", "-1e-400",
	"1e-100", "9.99e100", "1e101", "0.000001", "1E+3", "1000", "999.999", "-999.9999", "123456789012345678901234567890",
	"0e-400", "5e-324", "1.7976931348623157e308",
}

// Every pair of numbers compares as exact rationals do, and equal numbers have equal decimals.
func TestDecimalAgreesWithRationals(t *testing.T) {
	t.Parallel()
	for _, a := range decimalSeeds {
		for _, b := range decimalSeeds {
			checkPair(t, a, b)
		}
	}
}

func checkPair(t *testing.T, a, b string) {
	t.Helper()
	da, oka := parseDecimal(a, true)
	db, okb := parseDecimal(b, true)
	if !oka || !okb {
		t.Fatalf("parseDecimal(%q) %v, parseDecimal(%q) %v", a, oka, b, okb)
	}
	want := ratOf(t, a).Cmp(ratOf(t, b))
	if got := da.cmp(db); got != want {
		t.Fatalf("cmp(%s, %s) = %d, want %d (%+v, %+v)", a, b, got, want, da, db)
	}
	if (da == db) != (want == 0) {
		t.Fatalf("%s and %s: decimals equal %v, values equal %v", a, b, da == db, want == 0)
	}
}

func TestParseDecimalRefuses(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "-", ".5", "5.", "+5", "--5", "5e", "5e+", "5e+-1", "5e1.5", "1e401", "1e-401", "0x10", "1_000", " 1", "1 ", "٣",
		strings.Repeat("1", maxNumberText+1)} {
		if d, ok := parseDecimal(s, true); ok {
			t.Errorf("parseDecimal(%q) = %+v, want no number", s, d)
		}
	}
	if _, ok := parseDecimal("1e3", false); ok {
		t.Error("a decimal string with an exponent read as a number")
	}
}

// FuzzDecimal holds the decimal comparison to exact rationals for any two numbers it reads.
func FuzzDecimal(f *testing.F) {
	for i, s := range decimalSeeds {
		f.Add(s, decimalSeeds[(i*7+3)%len(decimalSeeds)])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if _, ok := parseDecimal(a, true); !ok {
			return
		}
		if _, ok := parseDecimal(b, true); !ok {
			return
		}
		checkPair(t, a, b)
	})
}
