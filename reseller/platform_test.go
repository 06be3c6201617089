package reseller_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/reseller"
)

type fixture struct {
	t   testing.TB
	db  *testenv.Database
	p   *reseller.Platform
	ctx context.Context
}

func newFixture(t testing.TB, cfg reseller.Config) *fixture {
	t.Helper()
	db := testenv.NewDatabase(t)
	for _, pid := range []string{"pa", "pb"} {
		if _, err := db.Pool.Exec(context.Background(), `INSERT INTO partner (id) VALUES ($1)`, pid); err != nil {
			t.Fatal(err)
		}
	}
	return &fixture{t: t, db: db, p: reseller.New(db.Pool, cfg), ctx: context.Background()}
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// event is an outbox row as a receiver sees its type and data.
type event struct {
	Type string
	Data map[string]any
}

// events returns the partner's outbox rows in the order they were written.
func (f *fixture) events(pid string) []event {
	f.t.Helper()
	rows, err := f.db.Pool.Query(f.ctx, `SELECT type, payload FROM outbox_event WHERE partner_id = $1 ORDER BY event_id`, pid)
	f.must(err)
	defer rows.Close()
	var out []event
	for rows.Next() {
		var e event
		var b []byte
		f.must(rows.Scan(&e.Type, &b))
		f.must(json.Unmarshal(b, &e.Data))
		out = append(out, e)
	}
	f.must(rows.Err())
	return out
}

func (f *fixture) customer(pid string, floor *reseller.Decimal) reseller.Customer {
	f.t.Helper()
	c, err := f.p.CreateCustomer(f.ctx, pid, reseller.NewCustomer{Name: "Acme", Currency: "USD", LowBalanceThreshold: floor})
	f.must(err)
	return c
}

func (f *fixture) budget(pid, cid, limit string, thresholds ...int) reseller.Budget {
	f.t.Helper()
	if thresholds == nil {
		thresholds = reseller.DefaultThresholds
	}
	start := time.Now().UTC().Add(-time.Hour)
	b, err := f.p.CreateBudget(f.ctx, pid, cid, reseller.NewBudget{Limit: d(limit), Thresholds: thresholds,
		PeriodStart: start, PeriodEnd: start.Add(30 * 24 * time.Hour)})
	f.must(err)
	return b
}

func (f *fixture) usage(pid, cid, cost string) error {
	now := time.Now().UTC()
	_, err := f.p.RecordUsage(f.ctx, pid, cid, reseller.NewUsage{PeriodStart: now.Add(-time.Minute), PeriodEnd: now, Requests: 1, InputTokens: 10, OutputTokens: 5, Cost: d(cost)})
	return err
}

// summary renders events as "type" or, for crossings, "budget.threshold_crossed 80".
func summary(evs []event) []string {
	var out []string
	for _, e := range evs {
		s := e.Type
		if e.Type == "budget.threshold_crossed" {
			s += fmt.Sprintf(" %v", e.Data["threshold_percent"])
		}
		out = append(out, s)
	}
	return out
}

// R5 through the platform: usage crosses 80, an adjustment (a usage correction) brings the spend
// back below and re-arms it, usage crosses 80 again, then 100; a credit re-arms balance.low and a
// later debit fires it again. Every event passes the catalog on its way into the outbox.
func TestCrossingsThroughThePlatform(t *testing.T) {
	f := newFixture(t, reseller.Config{})
	floor := d("20.00")
	c := f.customer("pa", &floor)
	_, err := f.p.CreditBalance(f.ctx, "pa", c.ID, reseller.Credit{Amount: d("100.00")})
	f.must(err)
	b := f.budget("pa", c.ID, "100.00")
	f.must(f.usage("pa", c.ID, "50.00")) // 50 %: nothing
	f.must(f.usage("pa", c.ID, "35.00")) // 85 %: 80 crossed; balance 15 < 20: low
	_, err = f.p.AdjustBalance(f.ctx, "pa", c.ID, reseller.Adjustment{Amount: d("10.00"), Reason: "usage_correction", BudgetID: b.ID})
	f.must(err)                              // 75 %: re-armed; balance 25: low re-armed
	f.must(f.usage("pa", c.ID, "10.00"))     // 85 %: 80 again; balance 15: low again
	f.must(f.usage("pa", c.ID, "20.000001")) // 105.000001 %: 100
	got := summary(f.events("pa"))
	want := []string{"customer.created", "balance.credited",
		"usage.finalized",
		"usage.finalized", "budget.threshold_crossed 80", "balance.low",
		"balance.adjusted",
		"usage.finalized", "budget.threshold_crossed 80", "balance.low",
		"usage.finalized", "budget.threshold_crossed 100"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	evs := f.events("pa")
	last := evs[len(evs)-1].Data
	if last["previous_percent"] != "85.00" || last["current_percent"] != "105.00" || fmt.Sprint(last["spent"]) != "map[currency:USD value:105.000001]" {
		t.Errorf("the last crossing carries %v", last)
	}
	bb, err := f.p.Budget(f.ctx, "pa", b.ID)
	f.must(err)
	if bb.Spent.Value.String() != "105.000001" || bb.Version != b.Version+5 {
		t.Errorf("budget spent %s version %d, want 105.000001 and %d", bb.Spent.Value, bb.Version, b.Version+5)
	}
}

// R14: the platform writes usage.finalized at version 2, its cost in exact millionths, and every
// other type at version 1; the v2 event converted for an endpoint pinned to 1 carries the same
// amount as a decimal string.
func TestUsageIsWrittenAtVersion2(t *testing.T) {
	f := newFixture(t, reseller.Config{})
	c := f.customer("pa", nil)
	f.must(f.usage("pa", c.ID, "20.000001"))
	rows, err := f.db.Pool.Query(f.ctx, `SELECT type, schema_version, payload::text FROM outbox_event WHERE partner_id = 'pa' ORDER BY event_id`)
	f.must(err)
	defer rows.Close()
	var usage []byte
	for rows.Next() {
		var (
			typ     string
			version int
			payload []byte
		)
		f.must(rows.Scan(&typ, &version, &payload))
		want := 1
		if typ == "usage.finalized" {
			want, usage = 2, payload
		}
		if version != want {
			t.Errorf("%s written at version %d, want %d", typ, version, want)
		}
	}
	f.must(rows.Err())
	var data struct {
		Cost json.RawMessage `json:"cost"`
	}
	f.must(json.Unmarshal(usage, &data))
	if string(data.Cost) != `{"currency": "USD", "amount_micros": 20000001}` {
		t.Fatalf("usage.finalized cost %s, want 20000001 micros", data.Cost)
	}
	v1, err := eventcatalog.ConvertData("usage.finalized", 2, 1, usage)
	f.must(err)
	if f.must(json.Unmarshal(v1, &data)); string(data.Cost) != `{"currency":"USD","value":"20.000001"}` {
		t.Fatalf("converted to version 1: cost %s", data.Cost)
	}
}

// Concurrent usage records on one budget: the spend is exact (no lost update) and each
// threshold fires exactly once (no lost or doubled crossing).
func TestConcurrentUsageOnOneBudget(t *testing.T) {
	f := newFixture(t, reseller.Config{})
	c := f.customer("pa", nil)
	b := f.budget("pa", c.ID, "100.00", 50, 80, 100)
	const workers, each = 8, 5 // 40 records of 3.00: 120 %
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				errs <- f.usage("pa", c.ID, "3.00")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		f.must(err)
	}
	var crossed []any
	for _, e := range f.events("pa") {
		if e.Type == "budget.threshold_crossed" {
			crossed = append(crossed, e.Data["threshold_percent"])
		}
	}
	if fmt.Sprint(crossed) != "[50 80 100]" {
		t.Errorf("crossings %v, want [50 80 100] once each", crossed)
	}
	got, err := f.p.Budget(f.ctx, "pa", b.ID)
	f.must(err)
	if got.Spent.Value.String() != "120.00" || got.Version != b.Version+workers*each {
		t.Errorf("spent %s version %d, want 120.00 and %d", got.Spent.Value, got.Version, b.Version+workers*each)
	}
}

// When the state change fails, no event is written, even one appended earlier in the same
// transaction; the state is as before, version included.
func TestFailedStateChangeWritesNoEvent(t *testing.T) {
	f := newFixture(t, reseller.Config{})
	c := f.customer("pa", nil)
	b := f.budget("pa", c.ID, reseller.MaxAmount.String())
	_, err := f.p.CreditBalance(f.ctx, "pa", c.ID, reseller.Credit{Amount: reseller.MaxAmount})
	f.must(err)
	f.must(f.usage("pa", c.ID, reseller.MaxAmount.String())) // balance 0, spend at MaxAmount
	before := len(f.events("pa"))
	cb, err := f.p.Customer(f.ctx, "pa", c.ID)
	f.must(err)

	// The adjustment's ledger row and balance.adjusted go in, then its budget's spend would
	// pass MaxAmount: all of it rolls back.
	_, err = f.p.AdjustBalance(f.ctx, "pa", c.ID, reseller.Adjustment{Amount: d("-0.000001"), Reason: "usage_correction", BudgetID: b.ID})
	if e, ok := reseller.AsError(err); !ok || e.Code != reseller.CodeValidation {
		t.Fatalf("adjustment past the range: %v, want a validation error", err)
	}
	// Refused before any write: another partner's customer, a deleted customer.
	if _, err := f.p.CreditBalance(f.ctx, "pb", c.ID, reseller.Credit{Amount: d("1")}); !isCode(err, reseller.CodeNotFound) {
		t.Errorf("credit through another partner: %v, want not_found", err)
	}
	other := f.customer("pa", nil)
	_, err = f.p.DeleteCustomer(f.ctx, "pa", other.ID)
	f.must(err)
	before += 2 // customer.created, customer.deleted
	if err := f.usage("pa", other.ID, "1.00"); !isCode(err, reseller.CodeConflict) {
		t.Errorf("usage of a deleted customer: %v, want conflict", err)
	}

	if n := len(f.events("pa")); n != before {
		t.Errorf("%d events, want %d: a failed change wrote one", n, before)
	}
	if n := len(f.events("pb")); n != 0 {
		t.Errorf("partner pb has %d events", n)
	}
	ca, err := f.p.Customer(f.ctx, "pa", c.ID)
	f.must(err)
	if ca.Version != cb.Version || ca.Balance.Value.Cmp(cb.Balance.Value) != 0 {
		t.Errorf("customer %+v after the failed change, want %+v", ca, cb)
	}
	var ledger int
	f.must(f.db.Pool.QueryRow(f.ctx, `SELECT count(*) FROM reseller.ledger_entry WHERE kind = 'adjustment'`).Scan(&ledger))
	if ledger != 0 {
		t.Errorf("%d adjustments in the ledger, want 0", ledger)
	}
}

func isCode(err error, code string) bool {
	e, ok := reseller.AsError(err)
	return ok && e.Code == code
}

// olderCatalog is the published catalog as a platform might hold it while a type is not yet
// released: it refuses balance.low.
type olderCatalog struct{ *eventcatalog.Catalog }

func (c olderCatalog) CheckEvent(ev outbox.Event) error {
	if ev.Type == "balance.low" {
		return &outbox.ValidationError{Field: "type", Reason: "balance.low is not in this catalog", Err: outbox.ErrInvalidType}
	}
	return c.Catalog.CheckEvent(ev)
}

// When an event fails validation, the state change rolls back: the usage that would take the
// balance below its floor is not recorded, not debited, not counted against the budget, and
// none of its other events is written.
func TestRefusedEventRollsBackState(t *testing.T) {
	f := newFixture(t, reseller.Config{Catalog: olderCatalog{eventcatalog.Published()}})
	floor := d("5.00")
	c := f.customer("pa", &floor)
	_, err := f.p.CreditBalance(f.ctx, "pa", c.ID, reseller.Credit{Amount: d("10.00")})
	f.must(err)
	b := f.budget("pa", c.ID, "10.00")
	before := f.events("pa")
	cb, err := f.p.Customer(f.ctx, "pa", c.ID)
	f.must(err)

	err = f.usage("pa", c.ID, "9.00") // usage.finalized, budget 80 crossed, then balance.low refused
	var verr *outbox.ValidationError
	if !errors.As(err, &verr) || !errors.Is(err, outbox.ErrInvalidType) {
		t.Fatalf("usage whose balance.low the catalog refuses: %v", err)
	}
	if got := f.events("pa"); len(got) != len(before) {
		t.Errorf("events %q, want only %q", summary(got), summary(before))
	}
	ca, err := f.p.Customer(f.ctx, "pa", c.ID)
	f.must(err)
	ba, err := f.p.Budget(f.ctx, "pa", b.ID)
	f.must(err)
	if ca.Balance.Value.String() != "10.00" || ca.Version != cb.Version || ba.Spent.Value.Sign() != 0 || ba.Version != b.Version {
		t.Errorf("after the refused event: balance %s v%d, budget spent %s v%d; want 10.00 v%d, 0 v%d",
			ca.Balance.Value, ca.Version, ba.Spent.Value, ba.Version, cb.Version, b.Version)
	}
	var n int
	f.must(f.db.Pool.QueryRow(f.ctx, `SELECT count(*) FROM reseller.usage_record`).Scan(&n))
	if n != 0 {
		t.Errorf("%d usage records, want 0", n)
	}
	// The same change without the floor crossing goes through.
	f.must(f.usage("pa", c.ID, "4.00"))
}

// Every state read carries a version that increases with each change (R30); a key's full value
// is returned once and never stored.
func TestVersionsAndKeys(t *testing.T) {
	f := newFixture(t, reseller.Config{})
	c := f.customer("pa", nil)
	versions := []int64{c.Version}
	name := "Acme Ltd"
	c2, err := f.p.UpdateCustomer(f.ctx, "pa", c.ID, reseller.CustomerChange{Name: &name})
	f.must(err)
	versions = append(versions, c2.Version)
	_, err = f.p.CreditBalance(f.ctx, "pa", c.ID, reseller.Credit{Amount: d("1")})
	f.must(err)
	bal, err := f.p.Balance(f.ctx, "pa", c.ID)
	f.must(err)
	versions = append(versions, bal.Version)
	for i := 1; i < len(versions); i++ {
		if versions[i] <= versions[i-1] {
			t.Errorf("versions %v do not increase", versions)
		}
	}
	k, err := f.p.CreateAPIKey(f.ctx, "pa", c.ID, "production")
	f.must(err)
	if len(k.Key) < 40 || k.Prefix != k.Key[:8] {
		t.Errorf("key %q prefix %q", k.Key, k.Prefix)
	}
	var stored int
	f.must(f.db.Pool.QueryRow(f.ctx, `SELECT count(*) FROM reseller.api_key k WHERE position($1 in k::text) > 0`, k.Key[8:]).Scan(&stored))
	if stored != 0 {
		t.Error("the key's secret part is stored")
	}
	got, err := f.p.APIKey(f.ctx, "pa", k.ID)
	f.must(err)
	s, err := f.p.SetAPIKeyStatus(f.ctx, "pa", k.ID, reseller.KeyStatusChange{Status: "suspended", Reason: "budget_exhausted"})
	f.must(err)
	if s.Version <= got.Version || s.Status != "suspended" {
		t.Errorf("suspended key %+v after %+v", s, got)
	}
	evs := f.events("pa")
	last := evs[len(evs)-1]
	if last.Type != "api_key.status_changed" || last.Data["version"] != float64(s.Version) || evs[len(evs)-2].Data["key_hint"] != k.Key[len(k.Key)-4:] {
		t.Errorf("key events %+v", evs[len(evs)-2:])
	}
	if _, err := f.p.APIKey(f.ctx, "pb", k.ID); !isCode(err, reseller.CodeNotFound) {
		t.Errorf("another partner reads the key: %v", err)
	}
}
