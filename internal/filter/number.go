package filter

import (
	"strconv"
	"strings"
)

// decimal is a number in a canonical, exact form: 0.digits × 10^exp, with digits free of
// leading and trailing zeros ("" for zero, which is never negative). Two numbers are equal
// exactly when their decimals are, so a decimal is also a map key. Comparing two costs at most
// a comparison of their digit strings (at most maxNumberText bytes), whatever their exponents:
// 1e-400 compares as fast as 1, where an exact rational would build a 400-digit denominator.
type decimal struct {
	neg    bool
	digits string
	exp    int
}

// Bounds of numbers, in filters and in envelopes alike.
const (
	// maxNumberText is the longest number (or decimal string) read as a number.
	maxNumberText = 100
	// maxWrittenExponent bounds the exponent as written ("1e400"); beyond it a value in an
	// envelope is no number, and a literal is refused.
	maxWrittenExponent = 400
)

// parseDecimal reads a JSON number, or a decimal string ("12.50", "007"), exactly: an optional
// minus, digits, an optional fraction, and (when allowExp) an optional exponent.
func parseDecimal(s string, allowExp bool) (decimal, bool) {
	if s == "" || len(s) > maxNumberText {
		return decimal{}, false
	}
	neg := false
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	mant, expText := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if !allowExp {
			return decimal{}, false
		}
		mant, expText = s[:i], s[i+1:]
	}
	whole, frac, hasFrac := strings.Cut(mant, ".")
	if whole == "" || (hasFrac && frac == "") || !allDigits(whole) || !allDigits(frac) {
		return decimal{}, false
	}
	exp := 0
	if expText != "" || len(mant) < len(s) {
		digits := strings.TrimLeft(expText, "+-")
		if len(expText)-len(digits) > 1 || digits == "" || !allDigits(digits) {
			return decimal{}, false
		}
		e, err := strconv.Atoi(expText)
		if err != nil || e < -maxWrittenExponent || e > maxWrittenExponent {
			return decimal{}, false
		}
		exp = e
	}
	// 0.(whole frac) × 10^(len(whole)+exp), then drop the zeros that carry no value.
	exp += len(whole)
	all := whole + frac
	trimmed := strings.TrimLeft(all, "0")
	exp -= len(all) - len(trimmed)
	trimmed = strings.TrimRight(trimmed, "0")
	if trimmed == "" {
		return decimal{}, true // zero; -0 is 0
	}
	return decimal{neg: neg, digits: trimmed, exp: exp}, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// cmp returns -1, 0 or 1 as d is less than, equal to or greater than e.
func (d decimal) cmp(e decimal) int {
	ds, es := d.sign(), e.sign()
	switch {
	case ds != es:
		if ds < es {
			return -1
		}
		return 1
	case ds == 0:
		return 0
	}
	// Same sign, both nonzero: the larger exponent is the larger magnitude; at the same
	// exponent the digit strings compare as the magnitudes do (no trailing zeros).
	c := 0
	switch {
	case d.exp != e.exp:
		c = 1
		if d.exp < e.exp {
			c = -1
		}
	default:
		c = strings.Compare(d.digits, e.digits)
	}
	return c * ds
}

func (d decimal) sign() int {
	switch {
	case d.digits == "":
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// sciExponent is the exponent of d written as d.ddd × 10^e (0 for zero).
func (d decimal) sciExponent() int {
	if d.digits == "" {
		return 0
	}
	return d.exp - 1
}
