package admin

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// TestReplayBodyIsTheEventRecord runs cdc and checks that the envelope a replay reads from the
// outbox is byte for byte the record cdc published, and that the events-topic fallback (after
// the outbox dropped the row) returns the same bytes: a replay signs and sends what the
// original delivery sent (R15).
func TestReplayBodyIsTheEventRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	ep := e.endpoint("acme")
	e.startCDC()

	// customer.updated as the catalog wants it, with odd bytes in the properties it adds.
	data := `{"customer_id": "cus_1", "changed": ["note"], "version": 2,
		"note": "<b>tags</b> & ampersands, é, \u2028, emoji 🎉", "amount": {"value": "1.50", "currency": "EUR"},
		"n": 1.0e2, "z": null, "list": [3, 2, 1], "a": {"b": {"c": true}}}`
	id := e.appendEvent("acme", "customer.updated", data)

	cl := e.Kafka.Client(t, kgo.ConsumeTopics(e.Names.Events), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var published []byte
	deadline := time.Now().Add(time.Minute)
	for published == nil {
		if time.Now().After(deadline) {
			t.Fatal("cdc did not publish the event within a minute")
		}
		pctx, pcancel := context.WithTimeout(context.Background(), time.Second)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
			if string(r.Key) == id {
				published = r.Value
			}
		})
		pcancel()
	}

	fromOutbox, err := e.api.replays.Envelopes(context.Background(), "acme", []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromOutbox[id].Body, published) {
		t.Fatalf("outbox envelope\n%s\ndiffers from the published record\n%s", fromOutbox[id].Body, published)
	}
	// The outbox retention dropped the row: the events topic answers.
	if _, err := e.DB.Pool.Exec(context.Background(), `DELETE FROM outbox_event WHERE event_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	fromLog, err := e.api.replays.Envelopes(context.Background(), "acme", []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromLog[id].Body, published) || fromLog[id].LSN == 0 {
		t.Fatalf("events-topic envelope %+v differs from the published record", fromLog[id])
	}
	if other, _ := e.api.replays.Envelopes(context.Background(), "globex", []string{id}); len(other) != 0 {
		t.Fatal("another partner found the event")
	}
	r := e.must(200, operatorToken, "GET", "/v1/partners/acme/events/"+id, nil)
	if !bytes.Equal(r.Body, published) {
		t.Fatalf("GET event: %s", r.Body)
	}

	did := e.seedDeliveries("acme", ep.ID, "customer.updated", "failed", 10, []string{id}, []time.Time{time.Now()})[0]
	e.must(202, operatorToken, "POST", "/v1/partners/acme/deliveries/"+did+"/replay", nil)
	// The deliveries topic holds the original delivery, which cdc made with the event (one
	// endpoint receives it), and the replay: both carry the published bytes.
	got := e.deliveries(2, 30*time.Second)
	triggers := map[string]int{}
	for _, d := range got {
		triggers[d.Trigger]++
		if !bytes.Equal(d.Body, published) {
			t.Fatalf("%s record: attempt %d body %s", d.Trigger, d.AttemptNo, d.Body)
		}
		if d.Trigger == records.TriggerReplay && d.AttemptNo != 11 {
			t.Fatalf("replay record: attempt %d, want 11", d.AttemptNo)
		}
	}
	if triggers[records.TriggerInitial] != 1 || triggers[records.TriggerReplay] != 1 {
		t.Fatalf("deliveries by trigger %v, want one initial and one replay", triggers)
	}
}
