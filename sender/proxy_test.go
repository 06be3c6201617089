package sender_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// TestDeliveriesThroughProxy: with a deployment proxy configured, deliveries go through it
// (and an endpoint that names another configured proxy through that one), a destination the
// egress guard refuses is refused with the proxy configured too, before the proxy is asked,
// and an endpoint naming a proxy this sender does not know is not sent at all.
func TestDeliveriesThroughProxy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	def, eu := testenv.NewConnectProxy(t, "egress", "pr0xy-password"), testenv.NewConnectProxy(t, "", "")
	e.endpoint("ep_default", "p1")
	e.endpoint("ep_eu", "p1", withOptions(records.RequestOptions{EgressProxy: "eu"}))
	e.endpoint("ep_unknown", "p1", withOptions(records.RequestOptions{EgressProxy: "mars"}))
	e.endpoint("ep_private", "p1", func(ep *records.Endpoint) { ep.URL = fmt.Sprintf("http://10.0.0.7:%d/ep/ep_private", e.rcv.port) })
	e.endpoint("ep_loopback_v6", "p1", func(ep *records.Endpoint) {
		ep.URL = fmt.Sprintf("http://[::ffff:169.254.169.254]:%d/latest", e.rcv.port)
	})
	cfg := e.config()
	cfg.Egress.Proxy = def.URL
	cfg.Egress.Proxies = map[string]*url.URL{"eu": eu.URL}
	e.start(cfg)

	want := fmt.Sprintf("127.0.0.1:%d", e.rcv.port)
	for i := range 3 {
		if a := e.waitAttemptOf(delivery("p1", "ep_default", "customer.created")); a.Outcome != records.OutcomeDelivered {
			t.Fatalf("delivery %d through the default proxy: %+v", i, a)
		}
	}
	if got := def.Targets(); len(got) == 0 || slices.IndexFunc(got, func(s string) bool { return s != want }) >= 0 {
		t.Fatalf("default proxy tunnels %v, want at least one, each to %s", got, want)
	}
	if a := e.waitAttemptOf(delivery("p1", "ep_eu", "customer.created")); a.Outcome != records.OutcomeDelivered {
		t.Fatalf("through eu: %+v", a)
	}
	if got := eu.Targets(); !slices.Equal(got, []string{want}) {
		t.Fatalf("eu proxy tunnels %v, want [%s]", got, want)
	}
	if got := len(e.rcv.got("ep_default")) + len(e.rcv.got("ep_eu")); got != 4 {
		t.Fatalf("the receiver got %d deliveries, want 4", got)
	}

	tunnels := len(def.Targets()) + len(eu.Targets())
	for _, id := range []string{"ep_private", "ep_loopback_v6"} {
		a := e.waitAttemptOf(delivery("p1", id, "customer.created"))
		if a.ErrorCategory != records.CategoryBlockedDestination {
			t.Fatalf("%s with a proxy: %+v, want blocked_destination", id, a)
		}
	}
	if got := len(def.Targets()) + len(eu.Targets()); got != tunnels {
		t.Fatalf("refused destinations reached a proxy: %v %v", def.Targets(), eu.Targets())
	}

	a := e.waitAttemptOf(delivery("p1", "ep_unknown", "customer.created"))
	if a.ErrorCategory != records.CategoryInternal || !strings.Contains(a.ResponseExcerpt, `"mars"`) {
		t.Fatalf("unknown proxy: %+v", a)
	}
	if got := e.rcv.got("ep_unknown"); len(got) != 0 {
		t.Fatalf("an endpoint naming an unknown proxy was sent %d requests", len(got))
	}
}
