package admin

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
	"github.com/hookstream/hookstream/replay"
)

// R13: a filter is checked at registration. A valid one is stored and shown as
// written; one that does not parse is refused with 422 naming the field and the position of the
// fault, and nothing is created or changed; null removes it.
func TestEndpointFilterIsValidatedAtRegistration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("pa")
	path := "/v1/partners/pa/endpoints"
	const good = `data.amount.value >= 100 and data.source in ["purchase", "refund"]`
	var ep endpointView
	e.must(201, operatorToken, "POST", path, map[string]any{
		"url": "https://hooks.example.com/a", "event_types": []string{"balance.*"}, "filter": good,
	}).json(t, &ep)
	if ep.Filter == nil || *ep.Filter != good {
		t.Fatalf("created endpoint's filter %v, want %q", ep.Filter, good)
	}

	for _, c := range []struct{ filter, want string }{
		{`data.amount.value >= "100"`, "filter: position 22: >= compares numbers"},
		{`dta.source == "x"`, `filter: position 1: "dta" is no envelope field`},
		{`data.source == "x" and`, "filter: position 23: "},
		{``, "filter: position 1: "},
		{`data.amount.value in [1, 1e-400]`, "filter: position 26: the number 1e-400 is out of range"},
		{strings.Repeat(`type == "a" or `, 10) + `type == "b"`, "filter: position 151: the filter costs more than 20 to evaluate"},
	} {
		r := e.must(422, operatorToken, "POST", path, map[string]any{
			"url": "https://hooks.example.com/b", "event_types": []string{"*"}, "filter": c.filter,
		})
		if msg := errorMessage(t, r); !strings.Contains(msg, c.want) || !strings.Contains(string(r.Body), `"validation_failed"`) {
			t.Errorf("filter %q refused with %s, want %q", c.filter, r.Body, c.want)
		}
		r = e.must(422, operatorToken, "PATCH", path+"/"+ep.ID, map[string]any{"filter": c.filter})
		if !strings.Contains(errorMessage(t, r), c.want) {
			t.Errorf("PATCH filter %q refused with %s, want %q", c.filter, r.Body, c.want)
		}
	}
	var list list[endpointView]
	e.must(200, operatorToken, "GET", path, nil).json(t, &list)
	if len(list.Data) != 1 || *list.Data[0].Filter != good || list.Data[0].Version != ep.Version {
		t.Fatalf("after the refusals: %+v, want the one endpoint unchanged", list.Data)
	}

	var patched endpointView
	e.must(200, operatorToken, "PATCH", path+"/"+ep.ID, map[string]any{"filter": `exists(data.source)`}).json(t, &patched)
	if patched.Filter == nil || *patched.Filter != `exists(data.source)` {
		t.Fatalf("patched filter %v", patched.Filter)
	}
	e.must(200, operatorToken, "PATCH", path+"/"+ep.ID, map[string]any{"description": "kept"}).json(t, &patched)
	if patched.Filter == nil || *patched.Filter != `exists(data.source)` {
		t.Fatalf("a PATCH without filter changed it: %v", patched.Filter)
	}
	e.must(200, operatorToken, "PATCH", path+"/"+ep.ID, map[string]any{"filter": nil}).json(t, &patched)
	if patched.Filter != nil {
		t.Fatalf("filter %q after PATCH null, want none", *patched.Filter)
	}
	var got map[string]any
	e.must(200, operatorToken, "GET", path+"/"+ep.ID, nil).json(t, &got)
	if v, ok := got["filter"]; !ok || v != nil {
		t.Fatalf("GET shows filter %v (present %v), want null", v, ok)
	}
}

// R22: a retry policy is checked against the operator's bounds, stored and shown as
// given, replaced by PATCH and removed by null; GET /v1/limits states the deployment's policy
// and the bounds.
func TestEndpointRetryPolicyWithinBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) {
		c.Retry.Bounds = retrypolicy.Bounds{MinDelay: time.Second, MaxDelay: time.Hour, MaxAttempts: 12}
		c.Retry.Schedule = []time.Duration{5 * time.Second, time.Minute}
		c.Retry.RetryClientErrors = false
		c.AutomaticAttempts = 12
	})
	e.partner("pa")
	path := "/v1/partners/pa/endpoints"
	policy := map[string]any{
		"delays_seconds": []float64{10, 60},
		"client_errors":  "stop",
		"event_types": map[string]any{
			"balance.*":        map[string]any{"delays_seconds": []float64{1, 30, 3600}, "attempts": 12},
			"usage.finalized":  map[string]any{"attempts": 1},
			"customer.created": map[string]any{"client_errors": "retry"},
		},
	}
	var ep endpointView
	e.must(201, operatorToken, "POST", path, map[string]any{
		"url": "https://hooks.example.com/a", "event_types": []string{"*"}, "retry_policy": policy,
	}).json(t, &ep)
	var want retrypolicy.Policy
	b, _ := json.Marshal(policy)
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if ep.RetryPolicy == nil || !reflect.DeepEqual(*ep.RetryPolicy, want) {
		t.Fatalf("created policy %+v, want %s", ep.RetryPolicy, b)
	}

	for _, c := range []struct {
		policy any
		status int
		want   []string
	}{
		{map[string]any{"delays_seconds": []float64{0.5}}, 422, []string{"retry_policy.delays_seconds[0]: must be from 1 to 3600 seconds"}},
		{map[string]any{"attempts": 13}, 422, []string{"retry_policy.attempts: must be from 1 to 12"}},
		{map[string]any{"client_errors": "ignore"}, 422, []string{"retry_policy.client_errors"}},
		{map[string]any{"event_types": map[string]any{"not a type": map[string]any{"attempts": 2}, "usage.*": map[string]any{"delays_seconds": []float64{7200}}}},
			422, []string{`retry_policy.event_types["not a type"]`, `retry_policy.event_types["usage.*"].delays_seconds[0]`}},
		{map[string]any{"delays": []float64{1}}, 400, []string{`unknown field "delays"`}},
		{map[string]any{"attempts": "3"}, 400, []string{"attempts"}},
	} {
		for _, method := range []string{"POST", "PATCH"} {
			p, body := path, map[string]any{"retry_policy": c.policy}
			if method == "POST" {
				body["url"], body["event_types"] = "https://hooks.example.com/b", []string{"*"}
			} else {
				p += "/" + ep.ID
			}
			r := e.must(c.status, operatorToken, method, p, body)
			for _, w := range c.want {
				if !strings.Contains(errorMessage(t, r), w) {
					t.Errorf("%s policy %v: %s, want %q", method, c.policy, r.Body, w)
				}
			}
		}
	}

	var patched endpointView
	e.must(200, operatorToken, "PATCH", path+"/"+ep.ID, map[string]any{"retry_policy": map[string]any{"attempts": 3}}).json(t, &patched)
	if got, _ := json.Marshal(patched.RetryPolicy); string(got) != `{"attempts":3}` {
		t.Fatalf("patched policy %s, want it replaced whole", got)
	}
	e.must(200, operatorToken, "PATCH", path+"/"+ep.ID, map[string]any{"retry_policy": nil}).json(t, &patched)
	if patched.RetryPolicy != nil {
		t.Fatalf("policy %+v after PATCH null, want none", patched.RetryPolicy)
	}

	// Read as clients do, through the published (OpenAPI) shape, so that a renamed field fails.
	var limits adminclient.Limits
	e.must(200, operatorToken, "GET", "/v1/limits", nil).json(t, &limits)
	r := limits.Retry
	if limits.AutomaticAttempts == nil || *limits.AutomaticAttempts != 12 || len(r.ScheduleSeconds) != 2 || r.ScheduleSeconds[1] != 60 || r.Attempts != 3 || r.Jitter != 0.2 ||
		r.ClientErrors != "stop" || len(r.Tiers) != 8 || r.Bounds.MinDelaySeconds != 1 || r.Bounds.MaxDelaySeconds != 3600 || r.Bounds.MaxAttempts != 12 {
		t.Fatalf("limits state %+v", limits)
	}
}

func errorMessage(t *testing.T, r response) string {
	t.Helper()
	var body struct {
		Detail string `json:"detail"`
	}
	r.json(t, &body)
	return body.Detail
}

// A replay from the event log sends an endpoint only the events its filter lets through, as
// fanout would have: the log holds every event of the partner, the endpoint asked for some.
func TestLogReplayAppliesTheFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pid := partnersInPartition("filt", 1, int32(e.Kafka.TopicConfig().Partitions))[0]
	key := e.partner(pid)
	var ep endpointView
	e.must(201, key, "POST", "/v1/partners/"+pid+"/endpoints", map[string]any{
		"url": "https://hooks.example.com/f", "event_types": []string{"customer.*"}, "filter": `data.n >= 10 and data.n < 20`,
	}).json(t, &ep)
	parts := e.Kafka.TopicConfig().Partitions
	t0 := time.Now().UTC()
	var recs []*kgo.Record
	want := map[string]bool{}
	for i := 0; i < 30; i++ {
		env := testEnvelope(pid, "customer.updated", i)
		recs = append(recs, envelopeRecord(e.Names.Events, parts, env, records.LSN(2000+i), time.Now()))
		if i >= 10 && i < 20 {
			want[env.EventID] = true
		}
	}
	e.produceEvents(recs)
	run(t, e.api)
	var job jobAccepted
	e.must(202, key, "POST", "/v1/partners/"+pid+"/endpoints/"+ep.ID+"/replay", map[string]string{
		"since": t0.Add(-time.Second).Format(time.RFC3339Nano), "source": "log",
	}).json(t, &job)
	if v := e.waitJob(pid, job.JobID, time.Minute, nil); v.State != replay.JobSucceeded || v.Total != 10 || v.Done != 10 {
		t.Fatalf("log replay job: %+v, want the 10 events the filter lets through", v)
	}
	got := e.deliveries(10, time.Minute)
	for _, d := range got {
		if !want[d.EventID] {
			t.Errorf("replayed %s, which the filter refuses", d.EventID)
		}
	}
	if len(got) != 10 {
		t.Fatalf("%d deliveries, want 10", len(got))
	}
}
