package eventtype_test

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/eventtype"
)

func TestValid(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"customer.created", true},
		{"api_key.status_changed", true},
		{"customer.balance.low", true},
		{"a.b", true},
		{"customer", false},
		{"Customer.created", false},
		{"customer.", false},
		{".created", false},
		{"customer..created", false},
		{"customer.1created", false},
		{"customer.*", false},
		{"*", false},
		{"", false},
		{"a." + strings.Repeat("b", eventtype.MaxLen-2), true},
		{"a." + strings.Repeat("b", eventtype.MaxLen-1), false},
	} {
		if got := eventtype.Valid(c.name); got != c.want {
			t.Errorf("Valid(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestValidPattern(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    bool
	}{
		{"*", true},
		{"customer.created", true},
		{"customer.*", true},
		{"customer.balance.*", true},
		{"a.*", true},
		{"customer", false},
		{"customer*", false},
		{"customer.**", false},
		{"*.created", false},
		{".*", false},
		{"**", false},
		{"Customer.*", false},
		{"customer.b*", false},
		{"", false},
		{strings.Repeat("a", 120) + ".*", true},
		{strings.Repeat("a", 121) + ".*", false},
	} {
		if got := eventtype.ValidPattern(c.pattern); got != c.want {
			t.Errorf("ValidPattern(%q) = %v, want %v", c.pattern, got, c.want)
		}
	}
}

func TestMatchesAndSpecificity(t *testing.T) {
	for _, c := range []struct {
		pattern, typ string
		want         int // the specificity; -1: no match
	}{
		{"customer.created", "customer.created", math.MaxInt},
		{"customer.created", "customer.deleted", -1},
		{"*", "endpoint.disabled", 0},
		{"customer.*", "customer.deleted", len("customer.*")},
		{"customer.*", "customer.balance.low", len("customer.*")},
		{"customer.balance.*", "customer.balance.low", len("customer.balance.*")},
		{"customer.*", "customers.deleted", -1},
		{"customer.*", "customer", -1},
		{"customer", "customer.created", -1},
	} {
		if got := eventtype.Specificity(c.pattern, c.typ); got != c.want {
			t.Errorf("Specificity(%q, %q) = %d, want %d", c.pattern, c.typ, got, c.want)
		}
		if got := eventtype.Matches(c.pattern, c.typ); got != (c.want >= 0) {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.pattern, c.typ, got, c.want >= 0)
		}
	}
}

func TestMatchesAny(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		typ      string
		want     bool
	}{
		{[]string{"api_key.*", "customer.created"}, "customer.created", true},
		{[]string{"api_key.*", "customer.created"}, "customer.deleted", false},
		{[]string{}, "customer.created", false},
		{nil, "customer.created", false},
	} {
		if got := eventtype.MatchesAny(c.patterns, c.typ); got != c.want {
			t.Errorf("MatchesAny(%q, %q) = %v, want %v", c.patterns, c.typ, got, c.want)
		}
	}
}

func FuzzValidPattern(f *testing.F) {
	for _, s := range []string{"*", "customer.*", "customer.created", "a.b.*", ".*", "x"} {
		f.Add(s, "customer.created")
	}
	f.Fuzz(func(t *testing.T, pattern, typ string) {
		// A valid pattern that selects a valid type does so by one of the three forms.
		if !eventtype.ValidPattern(pattern) || !eventtype.Valid(typ) || !eventtype.Matches(pattern, typ) {
			return
		}
		pre, wild := eventtype.Wildcard(pattern)
		if pattern != eventtype.All && pattern != typ && !(wild && strings.HasPrefix(typ, pre+".")) {
			t.Fatalf("%q selects %q by no rule", pattern, typ)
		}
	})
}

// The scan agrees with the rule as a regular expression (design.md section 3) on every string
// of up to six characters over an alphabet that holds each class of the rule and its edges.
func TestValidAgreesWithTheExpression(t *testing.T) {
	name := regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)
	prefix := regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)
	alphabet := []string{"a", "z", "0", "9", "_", ".", "A", "-", "*", "é", "`", "{"}
	var walk func(s string, depth int)
	checked := 0
	walk = func(s string, depth int) {
		checked++
		if got, want := eventtype.Valid(s), name.MatchString(s); got != want {
			t.Fatalf("Valid(%q) = %v, the expression says %v", s, got, want)
		}
		if got, want := eventtype.ValidPattern(s+".*"), prefix.MatchString(s) || name.MatchString(s+".*"); got != want {
			t.Fatalf("ValidPattern(%q) = %v, the expression says %v", s+".*", got, want)
		}
		if depth == 6 {
			return
		}
		for _, c := range alphabet {
			walk(s+c, depth+1)
		}
	}
	walk("", 0)
	if checked < 3_000_000 {
		t.Fatalf("checked only %d strings", checked)
	}
}
