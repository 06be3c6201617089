package cdc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
)

// R13, R22: an endpoint's payload filter and retry policy reach the endpoints topic with its
// record; an update of other columns keeps them, even a policy large enough to be stored out of
// line (an unchanged TOAST value carries no data in the WAL); NULL removes them.
func TestEndpointFilterAndRetryPolicyArePublished(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	startStreaming(t, e, e.config(t))
	ctx := context.Background()
	// 100 rules under distinct keys, with delays that do not repeat: several KiB that do not
	// compress below the TOAST threshold.
	rules := map[string]any{}
	for i := 0; i < 100; i++ {
		rules[fmt.Sprintf("type_%03d.x%x.*", i, i*7919)] = map[string]any{"delays_seconds": []float64{float64(i) + 5.125, float64(i*37%101) + 60.5, float64(i*i%997) + 600.25}}
	}
	policy, _ := json.Marshal(map[string]any{"attempts": 7, "event_types": rules})
	const filter = `data.amount.value >= 100 and data.source in ["purchase", "refund"]`
	e.DB.Exec(t, `INSERT INTO partner (id) VALUES ('p1') ON CONFLICT (id) DO NOTHING`)
	e.DB.Exec(t, `INSERT INTO endpoint (id, partner_id, url, event_types, filter, retry_policy) VALUES ('ep_1', 'p1', 'https://example.com/hook', '{*}', $1, $2)`,
		filter, policy)
	var stored int
	if err := e.DB.Pool.QueryRow(ctx, `SELECT pg_column_size(retry_policy) FROM endpoint WHERE id = 'ep_1'`).Scan(&stored); err != nil || stored < 2100 {
		t.Fatalf("the policy takes %d bytes in the row (%v): too small to test the TOAST path", stored, err)
	}
	e.DB.Exec(t, `UPDATE endpoint SET status = 'disabled', disabled_reason = 'paused', version = version + 1 WHERE id = 'ep_1'`)
	e.DB.Exec(t, `UPDATE endpoint SET filter = NULL, retry_policy = NULL, version = version + 1 WHERE id = 'ep_1'`)

	got := consume(t, e, e.Names.Endpoints, 3, 30*time.Second)
	var vals []records.Endpoint
	for _, r := range got.records {
		var v records.Endpoint
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	for i, v := range vals[:2] {
		if v.Filter != filter || v.RetryPolicy == nil || v.RetryPolicy.Attempts == nil || *v.RetryPolicy.Attempts != 7 || len(v.RetryPolicy.EventTypes) != 100 {
			t.Fatalf("record %d: filter %q, policy %+v; want both as inserted", i+1, v.Filter, v.RetryPolicy)
		}
	}
	if vals[1].Status != "disabled" {
		t.Fatalf("second record: status %s", vals[1].Status)
	}
	if v := vals[2]; v.Filter != "" || v.RetryPolicy != nil || strings.Contains(string(got.records[2].Value), "retry_policy") {
		t.Fatalf("after NULL: filter %q, policy %+v", v.Filter, v.RetryPolicy)
	}
}
