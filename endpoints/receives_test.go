package endpoints_test

import (
	"testing"

	"github.com/hookstream/hookstream/endpoints"
)

func TestSubscribed(t *testing.T) {
	cases := []struct {
		subs []string
		typ  string
		want bool
	}{
		{[]string{"customer.created"}, "customer.created", true},
		{[]string{"customer.created"}, "customer.deleted", false},
		{[]string{"customer.*"}, "customer.deleted", true},
		{[]string{"customer.*"}, "customer.balance.low", true},
		{[]string{"customer.*"}, "customers.deleted", false},
		{[]string{"customer.*"}, "customer", false},
		{[]string{"*"}, "endpoint.disabled", true},
		{[]string{}, "customer.created", false},
		{nil, "customer.created", false},
		{[]string{"api_key.*", "customer.created"}, "customer.created", true},
	}
	for _, c := range cases {
		if got := endpoints.Subscribed(c.subs, c.typ); got != c.want {
			t.Errorf("Subscribed(%v, %q) = %v, want %v", c.subs, c.typ, got, c.want)
		}
	}
}
