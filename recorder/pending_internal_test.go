package recorder

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// A first request gets a pending row; the same record back from a retry tier (a deferral, whose
// Deferrals count no longer says so when its circuit was open) does not.
func TestPendingOfSkipsRecordsBackFromATier(t *testing.T) {
	d := records.Delivery{V: records.DeliveryVersion, DeliveryID: records.DeliveryID("evt_1", "ep_1"), EventID: "evt_1",
		EndpointID: "ep_1", PartnerID: "p_1", EventType: "customer.created", AttemptNo: 1,
		Trigger: records.TriggerInitial, Body: []byte(`{}`), CreatedAt: time.Now().UTC()}
	rec := &kgo.Record{Value: d.AppendJSON(nil), Timestamp: time.Now()}
	if row, skip := pendingOf(rec, time.Time{}); skip != "" || row.id != d.DeliveryID {
		t.Fatalf("first request: row %+v, skip %q; want its row", row, skip)
	}
	rec.Headers = []kgo.RecordHeader{{Key: records.HeaderReleasedAt, Value: []byte(time.Now().UTC().Format(time.RFC3339Nano))}}
	if row, skip := pendingOf(rec, time.Time{}); skip != "" || row.id != "" {
		t.Fatalf("back from a tier: row %+v, skip %q; want none, silently", row, skip)
	}
}
