package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/replay"
)

// TestReplaySingle replays one delivery: 202 with the next attempt number, the same event id
// and the exact envelope bytes on the deliveries topic, keyed by the endpoint.
func TestReplaySingle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	otherKey := e.partner("globex")
	ep := e.endpoint("acme", "customer.*")
	evID := e.appendEvent("acme", "customer.created", `{"customer_id":"cus_1","note":"<b>&amp;</b> é","amount":{"value":"1.50","currency":"EUR"}}`)
	retryingEv := e.appendEvent("acme", "customer.updated", `{"customer_id":"cus_2"}`)
	now := time.Now()
	did := e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 3, []string{evID}, []time.Time{now})[0]
	retryingDid := e.seedDeliveries("acme", ep.ID, "customer.updated", "retrying", 2, []string{retryingEv}, []time.Time{now})[0]

	replay := func(token, did string) (replayAccepted, response) {
		r := e.do(token, "POST", "/v1/partners/acme/deliveries/"+did+"/replay", nil)
		var out replayAccepted
		if r.Status == 202 {
			r.json(t, &out)
		}
		return out, r
	}
	first, r := replay(key, did)
	if r.Status != 202 || first.AttemptNo != 4 || first.EventID != evID || first.DeliveryID != did || first.Trigger != "replay" {
		t.Fatalf("first replay: %s", r)
	}
	// The first replay is not recorded yet, so it may still be in flight: the next one is
	// numbered above the automatic schedule.
	second, _ := replay(operatorToken, did)
	if second.AttemptNo != e.cfg.AutomaticAttempts+1 {
		t.Errorf("second replay attempt %d, want %d", second.AttemptNo, e.cfg.AutomaticAttempts+1)
	}
	inFlight, _ := replay(key, retryingDid)
	if inFlight.AttemptNo != e.cfg.AutomaticAttempts+1 {
		t.Errorf("replay of a retrying delivery: attempt %d, want %d", inFlight.AttemptNo, e.cfg.AutomaticAttempts+1)
	}
	if _, r := replay(otherKey, did); r.Status != 404 {
		t.Errorf("replay with another partner's key: %s", r)
	}

	got := e.deliveries(3, 30*time.Second)
	if len(got) != 3 {
		t.Fatalf("%d delivery records, want 3", len(got))
	}
	stored, err := e.api.replays.Envelopes(context.Background(), "acme", []string{evID})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		did, ev string
		no      int
	}{{did, evID, 4}, {did, evID, e.cfg.AutomaticAttempts + 1}, {retryingDid, retryingEv, e.cfg.AutomaticAttempts + 1}} {
		d := got[i]
		if d.DeliveryID != want.did || d.EventID != want.ev || d.AttemptNo != want.no || d.Trigger != records.TriggerReplay ||
			d.EndpointID != ep.ID || d.PartnerID != "acme" || d.V != records.DeliveryVersion {
			t.Errorf("record %d: %+v, want delivery %s event %s attempt %d", i, d, want.did, want.ev, want.no)
		}
	}
	if !bytes.Equal(got[0].Body, stored[evID].Body) {
		t.Errorf("replay body %s\nwant the envelope %s", got[0].Body, stored[evID].Body)
	}
	var env outbox.Envelope
	if err := json.Unmarshal(got[0].Body, &env); err != nil || env.EventID != evID || env.Type != "customer.created" {
		t.Errorf("replay body is not the event's envelope: %v %+v", err, env)
	}

	// The attempt history after the recorder caught up: a final replay makes the next one
	// plain "next number" again.
	ctx := context.Background()
	second.AttemptNo = e.cfg.AutomaticAttempts + 1
	if _, err := e.DB.Pool.Exec(ctx, `INSERT INTO delivery_attempt (delivery_id, attempt_no, trigger, started_at, status)
		VALUES ($1, 4, 'replay', now(), 200), ($1, $2, 'replay', now(), 200)`, did, second.AttemptNo); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DB.Pool.Exec(ctx, `UPDATE delivery SET state = 'succeeded', attempt_count = $2 WHERE delivery_id = $1`, did, second.AttemptNo); err != nil {
		t.Fatal(err)
	}
	if third, r := replay(key, did); third.AttemptNo != second.AttemptNo+1 {
		t.Errorf("replay after the replays were recorded: %s, want attempt %d", r, second.AttemptNo+1)
	}

	// Refusals.
	e.must(200, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/disable", map[string]string{"reason": "down"})
	if _, r := replay(key, did); r.Status != 409 {
		t.Errorf("replay to a disabled endpoint: %s", r)
	}
	e.must(200, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/enable", nil)
	gone := outbox.NewEventID()
	goneDid := e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 10, []string{gone}, []time.Time{now})[0]
	if _, r := replay(key, goneDid); r.Status != 410 {
		t.Errorf("replay of an event retained nowhere: %s", r)
	}
	if _, r := replay(key, "dlv_aaaaaaaaaaaaaaaaaaaaaaaaaa"); r.Status != 404 {
		t.Errorf("replay of an unknown delivery: %s", r)
	}
	var detail deliveryDetail
	e.must(200, key, "GET", "/v1/partners/acme/deliveries/"+did, nil).json(t, &detail)
	if len(detail.Attempts) != 5 || detail.Attempts[4].AttemptNo != e.cfg.AutomaticAttempts+1 || detail.EventID != evID {
		t.Errorf("delivery detail: %+v", detail)
	}
}

// TestReplayFromLogAfterReenable disables an endpoint, lets events pass while it is disabled,
// enables it and replays from the log: exactly the events it missed are delivered, with their
// original bytes, and none of another partner's or of unsubscribed types.
func TestReplayFromLogAfterReenable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := partnersInPartition("part", 2, int32(e.Kafka.TopicConfig().Partitions))
	pid, noise := ids[0], ids[1]
	key := e.partner(pid)
	e.partner(noise)
	ep := e.endpoint(pid, "customer.*")
	parts := e.Kafka.TopicConfig().Partitions
	t0 := time.Now().UTC()
	lsn := records.LSN(1000)
	rec := func(env outbox.Envelope) *kgo.Record {
		lsn++
		return envelopeRecord(e.Names.Events, parts, env, lsn, time.Now())
	}

	// Delivered before the endpoint was disabled: history says succeeded.
	var before []*kgo.Record
	var beforeIDs []string
	for i := 0; i < 20; i++ {
		env := testEnvelope(pid, "customer.created", i)
		before = append(before, rec(env))
		beforeIDs = append(beforeIDs, env.EventID)
	}
	e.produceEvents(before)
	created := make([]time.Time, len(beforeIDs))
	for i := range created {
		created[i] = time.Now()
	}
	e.seedDeliveries(pid, ep.ID, "customer.created", "succeeded", 1, beforeIDs, created)

	var disabled endpointView
	e.must(200, key, "POST", "/v1/partners/"+pid+"/endpoints/"+ep.ID+"/disable", map[string]string{"reason": "receiver migration"}).json(t, &disabled)
	if disabled.Status != "disabled" || disabled.DisabledReason == nil || *disabled.DisabledReason != "receiver migration" {
		t.Fatalf("disable: %+v", disabled)
	}
	var outboxType, outboxData string
	if err := e.DB.Pool.QueryRow(context.Background(), `SELECT type, payload::text FROM outbox_event WHERE partner_id = $1 AND subject_id = $2`,
		pid, ep.ID).Scan(&outboxType, &outboxData); err != nil || outboxType != "endpoint.disabled" {
		t.Fatalf("endpoint.disabled event in the outbox: %v %q %s", err, outboxType, outboxData)
	}
	if r := e.do(key, "POST", "/v1/partners/"+pid+"/endpoints/"+ep.ID+"/replay", map[string]string{"since": t0.Format(time.RFC3339Nano), "source": "log"}); r.Status != 409 {
		t.Errorf("log replay while disabled: %s", r)
	}

	// While disabled: missed events, an unsubscribed type, another partner's events.
	var during []*kgo.Record
	missed := map[string][]byte{}
	var missedOrder []string
	for i := 0; i < 30; i++ {
		env := testEnvelope(pid, "customer.updated", 100+i)
		r := rec(env)
		during = append(during, r)
		missed[env.EventID] = r.Value
		missedOrder = append(missedOrder, env.EventID)
		if i%3 == 0 {
			during = append(during, rec(testEnvelope(pid, "api_key.created", i)), rec(testEnvelope(noise, "customer.updated", i)))
		}
	}
	e.produceEvents(during)
	e.must(200, key, "POST", "/v1/partners/"+pid+"/endpoints/"+ep.ID+"/enable", nil)

	run(t, e.api)
	var job jobAccepted
	e.must(202, key, "POST", "/v1/partners/"+pid+"/endpoints/"+ep.ID+"/replay", map[string]string{
		"since": t0.Add(-time.Second).Format(time.RFC3339Nano), "source": "log", "state": "missing",
	}).json(t, &job)
	v := e.waitJob(pid, job.JobID, time.Minute, nil)
	if v.State != replay.JobSucceeded || v.Total != 30 || v.Done != 30 || v.Failed != 0 {
		t.Fatalf("log replay job: %+v", v)
	}
	got := e.deliveries(30, time.Minute)
	if len(got) != 30 {
		t.Fatalf("%d records, want the 30 missed events", len(got))
	}
	for i, d := range got {
		body, ok := missed[d.EventID]
		switch {
		case !ok:
			t.Errorf("record for event %s, which was not missed", d.EventID)
		case d.EventID != missedOrder[i]:
			t.Errorf("record %d is event %s, want %s (log order)", i, d.EventID, missedOrder[i])
		case !bytes.Equal(d.Body, body):
			t.Errorf("record body of %s differs from the event's bytes", d.EventID)
		case d.AttemptNo != e.cfg.AutomaticAttempts+1 || d.Trigger != records.TriggerReplay || d.EndpointID != ep.ID ||
			d.DeliveryID != records.DeliveryID(d.EventID, ep.ID) || d.EventLSN == 0:
			t.Errorf("record %+v", d)
		}
	}

	// Without a state filter the whole range is replayed: the 20 delivered events and the 30.
	e.must(202, key, "POST", "/v1/partners/"+pid+"/endpoints/"+ep.ID+"/replay", map[string]string{
		"since": t0.Add(-time.Second).Format(time.RFC3339Nano), "source": "log",
	}).json(t, &job)
	v = e.waitJob(pid, job.JobID, time.Minute, nil)
	if v.State != replay.JobSucceeded || v.Done != 50 {
		t.Fatalf("whole-range log replay: %+v", v)
	}
	e.deliveries(80, time.Minute)
}

// TestSendTestEvent checks the test event goes to that endpoint only, as a fresh
// webhook.test event with trigger test.
func TestSendTestEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	ep := e.endpoint("acme", "customer.*")
	e.endpoint("acme", "*") // another endpoint that would match webhook.test through fanout
	var a, b testAccepted
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/test", nil).json(t, &a)
	e.must(202, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/test", "{}").json(t, &b)
	if a.EventID == b.EventID || !outbox.ValidEventID(a.EventID) {
		t.Errorf("test events %s and %s", a.EventID, b.EventID)
	}
	got := e.deliveries(2, 30*time.Second)
	for i, d := range got {
		var env outbox.Envelope
		if err := json.Unmarshal(d.Body, &env); err != nil {
			t.Fatal(err)
		}
		if d.EndpointID != ep.ID || d.Trigger != records.TriggerTest || d.AttemptNo != 1 || d.EventType != testEventType ||
			env.Type != testEventType || env.EventID != d.EventID || env.PartnerID != "acme" || env.Subject.ID != ep.ID {
			t.Errorf("test record %d: %+v %+v", i, d, env)
		}
	}
	if n := testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM outbox_event WHERE type = $1`, testEventType); n != 0 {
		t.Errorf("test events in the outbox: %d", n)
	}
	e.must(200, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/disable", map[string]string{"reason": "x"})
	e.must(409, key, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/test", nil)
	e.must(404, key, "POST", fmt.Sprintf("/v1/partners/acme/endpoints/%s/test", "ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8"), nil)
}
