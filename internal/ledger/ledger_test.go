package ledger

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// fixture is a small installation written straight into a fresh database: two partners, three
// endpoints, four events, and (unless a case changes them) every required pair delivered once,
// recorded and received.
type fixture struct {
	t        *testing.T
	db       *testenv.Database
	base     time.Time // the endpoints' creation; events follow a minute later
	receipts []Receipt
}

const (
	epA1 = "ep_A1" // partner pa, every type
	epA2 = "ep_A2" // partner pa, api_key.*
	epB1 = "ep_B1" // partner pb, every type
)

// The events: e1 and e2 of pa (e1 reaches A1 and A2, e2 only A1), e3 of pb (B1).
const (
	e1 = "evt_00000000000000000000000001"
	e2 = "evt_00000000000000000000000002"
	e3 = "evt_00000000000000000000000003"
)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, db: testenv.NewDatabase(t), base: time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)}
	f.exec(`INSERT INTO partner (id) VALUES ('pa'), ('pb')`)
	f.endpoint(epA1, "pa", "*")
	f.endpoint(epA2, "pa", "api_key.*")
	f.endpoint(epB1, "pb", "*")
	f.event(e1, "pa", "api_key.status_changed", time.Minute)
	f.event(e2, "pa", "customer.created", 2*time.Minute)
	f.event(e3, "pb", "customer.created", 3*time.Minute)
	return f
}

// delivered records a succeeded delivery with one 2xx attempt and the receipt of its request.
func (f *fixture) delivered(event, ep, partner string, at time.Duration) {
	f.delivery(event, ep, partner, "succeeded", 1)
	f.attempt(event, ep, 1, "initial", at, 200)
	f.receipt(event, ep, partner, at, 200)
}

func (f *fixture) deliverAll() {
	f.delivered(e1, epA1, "pa", 61*time.Second)
	f.delivered(e1, epA2, "pa", 61*time.Second)
	f.delivered(e2, epA1, "pa", 121*time.Second)
	f.delivered(e3, epB1, "pb", 181*time.Second)
}

func (f *fixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Pool.Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

func (f *fixture) endpoint(id, partner string, types ...string) {
	f.exec(`INSERT INTO endpoint (id, partner_id, url, event_types, created_at, updated_at) VALUES ($1, $2, 'https://x', $3, $4, $4)`,
		id, partner, types, f.base)
}

func (f *fixture) event(id, partner, typ string, after time.Duration) {
	f.exec(`INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ($1, $2, $3, 'x', 'x', $4, '{}')`, id, partner, typ, f.base.Add(after))
}

func (f *fixture) delivery(event, ep, partner, state string, attempts int) {
	f.exec(`INSERT INTO delivery (delivery_id, event_id, endpoint_id, partner_id, state, attempt_count) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (delivery_id) DO UPDATE SET state = EXCLUDED.state, attempt_count = EXCLUDED.attempt_count`,
		records.DeliveryID(event, ep), event, ep, partner, state, attempts)
}

func (f *fixture) attempt(event, ep string, no int, trigger string, at time.Duration, status int) {
	category := any(nil)
	if status < 200 || status > 299 {
		category = "http_status"
	}
	f.exec(`INSERT INTO delivery_attempt (delivery_id, attempt_no, trigger, started_at, status, latency_ms, error_category)
		VALUES ($1, $2, $3, $4, $5, 20, $6)`, records.DeliveryID(event, ep), no, trigger, f.base.Add(at), status, category)
}

func (f *fixture) receipt(event, ep, partner string, at time.Duration, status int) {
	f.receipts = append(f.receipts, Receipt{EventID: event, EndpointID: ep, PartnerID: partner, WebhookID: event,
		ReceivedAt: f.base.Add(at).Add(5 * time.Millisecond), Verified: true, Status: status})
}

func (f *fixture) check(o Options) *Report {
	f.t.Helper()
	o.Receipts = f.receipts
	rep, err := Check(context.Background(), f.db.Pool, o)
	if err != nil {
		f.t.Fatal(err)
	}
	return rep
}

// A clean installation: every required pair delivered once, nothing to report.
func TestCleanLedger(t *testing.T) {
	f := newFixture(t)
	f.deliverAll()
	rep := f.check(Options{MaxUnrecorded: 0})
	if fails := rep.Failures(); len(fails) != 0 {
		t.Fatalf("failures on a clean ledger: %q", fails)
	}
	if rep.Events != 3 || rep.Pairs["required"] != 4 || rep.Deliveries != 4 || rep.Requests != 4 || rep.Duplicates != 0 || rep.Unrecorded != 0 {
		t.Fatalf("report %+v; want 3 events, 4 required pairs, 4 deliveries and requests, no duplicates", rep)
	}
}

// A row cdc refused (listed in outbox_dead_letter) was never published: no endpoint is owed it,
// and a receiver that got it anyway names an event no published row has.
func TestRefusedRowsAreExpectedNowhere(t *testing.T) {
	f := newFixture(t)
	f.deliverAll()
	f.event("evt_00000000000000000000000REF", "pa", "invoice.paid", 4*time.Minute)
	f.exec(`INSERT INTO outbox_dead_letter (event_id, occurred_at, partner_id, type, schema_version, subject_type, subject_id, reason, detail, commit_lsn)
		SELECT event_id, occurred_at, partner_id, type, 1, subject_type, subject_id, 'unknown_type', 'not in the catalog', '0/1'
		FROM outbox_event WHERE event_id = 'evt_00000000000000000000000REF'`)
	rep := f.check(Options{MaxUnrecorded: 0})
	if fails := rep.Failures(); len(fails) != 0 || rep.Refused != 1 || rep.Events != 3 {
		t.Fatalf("failures %q, %d refused, %d events; want none, 1 and 3", fails, rep.Refused, rep.Events)
	}
	f.receipt("evt_00000000000000000000000REF", epA1, "pa", 241*time.Second, 200)
	if rep := f.check(Options{MaxUnrecorded: 0}); rep.UnknownEvents != 1 {
		t.Fatalf("a refused row received: %d unknown events, want 1", rep.UnknownEvents)
	}
}

// Every kind of broken promise is found, counted once, and fails the check; the counts that are
// only reported do not.
func TestLedgerFindings(t *testing.T) {
	kill := 100 * time.Second
	cases := []struct {
		name   string
		break_ func(f *fixture)
		kills  []time.Duration
		want   func(r *Report) int // the count that must be 1
		fails  bool
	}{
		{"missing", func(f *fixture) {
			f.receipts = append(f.receipts[:2], f.receipts[3])
			f.exec(`DELETE FROM delivery WHERE event_id = $1 AND endpoint_id = $2`, e2, epA1)
		}, nil, func(r *Report) int { return r.Missing }, true},
		{"foreign partner", func(f *fixture) { f.receipt(e3, epA1, "pa", 200*time.Second, 200) }, nil,
			func(r *Report) int { return r.Foreign }, true},
		{"bad signature", func(f *fixture) { f.receipts[0].Verified = false; f.receipt(e1, epA1, "pa", 62*time.Second, 200) }, nil,
			func(r *Report) int { return r.BadSignatures }, true},
		{"webhook-id", func(f *fixture) { f.receipts[1].WebhookID = "evt_other" }, nil,
			func(r *Report) int { return r.WebhookIDMismatch }, true},
		{"unknown event", func(f *fixture) { f.receipt("evt_nowhere", epA1, "pa", 70*time.Second, 200) }, nil,
			func(r *Report) int { return r.UnknownEvents }, true},
		{"not subscribed", func(f *fixture) {
			f.delivery(e2, epA2, "pa", "succeeded", 1)
			f.attempt(e2, epA2, 1, "initial", 121*time.Second, 200)
			f.receipt(e2, epA2, "pa", 121*time.Second, 200)
		}, nil, func(r *Report) int { return r.NotSubscribed }, true},
		{"absent from the history", func(f *fixture) {
			f.exec(`DELETE FROM delivery WHERE event_id = $1 AND endpoint_id = $2`, e3, epB1)
		}, nil, func(r *Report) int { return r.AbsentFromHistory }, true},
		{"succeeded while the receiver answered 500", func(f *fixture) {
			f.receipts[0].Status = 500 // and never accepted it
		}, nil, func(r *Report) int { return r.Contradictions }, true},
		{"a recorded 2xx the receiver did not give", func(f *fixture) {
			f.receipt(e1, epA1, "pa", 300*time.Second, 200)
			f.delivery(e1, epA1, "pa", "succeeded", 2)
			f.attempt(e1, epA1, 2, "retry", 300*time.Second, 200)
			f.receipts[0].Status = 503
			f.exec(`UPDATE delivery_attempt SET status = 200 WHERE delivery_id = $1 AND attempt_no = 1`, records.DeliveryID(e1, epA1))
		}, nil, func(r *Report) int { return r.Contradictions }, true},
		{"retrying while the receiver accepted it last, unrecorded", func(f *fixture) {
			f.delivery(e2, epA1, "pa", "retrying", 2)
			f.attempt(e2, epA1, 2, "retry", 130*time.Second, 500)
			f.receipt(e2, epA1, "pa", 130*time.Second, 500)
			f.receipt(e2, epA1, "pa", 200*time.Second, 200) // a third request, never recorded
		}, []time.Duration{190 * time.Second}, func(r *Report) int { return r.Contradictions }, true},
		{"a duplicate answered 500 after an acceptance", func(f *fixture) {
			f.receipt(e1, epA1, "pa", 99*time.Second, 500) // redelivered after the kill, its attempt dropped as a repeat
		}, []time.Duration{kill}, func(r *Report) int { return 1 - r.Contradictions }, false},
		{"duplicate after a kill", func(f *fixture) {
			f.receipts = f.receipts[1:] // e1 → A1 went otherwise:
			f.exec(`DELETE FROM delivery_attempt WHERE delivery_id = $1`, records.DeliveryID(e1, epA1))
			f.receipt(e1, epA1, "pa", 99*time.Second, 200)          // accepted just before the kill at 100 s, never recorded,
			f.attempt(e1, epA1, 1, "initial", 101*time.Second, 200) // and made again after it
			f.receipt(e1, epA1, "pa", 101*time.Second, 200)
		}, []time.Duration{kill}, func(r *Report) int {
			if r.UnrecordedAtKill != 1 {
				return -1
			}
			return r.DuplicatesByCause["kill"]
		}, false},
		{"duplicate of a retry chain a kill forked, accepted twice long after it", func(f *fixture) {
			// e2 → A1 failed at 121 s; the kill at 125 s made it sent again (failing, unrecorded),
			// so two copies went round the retry tiers and both were accepted minutes later.
			f.receipts[2].Status = 500
			f.exec(`UPDATE delivery_attempt SET status = 500 WHERE delivery_id = $1`, records.DeliveryID(e2, epA1))
			f.receipt(e2, epA1, "pa", 126*time.Second, 500)
			f.delivery(e2, epA1, "pa", "succeeded", 3)
			f.attempt(e2, epA1, 2, "retry", 300*time.Second, 200)
			f.receipt(e2, epA1, "pa", 300*time.Second, 200)
			f.attempt(e2, epA1, 3, "retry", 301*time.Second, 200)
			f.receipt(e2, epA1, "pa", 301*time.Second, 200)
		}, []time.Duration{125 * time.Second}, func(r *Report) int {
			if r.DuplicatesByCause["other"] != 0 {
				return -1
			}
			return r.DuplicatesByCause["kill"]
		}, false},
		{"a request held past the deadline, in flight when the sender was killed", func(f *fixture) {
			// Received 12 s before the kill at 100 s and never answered: the sender was still
			// waiting for it (15 s deadline) when it was killed, so its attempt was never written.
			f.receipt(e1, epA1, "pa", 88*time.Second, 0)
		}, []time.Duration{kill}, func(r *Report) int { return r.UnrecordedAtKill }, false},
		{"duplicate of an unrecorded acceptance", func(f *fixture) {
			f.receipts[0].ReceivedAt = f.base.Add(30 * time.Second) // matches no attempt
			f.receipt(e1, epA1, "pa", 61*time.Second, 200)
		}, nil, func(r *Report) int { return r.DuplicatesByCause["unrecorded"] }, true}, // 1 unrecorded > bound 0
		{"duplicate by replay", func(f *fixture) {
			f.delivery(e3, epB1, "pb", "succeeded", 2)
			f.attempt(e3, epB1, 2, "replay", 300*time.Second, 200)
			f.receipt(e3, epB1, "pb", 300*time.Second, 200)
		}, nil, func(r *Report) int { return r.DuplicatesByCause["replay"] }, false},
		{"duplicate after a late answer", func(f *fixture) {
			f.exec(`UPDATE delivery_attempt SET status = NULL, error_category = 'timeout' WHERE delivery_id = $1`, records.DeliveryID(e2, epA1))
			f.receipts[2].Status = 200 // the receiver accepted what the sender recorded as a timeout
			f.delivery(e2, epA1, "pa", "succeeded", 2)
			f.attempt(e2, epA1, 2, "retry", 130*time.Second, 200)
			f.receipt(e2, epA1, "pa", 130*time.Second, 200)
		}, nil, func(r *Report) int { return r.DuplicatesByCause["late answer"] }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.deliverAll()
			tc.break_(f)
			var outages []Outage
			for _, k := range tc.kills {
				outages = append(outages, Outage{From: f.base.Add(k), To: f.base.Add(k + time.Second)})
			}
			rep := f.check(Options{Outages: outages, MaxUnrecorded: len(tc.kills)})
			if got := tc.want(rep); got != 1 {
				var b strings.Builder
				rep.Print(&b)
				t.Fatalf("count = %d, want 1:\n%s", got, b.String())
			}
			if fails := rep.Failures(); (len(fails) > 0) != tc.fails {
				t.Fatalf("failures %q, want failing=%v", fails, tc.fails)
			}
		})
	}
}

// An endpoint disabled by a 410 is owed nothing it had pending, and nothing after; one that was
// re-enabled is owed what came after its last update.
func TestDisabledEndpoints(t *testing.T) {
	f := newFixture(t)
	f.deliverAll()
	// A2 was disabled 90 s in: e1 (60 s) was pending and is excused; it answered 410.
	f.exec(`UPDATE endpoint SET status = 'disabled', updated_at = $2 WHERE id = $1`, epA2, f.base.Add(90*time.Second))
	f.exec(`INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ('evt_00000000000000000000000D1S', 'pa', 'endpoint.disabled', 'endpoint', $1, $2, jsonb_build_object('endpoint_id', $1::text))`, epA2, f.base.Add(90*time.Second))
	f.exec(`UPDATE delivery SET state = 'failed' WHERE endpoint_id = $1`, epA2)
	f.exec(`UPDATE delivery_attempt SET status = 410, error_category = 'http_status' WHERE delivery_id = $1`, records.DeliveryID(e1, epA2))
	f.receipts[1].Status = 410
	// evt_00000000000000000000000D1S reaches A1 (every type): deliver it.
	f.delivered("evt_00000000000000000000000D1S", epA1, "pa", 91*time.Second)
	// B1 was disabled at 150 s and enabled again at 200 s: e3 (180 s) is excused, e4 (250 s) required.
	f.exec(`UPDATE endpoint SET updated_at = $2 WHERE id = $1`, epB1, f.base.Add(200*time.Second))
	f.exec(`INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ('evt_0000000000000000000000D1SB', 'pb', 'endpoint.disabled', 'endpoint', $1, $2, jsonb_build_object('endpoint_id', $1::text))`, epB1, f.base.Add(150*time.Second))
	f.exec(`DELETE FROM delivery WHERE endpoint_id = $1`, epB1)
	f.receipts = f.receipts[:len(f.receipts)-2] // drop e3's receipt at B1, keep evt_00000000000000000000000D1S at A1
	f.receipts = append(f.receipts, Receipt{EventID: "evt_00000000000000000000000D1S", EndpointID: epA1, PartnerID: "pa", WebhookID: "evt_00000000000000000000000D1S",
		ReceivedAt: f.base.Add(91 * time.Second).Add(5 * time.Millisecond), Verified: true, Status: 200})
	f.event("evt_00000000000000000000000004", "pb", "customer.created", 250*time.Second)
	rep := f.check(Options{MaxUnrecorded: 0})
	if rep.Pairs["excused"] != 3 || rep.Missing != 1 || !strings.Contains(strings.Join(rep.Failures(), ""), "evt_00000000000000000000000004") {
		var b strings.Builder
		rep.Print(&b)
		t.Fatalf("want e1→A2, e3→B1 and evt_0000000000000000000000D1SB→B1 excused and only evt_00000000000000000000000004→B1 missing:\n%s", b.String())
	}
}

// Without receipts the history alone decides: a delivery still retrying is missing.
func TestHistoryOnly(t *testing.T) {
	f := newFixture(t)
	f.deliverAll()
	f.delivery(e3, epB1, "pb", "retrying", 2)
	f.exec(`UPDATE delivery SET state = 'retrying' WHERE event_id = $1`, e3)
	rep, err := Check(context.Background(), f.db.Pool, Options{MaxUnrecorded: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Missing != 1 || rep.MissingByState["retrying"] != 1 || len(rep.Failures()) != 1 {
		var b strings.Builder
		rep.Print(&b)
		t.Fatalf("want one missing delivery, retrying:\n%s", b.String())
	}
}

func TestReadReceipts(t *testing.T) {
	in := `{"event_id":"evt_00000000000000000000000001","endpoint_id":"ep_1","partner_id":"pa","webhook_id":"evt_00000000000000000000000001","received_at":"2026-01-01T00:00:00Z","verified":true,"status":200}

{"event_id":"evt_00000000000000000000000002","endpoint_id":"ep_1","partner_id":"pa","webhook_id":"evt_00000000000000000000000002","received_at":"2026-01-01T00:00:01Z","verified":false,"status":401}
`
	rs, err := ReadReceipts(strings.NewReader(in))
	if err != nil || len(rs) != 2 || !rs[0].Accepted() || rs[1].Accepted() {
		t.Fatalf("ReadReceipts = %+v, %v", rs, err)
	}
	if _, err := ReadReceipts(strings.NewReader(`{"event_id":"evt_00000000000000000000000001"}`)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a receipt without endpoint and time: %v, want an error naming line 1", err)
	}
	if rs, err := ReadReceipts(strings.NewReader("")); err != nil || rs == nil {
		t.Fatalf("an empty file: %v, %v; want an empty, non-nil list", rs, err)
	}
}
