package recorder_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/recorder"
)

// delivery is a first deliveries record of (event, endpoint) as fanout emits it.
func delivery(event, endpoint, partner string, created time.Time) records.Delivery {
	return records.Delivery{V: records.DeliveryVersion, DeliveryID: records.DeliveryID(event, endpoint), EventID: event,
		EndpointID: endpoint, PartnerID: partner, EventType: "customer.created", AttemptNo: 1,
		Trigger: records.TriggerInitial, Body: []byte(`{}`), CreatedAt: created}
}

func produceDeliveries(t *testing.T, e *env, values ...[]byte) {
	t.Helper()
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: e.Names.Deliveries, Key: []byte("k"), Value: v})
	}
	if err := e.Kafka.Client(t).ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// A delivery is in the history from the moment fanout emits it (design.md section 4): one that is not
// attempted within the pending delay is listed as pending, with fanout's time; one attempted
// already keeps its state; a delivery naming another partner's endpoint, a retry's record and
// unreadable, forged or oversized records get no row, and the partition goes on. The first attempt then takes the
// pending row over.
func TestRecorderWritesPendingRows(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1'), ('p2');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example'), ('ep2', 'p1', 'https://y.example'),
			('ep3', 'p2', 'https://z.example')`)
	reg := prometheus.NewRegistry()
	cfg := recorder.DefaultConfig()
	cfg.Base = e.Kafka.Base(t, reg)
	cfg.PendingDelay = 300 * time.Millisecond
	r, err := recorder.New(cfg, e.DB.Pool)
	if err != nil {
		t.Fatal(err)
	}
	background(t, "recorder", r.Run)

	waiting, done, foreign, retried := outbox.NewEventID(), outbox.NewEventID(), outbox.NewEventID(), outbox.NewEventID()
	produceAttempts(t, e, attempt(done, "ep2", "p1", 1, records.OutcomeDelivered, 200, ""))
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 1, time.Minute)

	created := time.Now().Add(-time.Second).UTC().Truncate(time.Microsecond)
	retry := delivery(retried, "ep1", "p1", created)
	retry.AttemptNo, retry.Trigger = 2, records.TriggerRetry
	nul := delivery(outbox.NewEventID(), "ep1", "p1", created)
	nul.EventType = "customer.\x00created"
	forged := delivery(outbox.NewEventID(), "ep1", "p1", created)
	forged.DeliveryID = "dlv_forged"
	badUTF8 := delivery(outbox.NewEventID(), "ep1", "p1@@", created) // the bytes of "@@" become 0xff below
	huge := delivery(outbox.NewEventID(), strings.Repeat("e", 300), "p1", created)
	produceDeliveries(t, e,
		[]byte("not json"), nul.AppendJSON(nil), forged.AppendJSON(nil), bytes.Replace(badUTF8.AppendJSON(nil), []byte("@@"), []byte{0xff}, 1), huge.AppendJSON(nil),
		delivery(foreign, "ep3", "p1", created).AppendJSON(nil), // ep3 is p2's
		retry.AppendJSON(nil),
		delivery(done, "ep2", "p1", created).AppendJSON(nil),
		delivery(waiting, "ep1", "p1", created).AppendJSON(nil))
	testenv.WaitValue(t, reg, "hookstream_recorder_pending_rows_total", 1, time.Minute)
	if got := testenv.Counter(t, reg, "hookstream_recorder_pending_skipped_total"); got != 4 {
		t.Errorf("%v records skipped, want 4 (not JSON, NUL in the type, forged id, oversized id)", got)
	}

	var state string
	var count int
	var at time.Time
	read := func(event, endpoint string) {
		t.Helper()
		if err := e.DB.Pool.QueryRow(context.Background(), `SELECT state, attempt_count, created_at FROM delivery WHERE delivery_id = $1`,
			records.DeliveryID(event, endpoint)).Scan(&state, &count, &at); err != nil {
			t.Fatalf("delivery of %s to %s: %v", event, endpoint, err)
		}
	}
	read(waiting, "ep1")
	if state != "pending" || count != 0 || !at.Equal(created) {
		t.Fatalf("waiting delivery: %s, %d attempts, created %s; want pending, 0, %s", state, count, at, created)
	}
	read(done, "ep2")
	if state != "succeeded" || count != 1 {
		t.Fatalf("delivered one: %s, %d attempts; want succeeded, 1", state, count)
	}
	for _, id := range []string{records.DeliveryID(foreign, "ep3"), records.DeliveryID(retried, "ep1"), forged.DeliveryID, nul.DeliveryID, badUTF8.DeliveryID, huge.DeliveryID} {
		if n := testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM delivery WHERE delivery_id = $1`, id); n != 0 {
			t.Errorf("delivery %s has a row; want none", id)
		}
	}

	produceAttempts(t, e, attempt(waiting, "ep1", "p1", 1, records.OutcomeRetrying, 503, records.CategoryHTTPStatus))
	testenv.WaitValue(t, reg, "hookstream_recorder_attempts_recorded_total", 2, time.Minute)
	read(waiting, "ep1")
	if state != "retrying" || count != 1 {
		t.Fatalf("after its first attempt: %s, %d attempts; want retrying, 1", state, count)
	}
}
