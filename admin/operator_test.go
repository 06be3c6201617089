package admin

import (
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// A quota refusal tells the operator (design.md section 8, "Operator events"): one
// operator.quota.refused per partner and quota a minute, however many refusals, naming the
// partner, the quota and the route; a minute later the next refusal is told again.
func TestQuotaRefusalTellsTheOperator(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Limits.TestEventsPerMinute = 1 })
	key := e.partner("acme")
	ep := e.endpoint("acme")
	path := "/v1/partners/acme/endpoints/" + ep.ID + "/test"
	e.must(202, key, "POST", path, nil)
	for range 3 {
		e.must(429, key, "POST", path, nil)
	}
	told := func() int {
		return testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM outbox_event WHERE partner_id = $1 AND type = 'operator.quota.refused'
			AND payload = '{"partner_id":"acme","quota":"test_events_per_minute","limit":1,"usage":1,"route":"POST /v1/partners/{pid}/endpoints/{eid}/test"}'::jsonb`,
			outbox.OperatorPartnerID)
	}
	if n := told(); n != 1 {
		t.Fatalf("%d operator.quota.refused events after 3 refusals, want 1", n)
	}
	e.api.quotaTold.now = func() time.Time { return time.Now().Add(quotaToldEvery) }
	e.must(429, key, "POST", path, nil)
	if n := told(); n != 2 {
		t.Fatalf("%d operator.quota.refused events a minute later, want 2", n)
	}
}
