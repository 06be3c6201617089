package reseller

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ExportItem is one row of the export: a finalized usage record or a ledger entry (a credit or
// an adjustment). Amounts are decimal strings (R7); fields that do not apply to the kind are
// empty.
type ExportItem struct {
	Kind         string    `json:"kind"` // usage, credit or adjustment
	ID           string    `json:"id"`
	CustomerID   string    `json:"customer_id"`
	APIKeyID     string    `json:"api_key_id"`
	BudgetID     string    `json:"budget_id"`
	RecordedAt   time.Time `json:"recorded_at"`
	PeriodStart  string    `json:"period_start"`
	PeriodEnd    string    `json:"period_end"`
	Requests     string    `json:"requests"`
	InputTokens  string    `json:"input_tokens"`
	OutputTokens string    `json:"output_tokens"`
	Amount       string    `json:"amount"` // usage: its cost (debited); credit and adjustment: signed
	Currency     string    `json:"currency"`
	BalanceAfter string    `json:"balance_after"`
	Reason       string    `json:"reason"`
}

// ExportColumns are the CSV header, in the order of ExportItem's fields.
var ExportColumns = []string{"kind", "id", "customer_id", "api_key_id", "budget_id", "recorded_at", "period_start", "period_end",
	"requests", "input_tokens", "output_tokens", "amount", "currency", "balance_after", "reason"}

// Record returns the item as a CSV record under ExportColumns.
func (it ExportItem) Record() []string {
	return []string{it.Kind, it.ID, it.CustomerID, it.APIKeyID, it.BudgetID, it.RecordedAt.Format(time.RFC3339Nano), it.PeriodStart, it.PeriodEnd,
		it.Requests, it.InputTokens, it.OutputTokens, it.Amount, it.Currency, it.BalanceAfter, it.Reason}
}

// ExportPage is one page of an export.
type ExportPage struct {
	Data       []ExportItem `json:"data"`
	NextCursor string       `json:"next_cursor"`
	HasMore    bool         `json:"has_more"`
}

// exportCursor is where an export stands: its range, the snapshot of its first page and the
// last row it listed. Everything is in the cursor, so the export needs no server state; the
// cursor is signed (encodeCursor), since its snapshot goes to PostgreSQL as it is.
type exportCursor struct {
	From     time.Time `json:"f"`
	To       time.Time `json:"t"`
	Snapshot string    `json:"s"`
	After    int64     `json:"a"`
}

// cursorKeyLabel separates the cursor key from any other use of the secret it is derived from.
const cursorKeyLabel = "hookstream reseller export cursor v1"

// DeriveCursorKey makes Config.CursorKey from a deployment secret (hookstream dev uses its
// HOOKSTREAM_SECRET_KEY): HMAC-SHA256 of a fixed label under the secret, so the key says
// nothing of the secret and every instance given the same secret signs alike.
func DeriveCursorKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(cursorKeyLabel))
	return m.Sum(nil)
}

// encodeCursor is base64url(JSON of cur) "." base64url(HMAC-SHA256 of the partner id and that
// JSON): a cursor serves only the partner it was issued to, and only as issued.
func (p *Platform) encodeCursor(pid string, cur exportCursor) string {
	b, _ := json.Marshal(cur) // plain fields
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(p.cursorMAC(pid, b))
}

// decodeCursor returns the cursor s stands for, or false when it is not one this platform
// issued to pid: malformed, altered, or signed under another key.
func (p *Platform) decodeCursor(pid, s string) (exportCursor, bool) {
	var cur exportCursor
	body, sig, ok := strings.Cut(s, ".")
	if !ok {
		return cur, false
	}
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, p.cursorMAC(pid, b)) {
		return cur, false
	}
	if json.Unmarshal(b, &cur) != nil || cur.Snapshot == "" || !cur.To.After(cur.From) || cur.After < 0 {
		return cur, false
	}
	return cur, true
}

func (p *Platform) cursorMAC(pid string, body []byte) []byte {
	m := hmac.New(sha256.New, p.cursorKey)
	m.Write([]byte(pid))
	m.Write([]byte{0})
	m.Write(body)
	return m.Sum(nil)
}

// Export lists the partner's finalized usage and ledger entries recorded in [from, to), oldest
// first, limit at a time. The first call (cursor "") fixes the export's snapshot: the rows of
// committed transactions at that moment. Every later page, given the previous page's
// NextCursor, lists only rows of that snapshot, so rows committed while a partner pages through
// are neither listed halfway nor lost: the next export has them. from and to are ignored when a
// cursor is given (the cursor carries them).
func (p *Platform) Export(ctx context.Context, pid string, from, to time.Time, cursor string, limit int) (ExportPage, error) {
	var cur exportCursor
	if cursor != "" {
		var ok bool
		if cur, ok = p.decodeCursor(pid, cursor); !ok {
			return ExportPage{}, refuse(400, CodeInvalidCursor, "cursor: not one this export issued")
		}
	} else {
		if from.IsZero() || to.IsZero() || !to.After(from) {
			return ExportPage{}, invalidValue("from and to: both required (RFC 3339), to after from")
		}
		cur = exportCursor{From: from.UTC(), To: to.UTC()}
	}
	var (
		page ExportPage
		seqs []int64
	)
	err := pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if cur.Snapshot == "" {
			// The transaction's own snapshot: this page lists exactly what it sees.
			if err := tx.QueryRow(ctx, `SELECT pg_current_snapshot()::text`).Scan(&cur.Snapshot); err != nil {
				return fmt.Errorf("reseller: export snapshot: %w", err)
			}
		}
		rows, err := tx.Query(ctx, `SELECT kind, id, customer_id, api_key_id, budget_id, created_at, period_start, period_end,
				requests, input_tokens, output_tokens, amount::text, currency, balance_after, reason, export_seq
			FROM (
				SELECT 'usage' AS kind, id, customer_id, coalesce(api_key_id, '') AS api_key_id, '' AS budget_id, created_at,
				       to_char(period_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS period_start,
				       to_char(period_end AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS period_end,
				       requests::text, input_tokens::text, output_tokens::text, cost AS amount, currency, '' AS balance_after, '' AS reason, export_seq, xid
				FROM reseller.usage_record WHERE partner_id = $1
				UNION ALL
				SELECT kind, id, customer_id, '', coalesce(budget_id, ''), created_at, '', '', '', '', '', amount, currency,
				       balance_after::text, reason, export_seq, xid
				FROM reseller.ledger_entry WHERE partner_id = $1
			) AS item
			WHERE created_at >= $2 AND created_at < $3 AND export_seq > $4 AND pg_visible_in_snapshot(xid, $5::pg_snapshot)
			ORDER BY export_seq LIMIT $6`, pid, cur.From, cur.To, cur.After, cur.Snapshot, limit+1)
		if err != nil {
			return fmt.Errorf("reseller: export: %w", err)
		}
		page.Data, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ExportItem, error) {
			var (
				it     ExportItem
				amount Decimal
				amt    string
				seq    int64
			)
			err := r.Scan(&it.Kind, &it.ID, &it.CustomerID, &it.APIKeyID, &it.BudgetID, &it.RecordedAt, &it.PeriodStart, &it.PeriodEnd,
				&it.Requests, &it.InputTokens, &it.OutputTokens, &amt, &it.Currency, &it.BalanceAfter, &it.Reason, &seq)
			if err == nil {
				amount, err = ParseDecimal(amt)
				it.Amount = amount.String()
				if it.BalanceAfter != "" {
					it.BalanceAfter = MustDecimal(it.BalanceAfter).String()
				}
			}
			it.RecordedAt = it.RecordedAt.UTC()
			seqs = append(seqs, seq)
			return it, err
		})
		if err != nil {
			return fmt.Errorf("reseller: export: %w", err)
		}
		return nil
	})
	if err != nil {
		return ExportPage{}, err
	}
	if len(page.Data) > limit {
		page.Data, page.HasMore = page.Data[:limit], true
	}
	if page.Data == nil {
		page.Data = []ExportItem{}
	}
	if page.HasMore {
		cur.After = seqs[limit-1]
		page.NextCursor = p.encodeCursor(pid, cur)
	}
	return page, nil
}
