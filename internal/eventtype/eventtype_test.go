package eventtype_test

import (
	"math"
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
