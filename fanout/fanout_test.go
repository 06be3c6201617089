package fanout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// R13: every delivery record goes to an endpoint of the event's own partner; the counts are
// exactly events × subscribed endpoints of that partner (R11).
func TestFanoutStaysInsideThePartner(t *testing.T) {
	bothWays(t, func(t *testing.T, by fanoutBy) {
		e := testenv.NewEnv(t)
		cdcReg := startCDC(t, e, by)
		sqlExec(t, e, `INSERT INTO partner (id) VALUES ('pa'), ('pb');
		INSERT INTO endpoint (id, partner_id, url, event_types) VALUES
		  ('ep_a1', 'pa', 'https://a.example/1', '{customer.*}'),
		  ('ep_a2', 'pa', 'https://a.example/2', '{*}'),
		  ('ep_b1', 'pb', 'https://b.example/1', '{customer.*}'),
		  ('ep_b2', 'pb', 'https://b.example/2', '{api_key.*}')`)
		f := startFanout(t, e)
		var eventsA, eventsB []string
		for i := 0; i < 30; i++ {
			eventsA = append(eventsA, appendEvent(t, e, "pa", "customer.created"))
			eventsB = append(eventsB, appendEvent(t, e, "pb", "customer.updated"))
		}
		testenv.WaitValue(t, f.reg, "hookstream_fanout_events_consumed_total", 60, time.Minute)
		ds := decodeDeliveries(t, consume(t, e, e.Names.Deliveries, 30*2+30, 2*time.Second))
		owner := map[string]string{"ep_a1": "pa", "ep_a2": "pa", "ep_b1": "pb", "ep_b2": "pb"}
		partnerOf := map[string]string{}
		for _, id := range eventsA {
			partnerOf[id] = "pa"
		}
		for _, id := range eventsB {
			partnerOf[id] = "pb"
		}
		for _, d := range ds {
			if owner[d.EndpointID] != d.PartnerID || partnerOf[d.EventID] != d.PartnerID {
				t.Fatalf("delivery %s: event of %s to endpoint %s of %s", d.DeliveryID, partnerOf[d.EventID], d.EndpointID, owner[d.EndpointID])
			}
			if d.DeliveryID != records.DeliveryID(d.EventID, d.EndpointID) || d.AttemptNo != 1 || d.Trigger != records.TriggerInitial || len(d.Body) == 0 {
				t.Fatalf("delivery %+v", d)
			}
		}
		want := map[string]int{}
		for _, id := range eventsA {
			want[pair(id, "ep_a1")], want[pair(id, "ep_a2")] = 1, 1
		}
		for _, id := range eventsB {
			want[pair(id, "ep_b1")] = 1
		}
		if got := pairs(ds); !maps.Equal(got, want) {
			t.Fatalf("%d (event, endpoint) pairs, want %d", len(got), len(want))
		}
		made := map[string]float64{"cdc": testenv.Counter(t, cdcReg, "hookstream_cdc_deliveries_produced_total"),
			"fanout": testenv.Counter(t, f.reg, "hookstream_fanout_deliveries_produced_total")}
		if made[by.name] != float64(len(want)) || made["cdc"]+made["fanout"] != float64(len(want)) {
			t.Fatalf("deliveries made %v, want all %d by %s", made, len(want), by.name)
		}
		if passed := testenv.Counter(t, f.reg, "hookstream_fanout_events_passed_total"); (by == byCDC) != (passed == 60) || (by == byFanout) != (passed == 0) {
			t.Fatalf("fanout passed %v events by, want %s to make all 60 events' deliveries", passed, by.name)
		}
	})
}

// Step 1 and 2 of the issue: an endpoint created before an event commits receives it, one created
// after never does; type and status changes apply from the moment the view holds them; a
// deleted endpoint receives nothing more.
func TestEndpointLifecycleMidStream(t *testing.T) {
	bothWays(t, func(t *testing.T, by fanoutBy) {
		e := testenv.NewEnv(t)
		startCDC(t, e, by)
		sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1')`)
		f := startFanout(t, e)
		consumed := 0.0
		event := func(typ string) string {
			id := appendEvent(t, e, "p1", typ)
			consumed++
			testenv.WaitValue(t, f.reg, "hookstream_fanout_events_consumed_total", consumed, time.Minute)
			return id
		}
		sqlExec(t, e, `INSERT INTO endpoint (id, partner_id, url, event_types) VALUES ('ep1', 'p1', 'https://x.example/1', '{customer.*}')`)
		e1 := event("customer.created")
		e2 := event("api_key.created")
		sqlExec(t, e, `INSERT INTO endpoint (id, partner_id, url, event_types) VALUES ('ep2', 'p1', 'https://x.example/2', '{*}')`)
		e3 := event("customer.updated")
		sqlExec(t, e, `UPDATE endpoint SET event_types = '{api_key.*}' WHERE id = 'ep1'`)
		e4 := event("customer.deleted")
		e5 := event("api_key.status_changed")
		sqlExec(t, e, `UPDATE endpoint SET status = 'disabled', disabled_reason = 'operator' WHERE id = 'ep2'`)
		e6 := event("api_key.created")
		sqlExec(t, e, `DELETE FROM endpoint WHERE id = 'ep1'`)
		event("api_key.created")
		sqlExec(t, e, `UPDATE endpoint SET status = 'active', disabled_reason = NULL WHERE id = 'ep2'`)
		e8 := event("customer.created")

		got := pairs(decodeDeliveries(t, consume(t, e, e.Names.Deliveries, 7, 2*time.Second)))
		want := map[string]int{
			pair(e1, "ep1"): 1, // subscribed to customer.*
			pair(e3, "ep1"): 1, pair(e3, "ep2"): 1,
			pair(e4, "ep2"): 1, // ep1 now api_key.* only
			pair(e5, "ep1"): 1, pair(e5, "ep2"): 1,
			pair(e6, "ep1"): 1, // ep2 disabled
			pair(e8, "ep2"): 1, // ep1 deleted, ep2 enabled again
		}
		_ = e2 // ep1 not subscribed to api_key.* yet; ep2 created after it committed
		if !maps.Equal(got, want) {
			t.Fatalf("deliveries\n got %v\nwant %v", sorted(got), sorted(want))
		}
	})
}

func sorted(m map[string]int) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}

// An endpoint created in the same transaction as an event receives it (created at the event's
// commit LSN); fanout waits for the endpoint view even though the endpoint record comes after
// the event in Kafka.
func TestEndpointCreatedWithTheEvent(t *testing.T) {
	bothWays(t, func(t *testing.T, by fanoutBy) {
		e := testenv.NewEnv(t)
		startCDC(t, e, by)
		sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1')`)
		f := startFanout(t, e)
		ctx := context.Background()
		tx, err := e.DB.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO endpoint (id, partner_id, url, event_types) VALUES ('ep1', 'p1', 'https://x.example', '{*}')`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ('evt_01JSAMETXN0000000000000000', 'p1', 'customer.created', 'customer', 'c1', now(), $1)`,
			testenv.CatalogData(t, "customer.created", nil)); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		testenv.WaitValue(t, f.reg, "hookstream_fanout_events_consumed_total", 1, time.Minute)
		got := pairs(decodeDeliveries(t, consume(t, e, e.Names.Deliveries, 1, time.Second)))
		if fmt.Sprint(got) != fmt.Sprint(map[string]int{pair("evt_01JSAMETXN0000000000000000", "ep1"): 1}) {
			t.Fatalf("deliveries %v", got)
		}
	})
}

// An event fanout cannot convert to an endpoint's pinned version (a usage.finalized written at
// version 1 with a negative cost, which version 2 cannot hold) gets no delivery there; the dead
// letter says which event and partner it was for, so an operator can replay it once fixed. The
// endpoint pinned to version 1 receives the event as written (R14).
func TestUnconvertibleEventIsDeadLetteredWithItsID(t *testing.T) {
	bothWays(t, func(t *testing.T, by fanoutBy) {
		e := testenv.NewEnv(t)
		startCDC(t, e, by)
		sqlExec(t, e, `INSERT INTO partner (id) VALUES ('pa');
		INSERT INTO endpoint (id, partner_id, url, event_types, schema_version) VALUES
		  ('ep_v2', 'pa', 'https://a.example/2', '{*}', 2), ('ep_v1', 'pa', 'https://a.example/1', '{*}', 1)`)
		f := startFanout(t, e)
		id := appendEventWith(t, e, "pa", "usage.finalized", map[string]any{"cost": map[string]any{"value": "-1.00", "currency": "USD"}})
		testenv.WaitValue(t, f.reg, "hookstream_fanout_events_consumed_total", 1, time.Minute)
		recs := consume(t, e, e.Names.DLQ, 1, 2*time.Second)
		var dl records.DeadLetter
		if err := json.Unmarshal(recs[0].Value, &dl); err != nil {
			t.Fatal(err)
		}
		if dl.Source != by.name || dl.EventID != id || dl.Partner != "pa" || string(recs[0].Key) != "ep_v2" ||
			!strings.Contains(dl.Reason, "ep_v2") || !strings.Contains(dl.Reason, "negative") {
			t.Fatalf("dead letter %s: %+v", recs[0].Key, dl)
		}
		got := pairs(decodeDeliveries(t, consume(t, e, e.Names.Deliveries, 1, time.Second)))
		if fmt.Sprint(got) != fmt.Sprint(map[string]int{pair(id, "ep_v1"): 1}) {
			t.Fatalf("deliveries %v, want one to ep_v1", got)
		}
	})
}

// An events record that is not JSON is dead-lettered with its bytes carried once, as one JSON
// string: read back, the original is the record's text, not the text quoted once more.
func TestNonJSONEventIsDeadLetteredOnce(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	f := startFanout(t, e)
	const raw = `not json: "quoted" \ and more`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := &kgo.Record{Topic: e.Names.Events, Key: []byte("evt_garbage"), Value: []byte(raw)}
	if err := e.Kafka.Client(t).ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitValue(t, f.reg, "hookstream_fanout_invalid_events_total", 1, time.Minute)
	recs := consume(t, e, e.Names.DLQ, 1, time.Second)
	var dl records.DeadLetter
	if err := json.Unmarshal(recs[0].Value, &dl); err != nil {
		t.Fatal(err)
	}
	if dl.Source != "fanout" || string(recs[0].Key) != "evt_garbage" || !strings.Contains(dl.Reason, "not an envelope") {
		t.Fatalf("dead letter %s: %+v", recs[0].Key, dl)
	}
	var original string
	if err := json.Unmarshal(dl.Original, &original); err != nil || original != raw {
		t.Fatalf("original %s reads back as %q (%v), want %q", dl.Original, original, err, raw)
	}
}

// A burst already waiting when fanout starts is fanned out in transactions of about 2,000
// deliveries, not one transaction per fetch: the sender reads deliveries read_committed and
// sees none of a transaction before it commits, so one transaction of the whole burst would
// hold every delivery back until the last was made. 3,000 events to 10 endpoints are 30,000
// deliveries: 15 transactions or more (a fetch of the burst made one or two).
func TestFanoutBoundsItsTransactions(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	startCDC(t, e, byFanout)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1')`)
	for i := range 10 {
		sqlExec(t, e, `INSERT INTO endpoint (id, partner_id, url, event_types) VALUES ($1, 'p1', 'https://x.example/', '{*}')`,
			fmt.Sprintf("ep%d", i))
	}
	const events, perTx = 3000, 100
	ctx := context.Background()
	data := testenv.CatalogData(t, "customer.created", nil)
	for range events / perTx {
		evs := make([]outbox.Event, perTx)
		for i := range evs {
			evs[i] = outbox.Event{PartnerID: "p1", Type: "customer.created", Subject: outbox.Subject{Type: "customer", ID: "cus_1"}, Data: data}
		}
		if err := pgx.BeginFunc(ctx, e.DB.Pool, func(tx pgx.Tx) error {
			_, err := outbox.AppendAll(ctx, tx, evs)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	consume(t, e, e.Names.Events, events, 0) // the whole burst waits in the events topic
	f := startFanout(t, e)
	testenv.WaitValue(t, f.reg, "hookstream_fanout_deliveries_produced_total", events*10, time.Minute)
	if txns := testenv.Counter(t, f.reg, "hookstream_fanout_kafka_transactions_total"); txns < events*10/2000 {
		t.Fatalf("%v transactions for %d deliveries, want at least %d (about 2,000 deliveries each)", txns, events*10, events*10/2000)
	}
	// Every committed transaction's commit time is observed before its deliveries are counted.
	timed := testenv.HistogramCount(t, f.reg, "hookstream_fanout_kafka_commit_seconds")
	if txns := testenv.Counter(t, f.reg, "hookstream_fanout_kafka_transactions_total"); float64(timed) != txns {
		t.Fatalf("%d commit times observed for %v transactions", timed, txns)
	}
}

// cdc makes the deliveries of an event only when at most its fan-out maximum of the partner's
// endpoints receive the type and none of them is ordered, and marks the events record so
// (records.HeaderFannedOut); the other events carry no mark and fanout makes theirs. Each pair
// exists once either way.
func TestCDCLeavesWideFanOutsToFanout(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	cdcReg := startCDC(t, e, fanoutBy{"cdc", 2})
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('wide'), ('narrow'), ('ord');
		INSERT INTO endpoint (id, partner_id, url, event_types) VALUES
		  ('ep_w1', 'wide', 'https://w.example/1', '{*}'),
		  ('ep_w2', 'wide', 'https://w.example/2', '{customer.*}'),
		  ('ep_w3', 'wide', 'https://w.example/3', '{customer.created}'),
		  ('ep_n1', 'narrow', 'https://n.example/1', '{*}'),
		  ('ep_n2', 'narrow', 'https://n.example/2', '{api_key.*}');
		INSERT INTO endpoint (id, partner_id, url, event_types, ordered) VALUES ('ep_o1', 'ord', 'https://o.example/1', '{*}', true)`)
	f := startFanout(t, e)
	want := map[string]int{}
	wide := map[string]bool{} // fanout's: not marked
	for range 10 {
		id := appendEvent(t, e, "wide", "customer.created") // three endpoints: fanout's
		want[pair(id, "ep_w1")], want[pair(id, "ep_w2")], want[pair(id, "ep_w3")] = 1, 1, 1
		wide[id] = true
		id = appendEvent(t, e, "wide", "api_key.created") // one endpoint: cdc's
		want[pair(id, "ep_w1")] = 1
		id = appendEvent(t, e, "narrow", "customer.created") // one: cdc's
		want[pair(id, "ep_n1")] = 1
		id = appendEvent(t, e, "ord", "customer.created") // one, ordered: fanout's
		want[pair(id, "ep_o1")] = 1
		wide[id] = true
	}
	testenv.WaitValue(t, f.reg, "hookstream_fanout_events_consumed_total", 40, time.Minute)
	if got := pairs(decodeDeliveries(t, consume(t, e, e.Names.Deliveries, len(want), 2*time.Second))); !maps.Equal(got, want) {
		t.Fatalf("deliveries\n got %v\nwant %v", sorted(got), sorted(want))
	}
	for _, r := range consume(t, e, e.Names.Events, 40, 0) {
		marked := slices.ContainsFunc(r.Headers, func(h kgo.RecordHeader) bool {
			return h.Key == records.HeaderFannedOut && string(h.Value) == records.FannedOutByCDC
		})
		if marked == wide[string(r.Key)] {
			t.Errorf("event %s: marked fanned out by cdc %v, want %v", r.Key, marked, !wide[string(r.Key)])
		}
	}
	if byCDC, byFanout := testenv.Counter(t, cdcReg, "hookstream_cdc_deliveries_produced_total"),
		testenv.Counter(t, f.reg, "hookstream_fanout_deliveries_produced_total"); byCDC != 20 || byFanout != 40 {
		t.Fatalf("deliveries made by cdc %v, by fanout %v; want 20 and 40", byCDC, byFanout)
	}
}
