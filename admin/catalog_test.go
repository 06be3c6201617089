package admin

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/topics"
)

var updateEventTypes = flag.Bool("update-event-types", false, "rewrite testdata/event-types.golden.json from GET /v1/event-types")

// R14, R31: GET /v1/event-types publishes the catalog of package eventcatalog byte for byte,
// and those bytes change only on purpose. The golden file was taken from the route before the
// catalog moved out of admin; a deliberate change to the catalog is recorded with
// `go test ./admin -run TestEventTypesRouteIsPinned -update-event-types` and shows in review.
func TestEventTypesRouteIsPinned(t *testing.T) {
	r := call(unitAPI(t), operatorToken, "GET", "/v1/event-types", nil)
	if r.Status != 200 {
		t.Fatalf("GET /v1/event-types: %s", r.Body)
	}
	const golden = "testdata/event-types.golden.json"
	if *updateEventTypes {
		if err := os.WriteFile(golden, r.Body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Body, want) {
		i := 0
		for i < min(len(r.Body), len(want)) && r.Body[i] == want[i] {
			i++
		}
		from := max(i-80, 0)
		t.Fatalf("GET /v1/event-types differs from %s at byte %d (published schemas must not change silently):\n got …%s…\nwant …%s…",
			golden, i, r.Body[from:min(i+80, len(r.Body))], want[from:min(i+80, len(want))])
	}
	var page catalogPage
	if err := json.Unmarshal(r.Body, &page); err != nil {
		t.Fatal(err)
	}
	types := eventcatalog.Types()
	if len(page.Data) != len(types) || page.HasMore || page.NextCursor != "" {
		t.Fatalf("page of %d types (has_more %v), catalog has %d", len(page.Data), page.HasMore, len(types))
	}
	for i, et := range types {
		got := page.Data[i]
		if got.Type != et.Type || got.SchemaVersion != et.SchemaVersion || !jsonEqual(got.Schema, et.Schema) || !jsonEqual(got.Example, et.Example) {
			t.Errorf("entry %d is %s v%d, catalog has %s v%d", i, got.Type, got.SchemaVersion, et.Type, et.SchemaVersion)
		}
	}
	if !jsonEqual(page.Envelope, eventcatalog.EnvelopeSchema()) {
		t.Error("envelope_schema differs from eventcatalog.EnvelopeSchema")
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}

// The test events admin sends are of the catalogued type (R25).
func TestTestEventTypeIsCatalogued(t *testing.T) {
	if testEventType != eventcatalog.TestEventType {
		t.Fatalf("admin sends %q, the catalog publishes %q", testEventType, eventcatalog.TestEventType)
	}
	if et, ok := eventcatalog.Lookup(testEventType); !ok || et.Category != "operational" {
		t.Fatalf("%s is not an operational type of the catalog", testEventType)
	}
}

func TestEventTypesAndLimitsRoutes(t *testing.T) {
	a := unitAPI(t)
	r := call(a, operatorToken, "GET", "/v1/event-types", nil)
	var page catalogPage
	if err := json.Unmarshal(r.Body, &page); err != nil || r.Status != 200 || len(page.Data) != len(eventcatalog.Types()) || len(page.Envelope) == 0 {
		t.Fatalf("event types: %d %v", r.Status, err)
	}
	r = call(a, operatorToken, "GET", "/v1/limits", nil)
	var l limitsView
	if err := json.Unmarshal(r.Body, &l); err != nil || l.FeedRetentionSeconds != 30*86400 || l.EventLogRetentionSeconds != 30*86400 || l.ReplayWindowSeconds == 0 ||
		l.HistoryRetentionSeconds == 0 || l.OutboxRetentionSeconds != 7*86400 || !strings.Contains(string(r.Body), "notes") {
		t.Fatalf("limits: %s", r.Body)
	}
	// The operator without partner_id: the default quotas, no usage, no database read.
	q := l.Quotas
	if l.PartnerID != "" || q.Endpoints.Limit != 100 || q.ReplayJobs.Limit != 2 || q.TestEventsPerMinute.Limit != 10 ||
		q.ReplayDeliveries.Limit != 100000 || q.Endpoints.Usage != nil || q.ReplayJobs.Usage != nil ||
		q.TestEventsPerMinute.Usage != nil || q.ReplayDeliveries.Usage != nil {
		t.Fatalf("operator limits: %s", r.Body)
	}
}

// The event log's retention is stated apart from the feed's and the history's; forever is -1.
func TestLimitsStateTheEventLogRetention(t *testing.T) {
	for _, tc := range []struct {
		retention time.Duration
		want      int64
	}{{topics.RetainForever, -1}, {90 * 24 * time.Hour, 90 * 86400}} {
		cfg := DefaultConfig()
		cfg.EventLogRetention, cfg.HistoryRetention = tc.retention, 48*time.Hour
		var l limitsView
		rec := httptest.NewRecorder()
		if err := (&API{cfg: cfg}).getLimits(rec, httptest.NewRequest("GET", "/v1/limits", nil), caller{operator: true}); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || l.EventLogRetentionSeconds != tc.want ||
			l.FeedRetentionSeconds != 30*86400 || l.HistoryRetentionSeconds != 48*3600 {
			t.Errorf("event log retention %s: %s", tc.retention, rec.Body)
		}
	}
	cfg := DefaultConfig()
	cfg.EventLogRetention = cfg.FeedRetention - time.Hour
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "event log retention") {
		t.Errorf("a log shorter than the feed: %v", err)
	}
}
