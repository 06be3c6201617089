package reseller_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hookstream/hookstream/reseller"
)

func d(s string) reseller.Decimal { return reseller.MustDecimal(s) }

// R5: the crossing rule as a table of transitions. Each row is a sequence of spend values of one
// budget (limit 100.00, thresholds 80 and 100 unless given); want lists the crossings each step
// fires.
func TestBudgetCrossings(t *testing.T) {
	cases := []struct {
		name       string
		limit      string
		thresholds []int
		spends     []string // spend before the first step, then after each step
		want       []string // per step: the thresholds fired, as "80 78.10->81.35"
	}{
		{"below to at", "100.00", nil, []string{"79.99", "80.00"}, []string{"[80 79.99->80.00]"}},
		{"below to above", "100.00", nil, []string{"78.10", "81.35"}, []string{"[80 78.10->81.35]"}},
		{"at to above: no event", "100.00", nil, []string{"80.00", "95.00"}, []string{"[]"}},
		{"above to above: no event", "100.00", nil, []string{"85.00", "90.00"}, []string{"[]"}},
		{"below to below: no event", "100.00", nil, []string{"10.00", "79.999999"}, []string{"[]"}},
		{"above, reversal below, above again: re-armed", "100.00", nil,
			[]string{"70.00", "85.00", "75.00", "82.00"},
			[]string{"[80 70.00->85.00]", "[]", "[80 75.00->82.00]"}},
		{"reversal to exactly the threshold does not re-arm", "100.00", nil,
			[]string{"70.00", "85.00", "80.00", "90.00"},
			[]string{"[80 70.00->85.00]", "[]", "[]"}},
		{"one jump over both: two events in order", "100.00", nil, []string{"10.00", "120.00"},
			[]string{"[80 10.00->120.00 100 10.00->120.00]"}},
		{"a credit (negative spend change) re-arms", "100.00", nil,
			[]string{"99.00", "100.00", "60.00", "100.50"},
			[]string{"[100 99.00->100.00]", "[]", "[80 60.00->100.50 100 60.00->100.50]"}},
		{"exact boundary: 16.666666 is below 50 % of 33.333333 (16.6666665)", "33.333333", []int{50},
			[]string{"16.00", "16.666666"}, []string{"[]"}},
		{"exact boundary: 50 % of 33.333333 is 16.6666665, so 16.666667 crosses", "33.333333", []int{50},
			[]string{"16.666666", "16.666667"}, []string{"[50 49.99->50.00]"}},
		{"a percent shown as 79.99 never fires 80", "3.000000", nil, []string{"2.00", "2.399999"}, []string{"[]"}},
		{"displayed percent truncates: 80 % exactly", "3.000000", nil, []string{"2.00", "2.40"}, []string{"[80 66.66->80.00]"}},
		{"configured thresholds", "200.00", []int{100, 50, 90}, []string{"0", "100.00", "200.00"},
			[]string{"[50 0.00->50.00]", "[90 50.00->100.00 100 50.00->100.00]"}},
		{"negative spend shows 0", "100.00", nil, []string{"-5.00", "81.00"}, []string{"[80 0.00->81.00]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := tc.thresholds
			if ts == nil {
				ts = reseller.DefaultThresholds
			}
			for i := 1; i < len(tc.spends); i++ {
				got := "["
				for j, c := range reseller.Crossings(d(tc.limit), ts, d(tc.spends[i-1]), d(tc.spends[i])) {
					if j > 0 {
						got += " "
					}
					got += fmt.Sprintf("%d %s->%s", c.Threshold, c.PreviousPercent, c.CurrentPercent)
				}
				got += "]"
				if got != tc.want[i-1] {
					t.Errorf("step %d (%s -> %s): %s, want %s", i, tc.spends[i-1], tc.spends[i], got, tc.want[i-1])
				}
			}
		})
	}
}

// balance.low follows the same rule downward on the customer's floor.
func TestBalanceLow(t *testing.T) {
	cases := []struct {
		floor, before, after string
		want                 bool
	}{
		{"5.00", "6.00", "4.90", true},      // above to below
		{"5.00", "5.00", "4.999999", true},  // at to below, by a millionth
		{"5.00", "4.90", "3.00", false},     // already below
		{"5.00", "4.90", "5.00", false},     // a credit back to the floor re-arms, fires nothing
		{"5.00", "5.00", "5.00", false},     // at the floor is not low
		{"5.00", "6.00", "5.000001", false}, // stays above
		{"0", "1.00", "-0.01", true},        // floor zero: overdrawn
	}
	for _, tc := range cases {
		if got := reseller.BalanceLow(d(tc.floor), d(tc.before), d(tc.after)); got != tc.want {
			t.Errorf("floor %s, %s -> %s: %v, want %v", tc.floor, tc.before, tc.after, got, tc.want)
		}
	}
}

// R7: decimal strings with at most 6 decimals, exact arithmetic, never rounded.
func TestDecimal(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0.00", "50": "50.00", "50.5": "50.50", "-1.250000": "-1.25", "3.418200": "3.4182",
		"0.000001": "0.000001", "007.10": "7.10", "1000000000000": "1000000000000.00",
	} {
		got, err := reseller.ParseDecimal(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseDecimal(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1.", ".5", "1e3", "1,00", "+1", "0.0000001", "12.3456789", "NaN", "1000000000000.000001", "99999999999999999999"} {
		if _, err := reseller.ParseDecimal(in); !errors.Is(err, reseller.ErrDecimal) {
			t.Errorf("ParseDecimal(%q): %v, want ErrDecimal", in, err)
		}
	}
	// 0.1 + 0.2 is 0.3, exactly.
	if s, _ := d("0.1").Add(d("0.2")); s.Cmp(d("0.3")) != 0 {
		t.Errorf("0.1 + 0.2 = %s", s)
	}
	if _, err := reseller.MaxAmount.Add(d("0.000001")); !errors.Is(err, reseller.ErrDecimal) {
		t.Errorf("past MaxAmount: %v", err)
	}
}
