package admin

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/outbox"
)

// R4: raw-SQL outbox rows of a type the catalog does not know or with data their type's
// schema refuses never reach the events topic; the operator lists them with their reasons,
// newest first, page by page, by partner or reason. Partner keys get 403, their own rows
// included.
func TestOutboxDeadLettersListRefusedRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acmeKey := e.partner("acme")
	e.partner("globex")
	e.startCDC()
	ctx := context.Background()
	raw := func(pid, typ, data string) string {
		t.Helper()
		id := outbox.NewEventID()
		if _, err := e.DB.Pool.Exec(ctx, `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
			VALUES ($1, $2, $3, 'customer', 'cus_1', now(), $4)`, id, pid, typ, data); err != nil {
			t.Fatal(err)
		}
		return id
	}
	before := e.appendEvent("acme", "customer.deleted", `{"customer_id":"cus_1"}`)
	unknown := raw("acme", "invoice.paid", `{"invoice_id":"inv_1"}`)
	invalid := raw("globex", "balance.credited",
		`{"customer_id":"cus_1","credit_id":"crd_1","amount":{"value":50.0,"currency":"USD"},"balance":{"value":"62.40","currency":"USD"}}`)
	after := e.appendEvent("globex", "customer.deleted", `{"customer_id":"cus_2"}`)

	const route = "/v1/outbox/dead-letters"
	var page list[outboxDeadLetterView]
	deadline := time.Now().Add(time.Minute)
	for {
		e.must(200, operatorToken, "GET", route, nil).json(t, &page)
		if len(page.Data) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d refused rows listed after a minute, want 2", len(page.Data))
		}
		time.Sleep(100 * time.Millisecond)
	}
	got, want := page.Data[0], outboxDeadLetterView{EventID: invalid, PartnerID: "globex", Type: "balance.credited",
		SchemaVersion: 1, Subject: outbox.Subject{Type: "customer", ID: "cus_1"}, Reason: "invalid_data"}
	if got.EventID != want.EventID || got.PartnerID != want.PartnerID || got.Type != want.Type || got.SchemaVersion != 1 ||
		got.Subject != want.Subject || got.Reason != want.Reason || !strings.Contains(got.Detail, "data/amount/value") ||
		got.CommitLSN == "" || got.OccurredAt.IsZero() || got.CreatedAt.IsZero() {
		t.Errorf("newest refused row %+v, want %+v with a detail naming data/amount/value", got, want)
	}
	if got := page.Data[1]; got.EventID != unknown || got.Reason != "unknown_type" || !strings.Contains(got.Detail, "invoice.paid") {
		t.Errorf("older refused row %+v, want %s as unknown_type", got, unknown)
	}
	if page.HasMore || page.NextCursor != "" {
		t.Errorf("one page holds both: has_more %v, next_cursor %q", page.HasMore, page.NextCursor)
	}

	// The valid rows around them were published, the refused ones not.
	cl := e.Kafka.Client(t, kgo.ConsumeTopics(e.Names.Events), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var published []string
	for !slices.Contains(published, before) || !slices.Contains(published, after) {
		if time.Now().After(deadline) {
			t.Fatalf("events topic holds %v, want %s and %s", published, before, after)
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { published = append(published, string(r.Key)) })
		cancel()
	}
	if slices.Contains(published, unknown) || slices.Contains(published, invalid) {
		t.Fatalf("a refused row was published: %v", published)
	}

	// Pages, newest first.
	var first, second list[outboxDeadLetterView]
	e.must(200, operatorToken, "GET", route+"?limit=1", nil).json(t, &first)
	if len(first.Data) != 1 || first.Data[0].EventID != invalid || !first.HasMore || first.NextCursor == "" {
		t.Fatalf("first page %+v", first)
	}
	e.must(200, operatorToken, "GET", route+"?limit=1&cursor="+first.NextCursor, nil).json(t, &second)
	if len(second.Data) != 1 || second.Data[0].EventID != unknown || second.HasMore || second.NextCursor != "" {
		t.Fatalf("second page %+v", second)
	}
	// Filters.
	for query, wantIDs := range map[string][]string{
		"?partner_id=acme":                     {unknown},
		"?partner_id=globex":                   {invalid},
		"?partner_id=initech":                  {},
		"?reason=unknown_type":                 {unknown},
		"?reason=invalid_data":                 {invalid},
		"?reason=too_large":                    {},
		"?partner_id=acme&reason=invalid_data": {},
	} {
		var l list[outboxDeadLetterView]
		e.must(200, operatorToken, "GET", route+query, nil).json(t, &l)
		var ids []string
		for _, d := range l.Data {
			ids = append(ids, d.EventID)
		}
		if len(ids) != len(wantIDs) || (len(ids) > 0 && !slices.Equal(ids, wantIDs)) {
			t.Errorf("%s: %v, want %v", query, ids, wantIDs)
		}
	}
	for _, bad := range []string{"?reason=bogus", "?cursor=nonsense", "?limit=0",
		"?cursor=" + encodeCursor("deliveries", deliveryCursor{ID: "dlv_x"}), "?cursor=" + encodeCursor("outbox-dead-letters", outboxDeadLetterCursor{})} {
		e.must(400, operatorToken, "GET", route+bad, nil)
	}
	// Partners never see the refused rows, not even their own.
	e.must(403, acmeKey, "GET", route, nil)
	e.must(403, acmeKey, "GET", route+"?partner_id=acme", nil)
	e.must(401, "", "GET", route, nil)
}

// The reasons the route filters by and documents are the reasons cdc refuses rows for.
func TestOutboxDeadLetterReasonsAreCDCs(t *testing.T) {
	if !slices.Equal(outboxDeadLetterReasons, cdc.Reasons()) {
		t.Fatalf("admin filters reasons %v, cdc refuses for %v", outboxDeadLetterReasons, cdc.Reasons())
	}
	var doc struct {
		Components struct {
			Schemas struct {
				OutboxDeadLetter struct {
					Properties struct {
						Reason struct {
							Enum []string `json:"enum"`
						} `json:"reason"`
					} `json:"properties"`
				} `json:"OutboxDeadLetter"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Components.Schemas.OutboxDeadLetter.Properties.Reason.Enum; !slices.Equal(got, cdc.Reasons()) {
		t.Fatalf("openapi.json documents reasons %v, cdc refuses for %v", got, cdc.Reasons())
	}
}
