package reseller_test

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/reseller"
)

// exportAll pages through an export to the end in one format, calling between after each page,
// and returns every item as a CSV record.
func exportAll(t *testing.T, c *client, from, to time.Time, format string, limit int, between func()) [][]string {
	t.Helper()
	var out [][]string
	path := fmt.Sprintf("/v1/export?from=%s&to=%s&format=%s&limit=%d", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), format, limit)
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the export does not end")
		}
		var page reseller.ExportPage
		var dst any
		if format == "json" {
			dst = &page
		}
		status, body, header := c.do("GET", path, "", dst)
		if status != 200 {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		if format == "json" {
			for _, it := range page.Data {
				out = append(out, it.Record())
			}
		} else {
			recs, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
			if err != nil || len(recs) == 0 || !slices.Equal(recs[0], reseller.ExportColumns) {
				t.Fatalf("CSV page: %v\n%s", err, body)
			}
			out = append(out, recs[1:]...)
		}
		next := header.Get("Export-Next-Cursor")
		if format == "json" && next != page.NextCursor {
			t.Fatalf("header cursor %q, body %q", next, page.NextCursor)
		}
		if next == "" {
			return out
		}
		between()
		path = fmt.Sprintf("/v1/export?format=%s&limit=%d&cursor=%s", format, limit, next)
	}
}

// R34: usage and adjustments written while an export pages through are neither lost nor doubled
// in it: the export holds exactly what was committed when its first page was read, a
// transaction open at that moment included only by the next export. CSV and JSON agree.
func TestExportIsASnapshot(t *testing.T) {
	f := newFixture(t, reseller.Config{})
	c := f.client("pa")
	cus := f.customer("pa", nil)
	b := f.budget("pa", cus.ID, "1000.00")
	other := f.customer("pb", nil)
	from := time.Now().UTC().Add(-time.Second)
	write := func(i int) {
		f.must(f.usage("pa", cus.ID, fmt.Sprintf("%d.%06d", i%7, i)))
		if i%3 == 0 {
			_, err := f.p.AdjustBalance(f.ctx, "pa", cus.ID, reseller.Adjustment{Amount: reseller.MustDecimal("-0.25"), Reason: "usage_correction", BudgetID: b.ID})
			f.must(err)
		}
		if i%5 == 0 {
			_, err := f.p.CreditBalance(f.ctx, "pa", cus.ID, reseller.Credit{Amount: reseller.MustDecimal("10")})
			f.must(err)
		}
		f.must(f.usage("pb", other.ID, "1.00")) // another partner's rows are never listed
	}
	for i := range 30 {
		write(i)
	}
	// A transaction that has written a usage row but not committed when the export starts.
	open, err := f.db.Pool.Begin(context.Background())
	f.must(err)
	defer open.Rollback(context.Background())
	_, err = open.Exec(f.ctx, `INSERT INTO reseller.usage_record (id, partner_id, customer_id, period_start, period_end, requests, input_tokens, output_tokens, cost, currency)
		VALUES ('use_open', 'pa', $1, now(), now(), 1, 1, 1, 1, 'USD')`, cus.ID)
	f.must(err)
	var committed int
	f.must(f.db.Pool.QueryRow(f.ctx, `SELECT (SELECT count(*) FROM reseller.usage_record WHERE partner_id = 'pa')
		+ (SELECT count(*) FROM reseller.ledger_entry WHERE partner_id = 'pa')`).Scan(&committed))
	to := time.Now().UTC().Add(time.Hour)

	n := 30
	writeMore := func() {
		write(n)
		n++
		if n == 33 {
			f.must(open.Commit(context.Background()))
		}
	}
	asJSON := exportAll(t, c, from, to, "json", 7, writeMore)
	asCSV := exportAll(t, c, from, to, "csv", 7, writeMore)

	ids := func(recs [][]string) []string {
		var out []string
		for _, r := range recs {
			out = append(out, r[1])
		}
		return out
	}
	jsonIDs := ids(asJSON)
	if len(jsonIDs) != committed || len(slices.Compact(slices.Sorted(slices.Values(jsonIDs)))) != committed {
		t.Fatalf("JSON export lists %d rows (%d distinct), want the %d committed at its start", len(jsonIDs), len(slices.Compact(slices.Sorted(slices.Values(jsonIDs)))), committed)
	}
	if slices.Contains(jsonIDs, "use_open") {
		t.Error("the JSON export lists a row committed after its first page")
	}
	// The CSV export started later, after writes: it holds the JSON export's rows first, in
	// the same order and with the same values, then the rows written since.
	if len(asCSV) <= len(asJSON) {
		t.Fatalf("CSV export %d rows, JSON %d: the later export misses the writes between", len(asCSV), len(asJSON))
	}
	for i, rec := range asJSON {
		if !slices.Equal(rec, asCSV[i]) {
			t.Fatalf("row %d: JSON %q, CSV %q", i, rec, asCSV[i])
		}
	}
	if !slices.Contains(ids(asCSV), "use_open") {
		t.Error("the later export misses the transaction committed before it started")
	}
	var kinds []string
	for _, r := range asJSON {
		kinds = append(kinds, r[0])
	}
	kinds = slices.Compact(slices.Sorted(slices.Values(kinds)))
	if fmt.Sprint(kinds) != "[adjustment credit usage]" {
		t.Errorf("kinds %v", kinds)
	}
	// A fresh export over everything now agrees between the formats on every row.
	final := exportAll(t, c, from, to, "json", 1000, func() {})
	finalCSV := exportAll(t, c, from, to, "csv", 13, func() {})
	if fmt.Sprint(final) != fmt.Sprint(finalCSV) {
		t.Errorf("JSON and CSV of the same data differ:\n%q\n%q", final, finalCSV)
	}
}

// An export cursor is the platform's signed word: a malformed one, a well-formed one the platform
// did not sign (its snapshot chosen by the caller), one altered after signing, one of another
// partner and one signed under another key are each refused with 400 invalid_cursor, never a 5xx
// and never served. A platform given the same deployment secret takes the cursors of another.
func TestExportCursorIsSigned(t *testing.T) {
	f := newFixture(t, reseller.Config{CursorKey: reseller.DeriveCursorKey([]byte("deployment secret"))})
	a, b := f.client("pa"), f.client("pb")
	cus := f.customer("pa", nil)
	for range 3 {
		f.must(f.usage("pa", cus.ID, "1.00"))
	}
	from, to := time.Now().UTC().Add(-time.Hour), time.Now().UTC().Add(time.Hour)
	var first reseller.ExportPage
	path := fmt.Sprintf("/v1/export?from=%s&to=%s&limit=1", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	if s, body, _ := a.do("GET", path, "", &first); s != 200 || first.NextCursor == "" {
		t.Fatalf("first page: %d %s", s, body)
	}
	unsigned := func(snapshot string, after int) string {
		doc := fmt.Sprintf(`{"f":%q,"t":%q,"s":%q,"a":%d}`, from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), snapshot, after)
		return base64.RawURLEncoding.EncodeToString([]byte(doc))
	}
	body, sig, _ := strings.Cut(first.NextCursor, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	altered := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"a":`, `"a":-`, 1))) + "." + sig
	other := reseller.New(f.db.Pool, reseller.Config{CursorKey: reseller.DeriveCursorKey([]byte("another deployment"))})
	foreign, err := other.Export(f.ctx, "pa", from, to, "", 1)
	f.must(err)
	for name, c := range map[string]struct {
		c      *client
		cursor string
	}{
		"malformed snapshot":       {a, unsigned("not a snapshot", 0)},
		"forged snapshot":          {a, unsigned("1:1:", 0)},
		"forged, signed with junk": {a, unsigned("1:1:", 0) + ".AAAA"},
		"altered after signing":    {a, altered},
		"another partner's":        {b, first.NextCursor},
		"signed under another key": {a, foreign.NextCursor},
		"not base64":               {a, "%%%"},
		"empty signature":          {a, body + "."},
	} {
		s, resp, _ := c.c.do("GET", "/v1/export?limit=1&cursor="+url.QueryEscape(c.cursor), "", nil)
		if s != 400 || !strings.Contains(string(resp), reseller.CodeInvalidCursor) {
			t.Errorf("%s cursor: %d %s, want 400 %s", name, s, resp, reseller.CodeInvalidCursor)
		}
	}
	var second reseller.ExportPage
	if s, resp, _ := a.do("GET", "/v1/export?limit=1&cursor="+first.NextCursor, "", &second); s != 200 || len(second.Data) != 1 || second.Data[0].ID == first.Data[0].ID {
		t.Fatalf("the issued cursor: %d %s", s, resp)
	}
	// Another instance of the same deployment (the same secret) serves the cursor.
	same := reseller.New(f.db.Pool, reseller.Config{CursorKey: reseller.DeriveCursorKey([]byte("deployment secret"))})
	if page, err := same.Export(f.ctx, "pa", time.Time{}, time.Time{}, second.NextCursor, 1); err != nil || len(page.Data) != 1 {
		t.Fatalf("the cursor on another instance of the deployment: %v %+v", err, page)
	}
}
