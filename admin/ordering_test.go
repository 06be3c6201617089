package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/outbox"
)

// design.md sections 7 and 10: an endpoint's ordering is none, bounded or strict, beside the
// ordered field it keeps; contradictions are refused with 422 naming ordering; the endpoint's
// health shows the hold its newest attempt stated, and a delivery's attempts show where a
// strict order broke.
func TestEndpointOrdering(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	path := "/v1/partners/acme/endpoints"
	create := func(body map[string]any) endpointView {
		t.Helper()
		body["url"], body["event_types"] = "https://hooks.example.com/o", []string{"*"}
		var v createdEndpoint
		e.must(201, operatorToken, "POST", path, body).json(t, &v)
		return v.endpointView
	}
	for _, c := range []struct {
		body     map[string]any
		ordering string
		ordered  bool
	}{
		{map[string]any{}, "none", false},
		{map[string]any{"ordered": true}, "bounded", true},
		{map[string]any{"ordering": "bounded"}, "bounded", true},
		{map[string]any{"ordering": "strict"}, "strict", true},
		{map[string]any{"ordering": "strict", "ordered": true}, "strict", true},
		{map[string]any{"ordering": "none", "ordered": false}, "none", false},
	} {
		if v := create(c.body); v.Ordering != c.ordering || v.Ordered != c.ordered {
			t.Errorf("created with %v: ordering %s, ordered %t; want %s, %t", c.body, v.Ordering, v.Ordered, c.ordering, c.ordered)
		}
	}
	for _, body := range []map[string]any{
		{"url": "https://hooks.example.com/o", "event_types": []string{"*"}, "ordering": "fifo"},
		{"url": "https://hooks.example.com/o", "event_types": []string{"*"}, "ordering": "strict", "ordered": false},
		{"url": "https://hooks.example.com/o", "event_types": []string{"*"}, "ordering": "none", "ordered": true},
	} {
		r := e.must(422, operatorToken, "POST", path, body)
		if !strings.Contains(string(r.Body), `"ordering"`) {
			t.Errorf("refusal of %v does not name ordering: %s", body, r.Body)
		}
	}

	ep := create(map[string]any{"ordering": "strict"})
	patch := func(body map[string]any, ordering string, ordered bool) {
		t.Helper()
		var v endpointView
		e.must(200, operatorToken, "PATCH", path+"/"+ep.ID, body).json(t, &v)
		if v.Ordering != ordering || v.Ordered != ordered {
			t.Fatalf("after PATCH %v: ordering %s, ordered %t; want %s, %t", body, v.Ordering, v.Ordered, ordering, ordered)
		}
	}
	patch(map[string]any{"ordered": true}, "strict", true) // ordered true alone keeps strict order
	patch(map[string]any{"ordered": false}, "none", false) // false ends it with the order
	patch(map[string]any{"ordering": "strict"}, "strict", true)
	patch(map[string]any{"ordering": "bounded"}, "bounded", true)
	patch(map[string]any{"ordering": "strict"}, "strict", true)
	patch(map[string]any{"ordering": nil}, "none", false)
	patch(map[string]any{"ordering": "strict"}, "strict", true)
	e.must(422, operatorToken, "PATCH", path+"/"+ep.ID, map[string]any{"ordering": "strict", "ordered": false})

	// The hold its newest attempt stated, and the age of the held head as of the read.
	var v endpointView
	e.must(200, operatorToken, "GET", path+"/"+ep.ID, nil).json(t, &v)
	if v.Health.Order != nil {
		t.Fatalf("order health before any statement: %+v", v.Health.Order)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	since := now.Add(-20 * time.Minute)
	e.DB.Exec(t, `INSERT INTO endpoint_health (endpoint_id, order_held, order_head_since, order_at) VALUES ($1, 42, $2, $3)`,
		ep.ID, since, now.Add(-time.Minute))
	e.must(200, operatorToken, "GET", path+"/"+ep.ID, nil).json(t, &v)
	o := v.Health.Order
	if o == nil || o.Held != 42 || o.HeadSince == nil || !o.HeadSince.Equal(since) || o.HeadAgeSeconds == nil ||
		*o.HeadAgeSeconds < 20*60 || *o.HeadAgeSeconds > 25*60 {
		t.Fatalf("order health of a held head: %+v", o)
	}
	e.DB.Exec(t, `UPDATE endpoint_health SET order_held = 0, order_head_since = NULL WHERE endpoint_id = $1`, ep.ID)
	e.must(200, operatorToken, "GET", path+"/"+ep.ID, nil).json(t, &v)
	if o := v.Health.Order; o == nil || o.Held != 0 || o.HeadSince != nil || o.HeadAgeSeconds != nil {
		t.Fatalf("order health with no head held: %+v", o)
	}

	// The history shows the attempt that broke the order.
	did := e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 3, []string{outbox.NewEventID()}, []time.Time{now.Add(-time.Hour)})[0]
	e.DB.Exec(t, `UPDATE delivery_attempt SET order_broken = (attempt_no = 3) WHERE delivery_id = $1`, did)
	var d deliveryDetail
	e.must(200, operatorToken, "GET", "/v1/partners/acme/deliveries/"+did, nil).json(t, &d)
	if len(d.Attempts) != 3 || d.Attempts[0].OrderBroken || d.Attempts[1].OrderBroken || !d.Attempts[2].OrderBroken {
		t.Fatalf("attempts of the broken head: %+v", d.Attempts)
	}
}
