package filter_test

import (
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/filter"
)

// deep is an envelope with a path as long as a filter may write.
var deep = `{"type":"x","data":` + strings.Repeat(`{"a":`, filter.MaxSegments-1) + `"1.5"` + strings.Repeat(`}`, filter.MaxSegments-1) + `}`

// BenchmarkEvaluate measures Match, the cost fanout pays per (event, endpoint with a filter),
// for a simple filter, the most expensive shapes MaxCost accepts, and the huge-exponent
// filter of before the limits (read with ParseStored, as a stored one would be). Report:
// go test -run '^$' -bench BenchmarkEvaluate ./internal/filter/
func BenchmarkEvaluate(b *testing.B) {
	or := func(n int, clause string) string {
		return strings.TrimSuffix(strings.Repeat(clause+" or ", n), " or ")
	}
	deepPath := "data" + strings.Repeat(".a", filter.MaxSegments-1)
	for _, c := range []struct {
		name, filter, envelope string
		stored                 bool
	}{
		{"simple", `type == "balance.credited"`, credit, false},
		{"worst/10_equalities", or(10, `type == "balance.debited"`), credit, false},
		{"worst/5_decimal_orderings", or(5, `data.amount.value < 1e-100`), credit, false},
		{"worst/deep_path", `exists(` + deepPath + `) and type == "x"`, deep, false},
		{"worst/in_lists_of_1e-100", attackFilter("1e-100", 4), usage, false},
		{"stored/in_lists_of_1e-400", attackFilter("1e-400", 4), usage, true},
	} {
		parse := filter.Parse
		if c.stored {
			parse = filter.ParseStored
		}
		flt, err := parse(c.filter)
		if err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		doc, err := filter.Decode([]byte(c.envelope))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				flt.Match(doc)
			}
		})
	}
}

// BenchmarkDecode is the once-per-event cost of reading an envelope, its numbers included.
func BenchmarkDecode(b *testing.B) {
	for b.Loop() {
		if _, err := filter.Decode([]byte(usage)); err != nil {
			b.Fatal(err)
		}
	}
}
