package reseller

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/outbox"
)

// Balance is a customer's prepaid balance. Version is the customer's: it increases with every
// change of the customer, each credit, adjustment and usage included.
type Balance struct {
	CustomerID          string `json:"customer_id"`
	Balance             Money  `json:"balance"`
	LowBalanceThreshold *Money `json:"low_balance_threshold"`
	Version             int64  `json:"version"`
}

// LedgerEntry is a credit or an adjustment of a customer's balance.
type LedgerEntry struct {
	ID           string    `json:"id"`
	CustomerID   string    `json:"customer_id"`
	Kind         string    `json:"kind"` // credit or adjustment
	Amount       Money     `json:"amount"`
	BalanceAfter Money     `json:"balance_after"`
	Reason       string    `json:"reason"` // a credit's source or an adjustment's reason
	BudgetID     *string   `json:"budget_id"`
	CreatedAt    time.Time `json:"created_at"`
}

// Credit is the input of CreditBalance.
type Credit struct {
	Amount Decimal `json:"amount"`
	Source string  `json:"source"` // purchase, promotion or refund; empty means purchase
}

// Adjustment is the input of AdjustBalance: a signed correction of the balance. With a budget,
// it corrects that budget's spend by the opposite amount (a refund of 1.25 after a usage
// correction lowers the spend by 1.25, and may re-arm its thresholds).
type Adjustment struct {
	Amount   Decimal `json:"amount"`
	Reason   string  `json:"reason"` // usage_correction, goodwill, chargeback or other
	BudgetID string  `json:"budget_id"`
}

var (
	creditSources     = []string{"purchase", "promotion", "refund"}
	adjustmentReasons = []string{"usage_correction", "goodwill", "chargeback", "other"}
)

// Balance reads a customer's balance.
func (p *Platform) Balance(ctx context.Context, pid, cid string) (Balance, error) {
	c, err := p.Customer(ctx, pid, cid)
	if err != nil {
		return Balance{}, err
	}
	return balanceOf(c), nil
}

func balanceOf(c Customer) Balance {
	return Balance{CustomerID: c.ID, Balance: c.Balance, LowBalanceThreshold: c.LowBalanceThreshold, Version: c.Version}
}

// CreditBalance adds credit to a customer's balance: a ledger entry, balance.credited, and the
// re-arming of balance.low when the balance rises back to its floor.
func (p *Platform) CreditBalance(ctx context.Context, pid, cid string, in Credit) (LedgerEntry, error) {
	if in.Amount.Sign() <= 0 {
		return LedgerEntry{}, invalidValue("amount: must be positive")
	}
	in.Source = cmp.Or(in.Source, "purchase")
	if e := notOneOf("source", in.Source, creditSources); e != nil {
		return LedgerEntry{}, e
	}
	var e LedgerEntry
	err := p.changeCustomer(ctx, pid, cid, func(tx pgx.Tx, emit emitFunc, c Customer) error {
		_, err := moveBalance(ctx, tx, emit, pid, c, in.Amount, func(after Customer) error {
			var err error
			e, err = insertLedger(ctx, tx, pid, after, "credit", "crd", in.Amount, in.Source, nil)
			if err != nil {
				return err
			}
			return emit(pid, "balance.credited", outbox.Subject{Type: "customer", ID: cid}, map[string]any{
				"customer_id": cid, "credit_id": e.ID, "amount": e.Amount, "balance": e.BalanceAfter, "source": in.Source})
		})
		return err
	})
	return e, err
}

// AdjustBalance applies a signed ledger adjustment: balance.adjusted, then the crossings of the
// budget it corrects, then balance.low if the balance falls below its floor.
func (p *Platform) AdjustBalance(ctx context.Context, pid, cid string, in Adjustment) (LedgerEntry, error) {
	if in.Amount.Sign() == 0 {
		return LedgerEntry{}, invalidValue("amount: must not be zero")
	}
	if e := notOneOf("reason", in.Reason, adjustmentReasons); e != nil {
		return LedgerEntry{}, e
	}
	var e LedgerEntry
	err := p.changeCustomer(ctx, pid, cid, func(tx pgx.Tx, emit emitFunc, c Customer) error {
		var budget *Budget
		if in.BudgetID != "" {
			bs, err := lockBudgets(ctx, tx, pid, cid, `AND id = $3`, in.BudgetID)
			if err != nil {
				return err
			}
			if len(bs) == 0 {
				return notFound("budget")
			}
			budget = &bs[0]
		}
		_, err := moveBalance(ctx, tx, emit, pid, c, in.Amount, func(after Customer) error {
			var bid *string
			if budget != nil {
				bid = &budget.ID
			}
			var err error
			e, err = insertLedger(ctx, tx, pid, after, "adjustment", "adj", in.Amount, in.Reason, bid)
			if err != nil {
				return err
			}
			if err := emit(pid, "balance.adjusted", outbox.Subject{Type: "customer", ID: cid}, map[string]any{
				"customer_id": cid, "adjustment_id": e.ID, "amount": e.Amount, "balance": e.BalanceAfter, "reason": in.Reason}); err != nil {
				return err
			}
			if budget != nil {
				_, err = moveSpend(ctx, tx, emit, pid, *budget, in.Amount.Neg())
			}
			return err
		})
		return err
	})
	return e, err
}

// moveBalance changes a locked customer's balance by delta, bumps its version, runs between
// (the caller's ledger row and events, which come first), then emits balance.low if the change
// crosses the customer's floor (BalanceLow).
func moveBalance(ctx context.Context, tx pgx.Tx, emit emitFunc, pid string, c Customer, delta Decimal, between func(after Customer) error) (Customer, error) {
	next, err := c.Balance.Value.Add(delta)
	if err != nil {
		return c, invalidValue("the balance would be out of range: %v", err)
	}
	after, err := scanCustomer(tx.QueryRow(ctx, `UPDATE reseller.customer SET balance = $3::numeric, version = version + 1, updated_at = now()
		WHERE partner_id = $1 AND id = $2 RETURNING `+customerColumns, pid, c.ID, next.String()))
	if err != nil {
		return c, fmt.Errorf("reseller: update balance: %w", err)
	}
	if err := between(after); err != nil {
		return c, err
	}
	if t := c.LowBalanceThreshold; t != nil && BalanceLow(t.Value, c.Balance.Value, next) {
		if err := emit(pid, "balance.low", outbox.Subject{Type: "customer", ID: c.ID}, map[string]any{
			"customer_id": c.ID, "balance": after.Balance, "threshold": *t}); err != nil {
			return c, err
		}
	}
	return after, nil
}

func insertLedger(ctx context.Context, tx pgx.Tx, pid string, c Customer, kind, prefix string, amount Decimal, reason string, budgetID *string) (LedgerEntry, error) {
	e := LedgerEntry{ID: newID(prefix), CustomerID: c.ID, Kind: kind, Amount: Money{amount, c.Balance.Currency},
		BalanceAfter: c.Balance, Reason: reason, BudgetID: budgetID}
	err := tx.QueryRow(ctx, `INSERT INTO reseller.ledger_entry (id, partner_id, customer_id, kind, amount, currency, balance_after, reason, budget_id)
		VALUES ($1, $2, $3, $4, $5::numeric, $6, $7::numeric, $8, $9) RETURNING created_at`,
		e.ID, pid, c.ID, kind, amount.String(), c.Balance.Currency, c.Balance.Value.String(), reason, budgetID).Scan(&e.CreatedAt)
	if err != nil {
		return e, fmt.Errorf("reseller: insert ledger entry: %w", err)
	}
	e.CreatedAt = e.CreatedAt.UTC()
	return e, nil
}
