package fanout_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// R13: payload filters. A mixed load of events with varying data goes to four
// endpoints of one partner, three of them with filters; the deliveries fanout produces are
// exactly the (event, endpoint) pairs whose filter holds for the event's data, each once, and
// every pair a filter refused is counted in hookstream_fanout_filtered_deliveries_total. The
// expected pairs are computed from the data the test wrote, not by the filter package.
// ep_old's filter was registered before the cost limits of the language (a number of
// exponent -400, more than MaxCost): it is still read and applied.
func TestFanoutAppliesPayloadFilters(t *testing.T) {
	bothWays(t, func(t *testing.T, by fanoutBy) {
		e := testenv.NewEnv(t)
		cdcReg := startCDC(t, e, by)
		sqlExec(t, e, `INSERT INTO partner (id) VALUES ('pa'), ('pb');
		INSERT INTO endpoint (id, partner_id, url, event_types, filter) VALUES
		  ('ep_all', 'pa', 'https://a.example/all', '{*}', NULL),
		  ('ep_big', 'pa', 'https://a.example/big', '{balance.*}', 'data.amount.value >= 100'),
		  ('ep_src', 'pa', 'https://a.example/src', '{*}', 'data.source in ["purchase", "refund"] or type == "customer.created"'),
		  ('ep_low', 'pa', 'https://a.example/low', '{*}', 'not exists(data.source) and (data.balance.value < 50 or data.reason == "chargeback")'),
		  ('ep_old', 'pa', 'https://a.example/old', '{*}', '(data.amount.value >= 2e2 and data.amount.value > 1e-400) or data.source == "refund" or data.amount.value in [1e-400, 0.5e-399] or type == "a" or type == "b" or type == "c"'),
		  ('ep_pb',  'pb', 'https://b.example/big', '{*}', 'data.amount.value >= 100')`)
		f := startFanout(t, e)

		type sent struct {
			id, typ, source, reason string
			amount, balance         float64
		}
		sources := []string{"purchase", "promotion", "refund"}
		reasons := []string{"usage_correction", "goodwill", "chargeback", "other"}
		var events []sent
		for i := 0; i < 90; i++ {
			ev := sent{amount: float64(i*37%250) + 0.5, balance: float64(i*53%120) + 0.25}
			data := map[string]any{
				"amount":  map[string]any{"value": fmt.Sprintf("%.2f", ev.amount), "currency": "USD"},
				"balance": map[string]any{"value": fmt.Sprintf("%.2f", ev.balance), "currency": "USD"},
			}
			switch i % 3 {
			case 0:
				ev.typ, ev.source = "balance.credited", sources[i/3%3]
				data["source"] = ev.source
			case 1:
				ev.typ, ev.reason = "balance.adjusted", reasons[i/3%4]
				data["reason"] = ev.reason
			case 2:
				ev.typ = "customer.created"
				data = nil
			}
			ev.id = appendEventWith(t, e, "pa", ev.typ, data)
			events = append(events, ev)
		}
		other := appendEventWith(t, e, "pb", "balance.credited", map[string]any{"amount": map[string]any{"value": "100.00", "currency": "USD"}})

		want := map[string]int{pair(other, "ep_pb"): 1}
		refused := 0.0
		for _, ev := range events {
			balance := ev.typ != "customer.created"
			match := map[string]bool{
				"ep_all": true,
				"ep_src": ev.source == "purchase" || ev.source == "refund" || ev.typ == "customer.created",
				"ep_low": ev.source == "" && balance && (ev.balance < 50 || ev.reason == "chargeback"),
				"ep_old": (balance && ev.amount >= 200) || ev.source == "refund",
			}
			if balance {
				match["ep_big"] = ev.amount >= 100 // subscribed to balance.* only
			}
			for ep, ok := range match {
				if ok {
					want[pair(ev.id, ep)] = 1
				} else {
					refused++
				}
			}
		}
		testenv.WaitValue(t, f.reg, "hookstream_fanout_events_consumed_total", float64(len(events)+1), time.Minute)
		got := pairs(decodeDeliveries(t, consume(t, e, e.Names.Deliveries, len(want), 2*time.Second)))
		if !maps.Equal(got, want) {
			for k := range got {
				if want[k] != got[k] {
					t.Errorf("delivered %s ×%d, want ×%d", k, got[k], want[k])
				}
			}
			for k := range want {
				if got[k] == 0 {
					t.Errorf("not delivered: %s", k)
				}
			}
			t.Fatalf("%d pairs delivered, want %d", len(got), len(want))
		}
		if n := testenv.Counter(t, f.reg, "hookstream_fanout_filtered_deliveries_total") +
			testenv.Counter(t, cdcReg, "hookstream_cdc_filtered_deliveries_total"); n != refused {
			t.Fatalf("filtered deliveries counted %v, want %v", n, refused)
		}
		if refused < 60 || len(want) < 120 {
			t.Fatalf("the load exercises too little: %v refused, %d delivered", refused, len(want))
		}
	})
}

// A filter fanout cannot parse (written past the admin API) is a record the view cannot read:
// the endpoint keeps its last good state, here the filter it had, and never receives what
// that filter refuses.
func TestUnreadableFilterKeepsTheLastGoodOne(t *testing.T) {
	bothWays(t, func(t *testing.T, by fanoutBy) {
		e := testenv.NewEnv(t)
		startCDC(t, e, by)
		sqlExec(t, e, `INSERT INTO partner (id) VALUES ('pa');
		INSERT INTO endpoint (id, partner_id, url, event_types, filter) VALUES
		  ('ep_f', 'pa', 'https://a.example/f', '{*}', 'data.source == "refund"')`)
		f := startFanout(t, e)
		sqlExec(t, e, `UPDATE endpoint SET filter = 'data.source ==' WHERE id = 'ep_f'`)
		refund := appendEventWith(t, e, "pa", "balance.credited", map[string]any{"source": "refund"})
		appendEventWith(t, e, "pa", "balance.credited", map[string]any{"source": "purchase"})
		testenv.WaitValue(t, f.reg, "hookstream_fanout_events_consumed_total", 2, time.Minute)
		got := pairs(decodeDeliveries(t, consume(t, e, e.Names.Deliveries, 1, 2*time.Second)))
		if !maps.Equal(got, map[string]int{pair(refund, "ep_f"): 1}) {
			t.Fatalf("deliveries %v, want the refund only", got)
		}
		if n := testenv.Counter(t, f.reg, "hookstream_endpoint_view_bad_records_total"); n != 1 {
			t.Fatalf("bad endpoint records counted %v, want 1", n)
		}
	})
}

// appendEventWith commits an event of the catalog type typ whose example data has fields
// replaced, and returns its id.
func appendEventWith(t *testing.T, e *env, partner, typ string, fields map[string]any) string {
	t.Helper()
	return e.DB.AppendEvent(context.Background(), t, outbox.Event{PartnerID: partner, Type: typ,
		Subject: outbox.Subject{Type: "customer", ID: "cus_1"}, Data: testenv.CatalogData(t, typ, fields)})
}
