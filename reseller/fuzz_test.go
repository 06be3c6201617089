package reseller_test

import (
	"strings"
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

// Request bodies of every write route: whatever the body, the answer is a 2xx or a 4xx with the
// error shape, never a 5xx or a panic.
func FuzzRequestBodies(f *testing.F) {
	fx := newFixture(f, reseller.Config{})
	c := fx.client("pa")
	cus := fx.customer("pa", nil)
	k, err := fx.p.CreateAPIKey(fx.ctx, "pa", cus.ID, "k")
	fx.must(err)
	routes := []string{
		"/v1/customers",
		"/v1/customers/" + cus.ID + "/credits",
		"/v1/customers/" + cus.ID + "/adjustments",
		"/v1/customers/" + cus.ID + "/budgets",
		"/v1/customers/" + cus.ID + "/usage",
		"/v1/customers/" + cus.ID + "/api-keys",
		"/v1/api-keys/" + k.ID + "/status",
	}
	for i, body := range []string{
		`{"name":"x","currency":"USD","low_balance_threshold":"1.5"}`,
		`{"amount":"12.50","source":"refund"}`,
		`{"amount":"-0.000001","reason":"goodwill","budget_id":"bud_x"}`,
		`{"limit":"10","thresholds":[50,100],"period_start":"2026-01-01T00:00:00Z","period_end":"2026-02-01T00:00:00Z"}`,
		`{"cost":"999999999999.999999","period_start":"2026-01-01T00:00:00Z","period_end":"2026-01-01T00:00:00Z","requests":-1}`,
		`{"name":"` + string(rune(0)) + `"}`,
		`{"status":"revoked","reason":"policy"}`,
		`{"amount":"1e400"}`, `{"thresholds":null}`, `{} {}`, `nul`,
	} {
		f.Add(uint8(i), body)
	}
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		path := routes[int(route)%len(routes)]
		status, answer, _ := (&client{t: t, url: c.url, key: c.key}).do("POST", path, body, nil)
		if status >= 500 || (status >= 400 && !strings.Contains(string(answer), `"code"`)) {
			t.Fatalf("POST %s %q: %d %s", path, body, status, answer)
		}
	})
}
