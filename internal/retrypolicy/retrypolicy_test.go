package retrypolicy_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/retrypolicy"
)

func policy(t *testing.T, s string) *retrypolicy.Policy {
	t.Helper()
	var p retrypolicy.Policy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func TestDelaysResolution(t *testing.T) {
	base := []time.Duration{5 * time.Second, time.Minute, 10 * time.Minute}
	b := retrypolicy.Bounds{MinDelay: time.Second, MaxDelay: time.Hour, MaxAttempts: 6}
	p := `{"delays_seconds":[10,20],
		"event_types":{
			"balance.*":{"delays_seconds":[30,60,120]},
			"balance.low":{"attempts":2},
			"usage.*":{"attempts":5},
			"*":{"client_errors":"stop"},
			"api_key.created":{"delays_seconds":[1,1,1,1,1,1,1,1]},
			"api_key.status_changed":{"delays_seconds":[0.001,99999]}}}`
	cases := []struct {
		policy, eventType string
		want              string
	}{
		{``, "customer.created", "[5s 1m0s 10m0s]"},                                              // no policy: the deployment's
		{`{"event_types":{"balance.*":{"attempts":1}}}`, "customer.created", "[5s 1m0s 10m0s]"},  // no rule covers it
		{`{"event_types":{"balance.*":{"attempts":1}}}`, "balance.credited", "[]"},               // one attempt: no retry
		{`{"attempts":5}`, "customer.created", "[5s 1m0s 10m0s 10m0s]"},                          // extended by the last delay
		{`{"attempts":2}`, "customer.created", "[5s]"},                                           // cut
		{p, "customer.created", "[10s 20s]"},                                                     // the endpoint's own ("*" sets no delays)
		{p, "balance.credited", "[30s 1m0s 2m0s]"},                                               // the wildcard
		{`{"attempts":2,"event_types":{"a.*":{"delays_seconds":[1,2,3]}}}`, "a.b", "[1s 2s 3s]"}, // the type's schedule brings its count
		{`{"delays_seconds":[1,2,3],"event_types":{"a.*":{"attempts":2}}}`, "a.b", "[1s]"},       // attempts alone cut the inherited schedule
		{p, "balance.low", "[10s]"},                                                              // the exact rule alone; its delays from the endpoint
		{p, "usage.reported", "[10s 20s 20s 20s]"},                                               // attempts over the endpoint's delays
		{p, "api_key.created", "[1s 1s 1s 1s 1s]"},                                               // cut to the operator's 6 attempts
		{p, "api_key.status_changed", "[1s 1h0m0s]"},                                             // clamped into the bounds
	}
	for _, c := range cases {
		var pol *retrypolicy.Policy
		if c.policy != "" {
			pol = policy(t, c.policy)
		}
		got := fmt.Sprint(retrypolicy.Delays(pol, c.eventType, base, b))
		if got != c.want {
			t.Errorf("%s for %s: %s, want %s", c.policy, c.eventType, got, c.want)
		}
	}
}

func TestRetryClientErrors(t *testing.T) {
	p := policy(t, `{"client_errors":"stop","event_types":{"balance.*":{"client_errors":"retry"},"balance.low":{"attempts":3}}}`)
	for _, c := range []struct {
		p    *retrypolicy.Policy
		typ  string
		def  bool
		want bool
	}{
		{nil, "x.y", true, true},
		{nil, "x.y", false, false},
		{p, "customer.created", true, false},
		{p, "balance.credited", false, true},
		{p, "balance.low", true, false}, // the exact rule alone applies, and sets no client_errors: the endpoint's
	} {
		if got := retrypolicy.RetryClientErrors(c.p, c.typ, c.def); got != c.want {
			t.Errorf("RetryClientErrors(%v, %s, %v) = %v", c.p != nil, c.typ, c.def, got)
		}
	}
}

func TestCheck(t *testing.T) {
	b := retrypolicy.Bounds{MinDelay: time.Second, MaxDelay: time.Hour, MaxAttempts: 5}
	cases := []struct {
		policy string
		want   []string // fields refused, in order
	}{
		{`{}`, nil},
		{`{"delays_seconds":[1,3600],"attempts":5,"client_errors":"stop","event_types":{"a.*":{"attempts":1},"*":{"client_errors":"retry"}}}`, nil},
		{`{"delays_seconds":[]}`, []string{"delays_seconds"}},
		{`{"delays_seconds":[0.5,3601]}`, []string{"delays_seconds[0]", "delays_seconds[1]"}},
		{`{"delays_seconds":[1,1,1,1,1]}`, []string{"delays_seconds"}},
		{`{"attempts":0}`, []string{"attempts"}},
		{`{"attempts":6}`, []string{"attempts"}},
		{`{"client_errors":"ignore"}`, []string{"client_errors"}},
		{`{"event_types":{"nodots":{"attempts":2}}}`, []string{`event_types["nodots"]`}},
		{`{"event_types":{"a.b":{}}}`, []string{`event_types["a.b"]`}},
		{`{"event_types":{"a.b":{"delays_seconds":[9999]},"a.c":{"attempts":-1}}}`, []string{`event_types["a.b"].delays_seconds[0]`, `event_types["a.c"].attempts`}},
	}
	for _, c := range cases {
		var got []string
		for _, e := range policy(t, c.policy).Check(b) {
			got = append(got, e.Field)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Check(%s) refused %v, want %v", c.policy, got, c.want)
		}
	}
}
