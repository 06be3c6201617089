package sender_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
)

// R20, R22: the policy for 4xx answers other than 408, 410, 425 and 429 is the
// endpoint's, per event type, over the deployment's (here: stop). A 400 is retried where the
// endpoint's policy says retry and final elsewhere, and the endpoint's retry policy is what the
// retrier is handed, so its schedule applies.
func TestClientErrorPolicyPerEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var policy retrypolicy.Policy
	if err := json.Unmarshal([]byte(`{"client_errors":"retry","event_types":{"customer.deleted":{"client_errors":"stop"}}}`), &policy); err != nil {
		t.Fatal(err)
	}
	e.endpoint("ep_policy", "p_a", func(ep *records.Endpoint) { ep.RetryPolicy = &policy })
	e.endpoint("ep_plain", "p_a")
	for _, id := range []string{"ep_policy", "ep_plain"} {
		e.rcv.handle(id, func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusBadRequest) })
	}
	cfg := e.config()
	cfg.RetryClientErrors = false // the deployment stops on other 4xx
	e.start(cfg)

	created, deleted := delivery("p_a", "ep_policy", "customer.created"), delivery("p_a", "ep_policy", "customer.deleted")
	plain := delivery("p_a", "ep_plain", "customer.created")
	e.deliver(0, created, deleted, plain)

	if a := e.waitAttempt(created); a.Outcome != records.OutcomeRetrying || a.Status != 400 || a.NextAttemptAt == nil {
		t.Fatalf("400 under the endpoint's retry policy: %+v, want retrying", a)
	}
	for _, d := range []records.Delivery{deleted, plain} {
		if a := e.waitAttempt(d); a.Outcome != records.OutcomeFailed || a.Status != 400 || a.NextAttemptAt != nil {
			t.Fatalf("400 of %s %s: %+v, want failed at once", d.EndpointID, d.EventType, a)
		}
	}
	calls := e.retrier.scheduled("ep_policy")
	if len(calls) != 1 || calls[0].d.DeliveryID != created.DeliveryID || calls[0].policy == nil ||
		retrypolicy.RetryClientErrors(calls[0].policy, "customer.deleted", true) {
		t.Fatalf("Schedule calls %+v, want one for %s with the endpoint's policy", calls, created.DeliveryID)
	}
	if n := len(e.retrier.scheduled("ep_plain")); n != 0 {
		t.Fatalf("the deployment's stop policy scheduled %d retries", n)
	}
}
