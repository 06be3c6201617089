package admin

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// TestDeliveryHistory pages through an endpoint's history with filters and opaque cursors.
func TestDeliveryHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	otherKey := e.partner("globex")
	ep := e.endpoint("acme")
	other := e.endpoint("acme")
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	seed := func(typ, state string, n int, offset time.Duration, eid string) []string {
		ids := make([]string, n)
		created := make([]time.Time, n)
		for i := range ids {
			ids[i] = outbox.NewEventID()
			created[i] = base.Add(offset + time.Duration(i)*time.Second)
		}
		return e.seedDeliveries("acme", eid, typ, state, 2, ids, created)
	}
	failed := seed("customer.created", "failed", 150, 0, ep.ID)
	seed("api_key.created", "succeeded", 60, 10*time.Minute, ep.ID)
	seed("customer.created", "failed", 30, 0, other.ID)

	history := func(token, query string) list[deliveryView] {
		var l list[deliveryView]
		e.must(200, token, "GET", "/v1/partners/acme/endpoints/"+ep.ID+"/deliveries?"+query, nil).json(t, &l)
		return l
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		q := url.Values{"state": {"failed"}, "limit": {"70"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		l := history(key, q.Encode())
		for _, d := range l.Data {
			if d.State != "failed" || d.EndpointID != ep.ID {
				t.Fatalf("filtered page holds %+v", d)
			}
			got = append(got, d.DeliveryID)
		}
		if !l.HasMore {
			if l.NextCursor != "" {
				t.Errorf("last page has a cursor")
			}
			break
		}
		cursor = l.NextCursor
		if pages > 5 {
			t.Fatal("history does not end")
		}
	}
	if len(got) != len(failed) {
		t.Fatalf("%d failed deliveries listed, want %d", len(got), len(failed))
	}
	for i := range got { // newest first
		if got[i] != failed[len(failed)-1-i] {
			t.Fatalf("delivery %d is %s, want %s", i, got[i], failed[len(failed)-1-i])
		}
	}
	if l := history(key, "type=api_key.*&limit=1000"); len(l.Data) != 60 {
		t.Errorf("type wildcard: %d deliveries, want 60", len(l.Data))
	}
	if l := history(key, "type=customer.created,api_key.created&limit=1000"); len(l.Data) != 210 {
		t.Errorf("two types: %d deliveries, want 210", len(l.Data))
	}
	window := url.Values{"since": {base.Add(10 * time.Second).Format(time.RFC3339Nano)}, "until": {base.Add(20 * time.Second).Format(time.RFC3339Nano)}}
	if l := history(key, window.Encode()); len(l.Data) != 10 {
		t.Errorf("time window: %d deliveries, want 10", len(l.Data))
	}
	for _, bad := range []string{"state=lost", "since=yesterday", "limit=0", "limit=1001", "cursor=xyz", "type=Not.A.Type"} {
		e.must(400, key, "GET", "/v1/partners/acme/endpoints/"+ep.ID+"/deliveries?"+bad, nil)
	}
	e.must(404, otherKey, "GET", "/v1/partners/acme/endpoints/"+ep.ID+"/deliveries", nil)
	e.must(404, otherKey, "GET", "/v1/partners/acme/deliveries/"+failed[0], nil)
	e.must(404, key, "GET", "/v1/partners/acme/deliveries/dlv_nope", nil)

	var detail deliveryDetail
	e.must(200, key, "GET", "/v1/partners/acme/deliveries/"+failed[0], nil).json(t, &detail)
	if len(detail.Attempts) != 2 || detail.Attempts[0].AttemptNo != 1 || detail.Attempts[0].Trigger != "initial" || detail.Attempts[1].Trigger != "retry" {
		t.Errorf("delivery detail: %+v", detail)
	}

	// Endpoint lists page the same way.
	for i := 0; i < 5; i++ {
		e.endpoint("acme")
	}
	var eps list[endpointView]
	e.must(200, key, "GET", "/v1/partners/acme/endpoints?limit=4", nil).json(t, &eps)
	if len(eps.Data) != 4 || !eps.HasMore {
		t.Fatalf("endpoint page: %d, more %v", len(eps.Data), eps.HasMore)
	}
	var rest list[endpointView]
	e.must(200, key, "GET", "/v1/partners/acme/endpoints?limit=10&cursor="+url.QueryEscape(eps.NextCursor), nil).json(t, &rest)
	if len(rest.Data) != 3 || rest.HasMore || rest.Data[0].ID == eps.Data[3].ID {
		t.Fatalf("second endpoint page: %d, more %v", len(rest.Data), rest.HasMore)
	}
	var others list[endpointView]
	e.must(200, otherKey, "GET", "/v1/partners/globex/endpoints", nil).json(t, &others)
	if len(others.Data) != 0 {
		t.Errorf("globex sees %d endpoints", len(others.Data))
	}
}

// Query strings are read exactly or refused: a cursor that is not valid URL encoding answers 400
// instead of reading as no cursor (the feed from the start of the log), and the earliest valid
// RFC 3339 time is a valid bound.
func TestQueryStringsAreReadExactly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	ep := e.endpoint("acme")
	r := e.must(400, key, "GET", "/v1/partners/acme/events?after=%ZZ", nil)
	if !strings.Contains(r.String(), "URL encoding") {
		t.Fatalf("bad escape: %s", r)
	}
	e.must(400, key, "GET", "/v1/partners/acme/endpoints/"+ep.ID+"/deliveries?since=%G0", nil)
	e.must(200, key, "GET", "/v1/partners/acme/endpoints/"+ep.ID+"/deliveries?since=0001-01-01T00:00:00Z", nil)
	e.must(400, key, "GET", "/v1/partners/acme/endpoints/"+ep.ID+"/deliveries?since=0000-01-01T00:00:00Z", nil)
}

// An attempt's latency is answered in microseconds beside whole milliseconds (latency_us,
// last_latency_us), so an attempt under a millisecond is not 0; history recorded before the
// microseconds were kept answers null for them, never a figure it does not have.
func TestHistoryLatencyInMicroseconds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	ep := e.endpoint("acme")
	e.startRecorder()

	evt := outbox.NewEventID()
	did := records.DeliveryID(evt, ep.ID)
	value, err := json.Marshal(records.Attempt{V: records.AttemptVersion, DeliveryID: did, EventID: evt, EndpointID: ep.ID,
		PartnerID: "acme", EventType: "customer.created", AttemptNo: 1, Trigger: records.TriggerInitial,
		StartedAt: time.Now().UTC(), Status: 204, LatencyMS: 0, LatencyUS: 850, Outcome: records.OutcomeDelivered})
	if err != nil {
		t.Fatal(err)
	}
	rec := &kgo.Record{Topic: e.Names.Attempts, Key: []byte(did), Value: value}
	if err := e.Kafka.Client(t).ProduceSync(context.Background(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the recorder to record the attempt", func() bool {
		return testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM delivery_attempt WHERE delivery_id = $1`, did) > 0
	})
	// Before migration 0022: milliseconds only.
	old := e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 1, []string{outbox.NewEventID()}, []time.Time{time.Now()})[0]

	// The answers as JSON, so that the names and the nulls are what a client reads.
	type latencies struct {
		MS *int64 `json:"latency_ms"`
		US *int64 `json:"latency_us"`
	}
	var detail struct {
		LastMS   *int64      `json:"last_latency_ms"`
		LastUS   *int64      `json:"last_latency_us"`
		Attempts []latencies `json:"attempts"`
	}
	show := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return strconv.FormatInt(*p, 10)
	}
	e.must(200, key, "GET", "/v1/partners/acme/deliveries/"+did, nil).json(t, &detail)
	if show(detail.LastMS) != "0" || show(detail.LastUS) != "850" || len(detail.Attempts) != 1 ||
		show(detail.Attempts[0].MS) != "0" || show(detail.Attempts[0].US) != "850" {
		t.Errorf("delivery under a millisecond: last %s ms, %s µs, attempts %+v", show(detail.LastMS), show(detail.LastUS), detail.Attempts)
	}
	r := e.must(200, key, "GET", "/v1/partners/acme/deliveries/"+old, nil)
	r.json(t, &detail)
	if !strings.Contains(string(r.Body), `"latency_us":null`) || len(detail.Attempts) != 1 ||
		show(detail.Attempts[0].MS) != "12" || show(detail.Attempts[0].US) != "null" {
		t.Errorf("attempt recorded in milliseconds only: %s", r.Body)
	}
	var page struct {
		Data []struct {
			ID     string `json:"delivery_id"`
			LastUS *int64 `json:"last_latency_us"`
		} `json:"data"`
	}
	r = e.must(200, key, "GET", "/v1/partners/acme/endpoints/"+ep.ID+"/deliveries", nil)
	r.json(t, &page)
	if !strings.Contains(string(r.Body), `"last_latency_us":850`) || len(page.Data) != 2 {
		t.Errorf("the endpoint's history: %s", r.Body)
	}
	r = e.must(200, key, "GET", "/v1/partners/acme/deliveries?event_id="+evt, nil)
	if !strings.Contains(string(r.Body), `"last_latency_us":850`) {
		t.Errorf("the partner's delivery search: %s", r.Body)
	}
}
