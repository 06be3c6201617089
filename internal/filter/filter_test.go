package filter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/filter"
)

// Envelopes of the catalog's shape (R8); money as decimal strings (R7).
const (
	credit = `{"event_id":"evt_01","type":"balance.credited","occurred_at":"2026-03-01T09:30:00Z","partner_id":"pa",
		"subject":{"type":"customer","id":"cus_8f2k1"},"schema_version":1,"correlation_id":null,
		"data":{"customer_id":"cus_8f2k1","amount":{"value":"50.00","currency":"USD"},"balance":{"value":"62.40","currency":"USD"},
		"source":"purchase","tags":["vip","eu"],"weird key":true}}`
	usage = `{"event_id":"evt_02","type":"usage.reported","occurred_at":"2026-03-01T09:30:00Z","partner_id":"pa",
		"subject":{"type":"customer","id":"cus_9"},"schema_version":1,
		"data":{"requests":1204,"input_tokens":880231,"cost":{"value":"3.418200","currency":"USD"},"ratio":0.25,"big":1e3}}`
)

func TestMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		filter   string
		envelope string
		want     bool
	}{
		// equality of strings, numbers, booleans and null
		{`type == "balance.credited"`, credit, true},
		{`type == "balance.debited"`, credit, false},
		{`type != "balance.debited"`, credit, true},
		{`subject.type == "customer"`, credit, true},
		{`data.amount.currency == "USD"`, credit, true},
		{`data.requests == 1204`, usage, true},
		{`data.requests == 1204.0`, usage, true},
		{`data.requests == "1204"`, usage, false}, // a string literal equals only a string
		{`data.amount.value == 50`, credit, true}, // a number literal equals a decimal string of the same value
		{`data.amount.value == 50.001`, credit, false},
		{`data["weird key"] == true`, credit, true},
		{`data["weird key"] == false`, credit, false},
		{`correlation_id == null`, credit, true},
		{`correlation_id == null`, usage, false}, // missing is not null
		{`data.big == 1000`, usage, true},
		// missing paths
		{`data.nothing == "x"`, credit, false},
		{`data.nothing != "x"`, credit, true},
		{`data.amount.value.deeper == 1`, credit, false},
		{`data.tags[5] == "vip"`, credit, false},
		{`data.amount[0] == 1`, credit, false},
		// arrays
		{`data.tags[0] == "vip"`, credit, true},
		{`data.tags[1] in ["us", "eu"]`, credit, true},
		{`data.tags == "vip"`, credit, false}, // an array equals no literal
		// in and not in
		{`data.source in ["purchase", "grant"]`, credit, true},
		{`data.source in ["grant"]`, credit, false},
		{`data.source not in ["grant"]`, credit, true},
		{`data.source not in ["purchase"]`, credit, false},
		{`data.missing not in ["purchase"]`, credit, true},
		{`data.requests in [1, 1204, "x"]`, usage, true},
		// existence
		{`exists(data.source)`, credit, true},
		{`exists(data.source)`, usage, false},
		{`exists(correlation_id)`, credit, true}, // null exists
		{`not exists(data.source)`, usage, true},
		{`exists(data.tags[1])`, credit, true},
		{`exists(data.tags[2])`, credit, false},
		// numeric comparison, exact on decimals
		{`data.amount.value > 49.99`, credit, true},
		{`data.amount.value >= 50`, credit, true},
		{`data.amount.value > 50`, credit, false},
		{`data.amount.value < 50.000001`, credit, true},
		{`data.amount.value <= 49.999999999999999999`, credit, false},
		{`data.cost.value < 3.4182001`, usage, true},
		{`data.ratio < 0.3`, usage, true},
		{`data.input_tokens >= 880231`, usage, true},
		{`data.input_tokens > 880231`, usage, false},
		{`data.requests > -1`, usage, true},
		{`data.source > 1`, credit, false},          // text is no number
		{`data.nothing < 1`, credit, false},         // missing is no number
		{`correlation_id < 1`, credit, false},       // null is no number
		{`data.amount.currency < 1`, credit, false}, // "USD" is no number
		// and, or, not, parentheses, precedence
		{`type == "usage.reported" or data.amount.value > 10`, credit, true},
		{`type == "usage.reported" and data.amount.value > 10`, credit, false},
		{`type == "x" or type == "y" or data.source == "purchase"`, credit, true},
		{`type == "x" and type == "y" or data.source == "purchase"`, credit, true},    // and binds tighter
		{`type == "x" and (type == "y" or data.source == "purchase")`, credit, false}, // parentheses
		{`not type == "x" and data.source == "purchase"`, credit, true},
		{`not (type == "balance.credited" and data.source == "purchase")`, credit, false},
		{`not not exists(data)`, credit, true},
		{"exists(data.source)\n\tand data.amount.value >= 50", credit, true},
		// numbers in every spelling, exactly
		{`data.amount.value == 5e1`, credit, true},
		{`data.amount.value == 0.5e2`, credit, true},
		{`data.amount.value == 500e-1`, credit, true},
		{`data.big == 1e3`, usage, true},
		{`data.big > 999.9999999999999999999`, usage, true},
		{`data.big < 1e-100`, usage, false},
		{`data.requests > -1e100`, usage, true},
		{`data.amount.value in [5e1]`, credit, true},     // a number in a list equals a decimal string
		{`data.amount.value in ["50.00"]`, credit, true}, // and a string its own text
		{`data.amount.value in ["50"]`, credit, false},
		{`data.requests in [1204e0]`, usage, true},
		{`data.requests in ["1204"]`, usage, false},
		{`data.tags[0] in [true, null, 1, "vip"]`, credit, true},
		{`correlation_id in [false, null]`, credit, true},
		{`data["weird key"] in [false, null]`, credit, false},
		{`data["weird key"] in [true]`, credit, true},
		{`data.amount in ["USD", 50]`, credit, false}, // an object is in no list
	}
	for _, c := range cases {
		f, err := filter.Parse(c.filter)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.filter, err)
			continue
		}
		doc, err := filter.Decode([]byte(c.envelope))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Match(doc); got != c.want {
			t.Errorf("%q on %.40s…: %v, want %v", c.filter, c.envelope[15:], got, c.want)
		}
	}
}

// An invalid filter is refused with the position (in characters, from 1) of its fault.
func TestInvalidFilters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		filter string
		pos    int
		msg    string
	}{
		{``, 1, "needs an expression"},
		{`   `, 4, "needs an expression"},
		{`type = "x"`, 6, "=="},
		{`type == `, 9, "expected a value"},
		{`type == "x`, 9, "not closed"},
		{`type "x"`, 6, "expected an operator"},
		{`dta.x == 1`, 1, `"dta" is no envelope field`},
		{`data. x == 1`, 7, "field name after the dot"},
		{`data.["k"] == 1`, 6, "field name after the dot"},
		{`data.x > "10"`, 10, "compares numbers"},
		{`data.x >= true`, 11, "compares numbers"},
		{`data.x == 1 and`, 16, "expected a path"},
		{`data.x == 1 or or`, 16, `"or" is no envelope field`},
		{`(data.x == 1`, 13, `expected ")"`},
		{`data.x == 1)`, 12, `expected "and", "or" or the end`},
		{`data.x in "a"`, 11, `expected "["`},
		{`data.x in ["a",]`, 16, "expected a value"},
		{`data.x in ["a" "b"]`, 16, `expected "," or "]"`},
		{`data.x not == 1`, 12, `expected "in" after "not"`},
		{`exists data.x`, 8, `"(" after exists`},
		{`exists(data.x`, 14, `")" after the path`},
		{`data.x == 01`, 11, "is not a number"},
		{`data.x == 1.`, 11, "is not a number"},
		{`data.x == 1e999`, 11, "out of range"},
		{`data.x == 1e-400`, 11, "the number 1e-400 is out of range"},
		{`data.x in [1, 1e-101]`, 15, "exponent e within ±100"},
		{`data.x > 1e101`, 10, "out of range"},
		{`data.x < -10e100`, 10, "out of range"},
		{`data.x == 0.` + strings.Repeat("0", 100) + `1`, 11, "at most 100 characters"},
		{`data.x[-1] == 1`, 8, "whole number from 0"},
		{`data.x[1.5] == 1`, 8, "whole number from 0"},
		{`data.x == "a\q"`, 11, "valid JSON string"},
		{`data.x == 1 && data.y == 2`, 13, `write "and"`},
		{`data.émoji == 1`, 6, "field name after the dot"},
		{`type == "é" or @`, 16, "unexpected character"},
		{`data.x == yes`, 11, "expected a value"},
		{`AND`, 1, "no envelope field"},
		{strings.Repeat("(", 17) + `type == "x"` + strings.Repeat(")", 17), 17, "nested more than 16"},
		{strings.Repeat("not ", 17) + `type == "x"`, 65, "nested more than 16"},
		{`data` + strings.Repeat(".a", 17) + ` == 1`, 35, "at most 16 segments"},
		{`data.x in [` + strings.Repeat(`1,`, 64) + `1]`, 140, "at most 64 values"},
		{`type == "` + strings.Repeat("x", filter.MaxLength) + `"`, filter.MaxLength + 1, "at most 2048 bytes"},
		{"type == \"\xff\"", 1, "UTF-8"},
	}
	for _, c := range cases {
		_, err := filter.Parse(c.filter)
		var se *filter.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a syntax error", c.filter, err)
			continue
		}
		if se.Pos != c.pos || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("Parse(%q): %v; want position %d and %q", c.filter, err, c.pos, c.msg)
		}
		if !strings.HasPrefix(err.Error(), "position ") {
			t.Errorf("error %q does not start with its position", err)
		}
	}
}

// MaxCost bounds what a filter costs to evaluate: comparisons and the path segments they
// walk, an in list costing the same whatever its length. The refusal names the comparison
// that crosses the budget.
func TestCostBudget(t *testing.T) {
	t.Parallel()
	or := func(n int, clause string) string {
		return strings.TrimSuffix(strings.Repeat(clause+" or ", n), " or ")
	}
	for _, ok := range []string{
		or(10, `type == "x"`),     // 10 × 2
		or(6, `data.a == 1`),      // 6 × 3
		or(5, `data.a.b < 2`),     // 5 × 4
		attackFilter("1e-100", 4), // 4 × 3, 256 numbers
		`exists(data` + strings.Repeat(".a", 15) + `) and type in ["a", "b", "c"]`, // 17 + 2
	} {
		if _, err := filter.Parse(ok); err != nil {
			t.Errorf("Parse(%.60q…): %v", ok, err)
		}
	}
	for _, tt := range []struct {
		filter string
		pos    int
	}{
		{or(11, `type == "x"`), 10*len(`type == "x" or `) + 1},
		{or(7, `data.a == 1`), 6*len(`data.a == 1 or `) + 1},
		{`type == "a" and ` + `exists(data` + strings.Repeat(".a", 15) + `) and exists(data` + strings.Repeat(".a", 15) + `)`,
			len(`type == "a" and exists(data`+strings.Repeat(".a", 15)+`) and `) + 1},
		{`not (` + or(11, `data == null`) + `)`, len(`not (`) + 10*len(`data == null or `) + 1},
		{`data.x in [1] and data.y not in ["a"] and data.z.a.b.c.d.e.f.g.h.i.j.k.l > 1`, len(`data.x in [1] and data.y not in ["a"] and `) + 1},
	} {
		_, err := filter.Parse(tt.filter)
		var se *filter.SyntaxError
		if !errors.As(err, &se) || se.Pos != tt.pos || !strings.Contains(se.Msg, "costs more than 20") {
			t.Errorf("Parse(%.60q…) = %v, want the cost refused at position %d", tt.filter, err, tt.pos)
		}
		// A filter registered before the budget existed still reads.
		if _, err := filter.ParseStored(tt.filter); err != nil {
			t.Errorf("ParseStored(%.60q…): %v", tt.filter, err)
		}
	}
}

// attackFilter is the shape of filter that once cost fanout 75-290 µs an evaluation: lists of
// numbers with huge exponents, within every limit of the text.
func attackFilter(number string, lists int) string {
	list := strings.TrimSuffix(strings.Repeat(number+",", filter.MaxList), ",")
	var b strings.Builder
	for i := range lists {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("data.requests in [" + list + "]")
	}
	return b.String()
}

// The extreme numbers are refused at registration; a filter stored before keeps reading, and
// evaluates exactly.
func TestHugeExponents(t *testing.T) {
	t.Parallel()
	attack := attackFilter("1e-400", 1)
	_, err := filter.Parse(attack)
	var se *filter.SyntaxError
	if !errors.As(err, &se) || se.Pos != 19 || !strings.Contains(se.Msg, "the number 1e-400 is out of range") {
		t.Fatalf("Parse(attack) = %v, want 1e-400 refused at position 19", err)
	}
	stored, err := filter.ParseStored(attack)
	if err != nil {
		t.Fatalf("ParseStored(attack): %v", err)
	}
	doc, err := filter.Decode([]byte(usage))
	if err != nil {
		t.Fatal(err)
	}
	if stored.Match(doc) {
		t.Error("1204 is in a list of 1e-400")
	}
	for src, want := range map[string]bool{
		`data.requests > 1e-400`:           true,
		`data.requests < 1e400`:            true,
		`data.requests > 1203.99e0`:        true,
		`data.ratio == 25e-2`:              true,
		`data.ratio in [2.5e-1, 1e-400]`:   true,
		`data.ratio < 1e-400`:              false,
		`data.requests > 12040000e-4`:      false,
		`data.requests < -1e-400`:          false,
		`data.requests == 1204.0000000000`: true,
	} {
		flt, err := filter.ParseStored(src)
		if err != nil {
			t.Fatalf("ParseStored(%q): %v", src, err)
		}
		if got := flt.Match(doc); got != want {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
	// Numbers past the bounds in an envelope are no numbers: they match no comparison.
	huge, err := filter.Decode([]byte(`{"data":{"x":1e401,"y":"` + strings.Repeat("1", 101) + `","z":1e400}}`))
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]bool{
		`data.x > 0`: false, `data.x != 1`: true, `data.y > 0`: false, `data.z > 1e100`: true, `exists(data.x)`: true,
		`data.y == "` + strings.Repeat("1", 101) + `"`: true,
	} {
		flt, err := filter.ParseStored(src)
		if err != nil {
			t.Fatalf("ParseStored(%q): %v", src, err)
		}
		if got := flt.Match(huge); got != want {
			t.Errorf("%s on huge numbers: %v, want %v", src, got, want)
		}
	}
}

// The parser refuses or accepts every input, never panics, and what it accepts evaluates
// without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`type == "x"`, `data.a[0]["k"] >= 1.5e3 or not exists(data.b)`, `data.x not in [1, "a", null, true]`, `((`, `"`,
		`data.amount.value in [5e1, 1e-400]`, `type == "a" or type == "b" or type == "c" or type == "d" or type == "e" or type == "f" or type == "g" or type == "h" or type == "i" or type == "j" or type == "k"`} {
		f.Add(s)
	}
	doc, err := filter.Decode([]byte(credit))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		flt, err := filter.Parse(src)
		if err != nil {
			var se *filter.SyntaxError
			if !errors.As(err, &se) || se.Pos < 1 || se.Pos > len([]rune(src))+1 {
				t.Fatalf("Parse(%q): %v", src, err)
			}
			if _, serr := filter.ParseStored(src); serr == nil && !strings.Contains(se.Msg, "out of range") && !strings.Contains(se.Msg, "costs more than") {
				t.Fatalf("ParseStored(%q) accepts what Parse refuses for another reason than a cost limit: %v", src, err)
			}
			return
		}
		// What registration accepts, a stored filter reads the same.
		stored, err := filter.ParseStored(src)
		if err != nil {
			t.Fatalf("ParseStored(%q): %v, yet Parse accepted it", src, err)
		}
		if flt.Match(doc) != stored.Match(doc) {
			t.Fatalf("%q: Parse and ParseStored disagree", src)
		}
	})
}
