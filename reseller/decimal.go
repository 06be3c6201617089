package reseller

import (
	"cmp"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// Decimal is an exact amount of money with the catalog's precision (R7,
// eventcatalog.MoneyPrecision): at most 6 decimals, held as an integer count of millionths, so
// sums and differences are exact and nothing is ever rounded. Amounts are bounded by MaxAmount
// so that no sum of a few of them can overflow.
type Decimal struct{ micros int64 }

// scale is 10^6: the catalog's 6 decimals.
const scale = 1_000_000

// MaxAmount bounds the magnitude of every amount the platform accepts (10^12 currency units).
var MaxAmount = Decimal{1_000_000_000_000 * scale}

// ErrDecimal is wrapped by every refusal of ParseDecimal and of arithmetic past MaxAmount.
var ErrDecimal = errors.New("invalid decimal amount")

// decimalPattern is the catalog's money value pattern.
var decimalPattern = regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,6})?$`)

// ParseDecimal reads a decimal string as the catalog writes money ("12.5", "-1.250000"). More
// than 6 decimals are refused, not rounded: the platform never changes an amount it is given.
func ParseDecimal(s string) (Decimal, error) {
	if !decimalPattern.MatchString(s) {
		if whole, frac, ok := strings.Cut(s, "."); ok && len(frac) > 6 && decimalPattern.MatchString(whole+"."+frac[:6]) {
			return Decimal{}, fmt.Errorf("%w: %q has %d decimals, at most 6 are kept and none is rounded", ErrDecimal, s, len(frac))
		}
		return Decimal{}, fmt.Errorf("%w: %q is not a decimal string like \"12.50\"", ErrDecimal, cut(s))
	}
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 13 {
		return Decimal{}, fmt.Errorf("%w: %q is beyond %s", ErrDecimal, cut(s), MaxAmount)
	}
	var n big.Int
	n.SetString(whole+frac+strings.Repeat("0", 6-len(frac)), 10)
	if neg {
		n.Neg(&n)
	}
	return fromBig(&n, s)
}

// MustDecimal is ParseDecimal for literals; it panics on a malformed one.
func MustDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

func fromBig(n *big.Int, what string) (Decimal, error) {
	if n.CmpAbs(big.NewInt(MaxAmount.micros)) > 0 {
		return Decimal{}, fmt.Errorf("%w: %s is beyond %d.000000", ErrDecimal, cut(what), MaxAmount.micros/scale)
	}
	return Decimal{n.Int64()}, nil
}

// String writes d with at least 2 and at most 6 decimals ("50.00", "-1.25", "3.4182").
func (d Decimal) String() string {
	m := d.micros
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	frac := strings.TrimRight(fmt.Sprintf("%06d", m%scale), "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return fmt.Sprintf("%s%d.%s", sign, m/scale, frac)
}

// Add returns d + o, refusing a result beyond MaxAmount.
func (d Decimal) Add(o Decimal) (Decimal, error) {
	var n big.Int
	n.Add(big.NewInt(d.micros), big.NewInt(o.micros))
	return fromBig(&n, n.String()+" millionths")
}

// Sub returns d - o, refusing a result beyond MaxAmount.
func (d Decimal) Sub(o Decimal) (Decimal, error) { return d.Add(o.Neg()) }

// Neg returns -d.
func (d Decimal) Neg() Decimal { return Decimal{-d.micros} }

// Cmp compares d and o: -1, 0 or +1.
func (d Decimal) Cmp(o Decimal) int {
	return cmp.Compare(d.micros, o.micros)
}

// Sign is -1, 0 or +1.
func (d Decimal) Sign() int { return d.Cmp(Decimal{}) }

// MarshalText writes String, so a Decimal is a JSON string, never a number.
func (d Decimal) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads ParseDecimal.
func (d *Decimal) UnmarshalText(b []byte) error {
	v, err := ParseDecimal(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Money is a Decimal with its currency, as the catalog's money object (R7).
type Money struct {
	Value    Decimal `json:"value"`
	Currency string  `json:"currency"`
}

func cut(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

var currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
