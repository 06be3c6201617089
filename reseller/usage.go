package reseller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/outbox"
)

// Budget is a spending limit of a customer (or of one of its keys) over a period. Version
// increases with every change, each usage that counts against it included.
type Budget struct {
	ID          string    `json:"id"`
	CustomerID  string    `json:"customer_id"`
	APIKeyID    *string   `json:"api_key_id"`
	Limit       Money     `json:"limit"`
	Spent       Money     `json:"spent"`
	Percent     string    `json:"percent"`
	Thresholds  []int     `json:"thresholds"`
	PeriodStart time.Time `json:"period_start"`
	PeriodEnd   time.Time `json:"period_end"`
	Version     int64     `json:"version"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// NewBudget is the input of CreateBudget.
type NewBudget struct {
	Limit       Decimal   `json:"limit"`
	Thresholds  []int     `json:"thresholds"` // nil means DefaultThresholds
	APIKeyID    string    `json:"api_key_id"` // empty: every key of the customer
	PeriodStart time.Time `json:"period_start"`
	PeriodEnd   time.Time `json:"period_end"`
}

// Usage is finalized usage of a customer for a period: its cost is debited from the balance and
// counted against every budget of the customer (and of its key) whose period holds the usage's
// start.
type Usage struct {
	ID           string    `json:"id"`
	CustomerID   string    `json:"customer_id"`
	APIKeyID     *string   `json:"api_key_id"`
	PeriodStart  time.Time `json:"period_start"`
	PeriodEnd    time.Time `json:"period_end"`
	Requests     int64     `json:"requests"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	Cost         Money     `json:"cost"`
	CreatedAt    time.Time `json:"created_at"`
}

// NewUsage is the input of RecordUsage.
type NewUsage struct {
	APIKeyID     string    `json:"api_key_id"`
	PeriodStart  time.Time `json:"period_start"`
	PeriodEnd    time.Time `json:"period_end"`
	Requests     int64     `json:"requests"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	Cost         Decimal   `json:"cost"`
}

const budgetColumns = `id, customer_id, api_key_id, limit_amount::text, spent::text, currency, thresholds, period_start, period_end, version, created_at, updated_at`

func scanBudget(row pgx.Row) (Budget, error) {
	var (
		b                      Budget
		limit, spent, currency string
		thresholds             []int32
	)
	if err := row.Scan(&b.ID, &b.CustomerID, &b.APIKeyID, &limit, &spent, &currency, &thresholds, &b.PeriodStart, &b.PeriodEnd, &b.Version, &b.CreatedAt, &b.UpdatedAt); err != nil {
		return b, err
	}
	b.Limit = Money{MustDecimal(limit), currency}
	b.Spent = Money{MustDecimal(spent), currency}
	b.Percent = Percent(b.Spent.Value, b.Limit.Value)
	for _, t := range thresholds {
		b.Thresholds = append(b.Thresholds, int(t))
	}
	b.PeriodStart, b.PeriodEnd = b.PeriodStart.UTC(), b.PeriodEnd.UTC()
	b.CreatedAt, b.UpdatedAt = b.CreatedAt.UTC(), b.UpdatedAt.UTC()
	return b, nil
}

// CreateBudget sets a budget on a customer. It emits nothing: the catalog has no budget.created,
// and the budget's events are its crossings.
func (p *Platform) CreateBudget(ctx context.Context, pid, cid string, in NewBudget) (Budget, error) {
	if in.Limit.Sign() <= 0 {
		return Budget{}, invalidValue("limit: must be positive")
	}
	if in.Thresholds == nil {
		in.Thresholds = DefaultThresholds
	}
	if err := validThresholds(in.Thresholds); err != nil {
		return Budget{}, invalidValue("%v", err)
	}
	if in.PeriodStart.IsZero() || !in.PeriodEnd.After(in.PeriodStart) {
		return Budget{}, invalidValue("period_start and period_end: both required, the end after the start")
	}
	ts := slices.Clone(in.Thresholds)
	slices.Sort(ts)
	ts = slices.Compact(ts)
	var b Budget
	err := p.change(ctx, func(tx pgx.Tx, _ emitFunc) error {
		c, keyID, err := lockCustomerKey(ctx, tx, pid, cid, in.APIKeyID)
		if err != nil {
			return err
		}
		b, err = scanBudget(tx.QueryRow(ctx, `INSERT INTO reseller.budget (id, partner_id, customer_id, api_key_id, limit_amount, currency, thresholds, period_start, period_end)
			VALUES ($1, $2, $3, $4, $5::numeric, $6, $7, $8, $9) RETURNING `+budgetColumns,
			newID("bud"), pid, cid, keyID, in.Limit.String(), c.Balance.Currency, ts, in.PeriodStart, in.PeriodEnd))
		if err != nil {
			return fmt.Errorf("reseller: insert budget: %w", err)
		}
		return nil
	})
	return b, err
}

func keyOfCustomer(ctx context.Context, tx pgx.Tx, pid, cid, kid string) (*string, error) {
	if kid == "" {
		return nil, nil // none named: the budget or usage is the customer's as a whole
	}
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM reseller.api_key WHERE partner_id = $1 AND customer_id = $2 AND id = $3)`, pid, cid, kid).Scan(&ok); err != nil {
		return nil, fmt.Errorf("reseller: look up api key: %w", err)
	}
	if !ok {
		return nil, notFound("api key of this customer")
	}
	return &kid, nil
}

// lockCustomerKey locks the customer (lockCustomer) and checks that the api key kid, when one is
// named, is the customer's (keyOfCustomer).
func lockCustomerKey(ctx context.Context, tx pgx.Tx, pid, cid, kid string) (Customer, *string, error) {
	c, err := lockCustomer(ctx, tx, pid, cid)
	if err != nil {
		return c, nil, err
	}
	keyID, err := keyOfCustomer(ctx, tx, pid, cid, kid)
	return c, keyID, err
}

// Budget returns one of the partner's budgets.
func (p *Platform) Budget(ctx context.Context, pid, bid string) (Budget, error) {
	return queryOne(ctx, p.pool, "budget", scanBudget,
		`SELECT `+budgetColumns+` FROM reseller.budget WHERE partner_id = $1 AND id = $2`, pid, bid)
}

// Budgets lists a customer's budgets.
func (p *Platform) Budgets(ctx context.Context, pid, cid string) ([]Budget, error) {
	if _, err := p.Customer(ctx, pid, cid); err != nil {
		return nil, err
	}
	return queryAll(ctx, p.pool, scanBudget,
		`SELECT `+budgetColumns+` FROM reseller.budget WHERE partner_id = $1 AND customer_id = $2 ORDER BY id`, pid, cid)
}

// lockBudgets locks a customer's budgets matching extra (a condition on $3…), in id order so
// that concurrent changes take the locks in one order. The customer is locked first.
func lockBudgets(ctx context.Context, tx pgx.Tx, pid, cid, extra string, args ...any) ([]Budget, error) {
	bs, err := queryAll(ctx, tx, scanBudget, `SELECT `+budgetColumns+` FROM reseller.budget WHERE partner_id = $1 AND customer_id = $2 `+extra+`
		ORDER BY id FOR NO KEY UPDATE`, append([]any{pid, cid}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("reseller: lock budgets: %w", err)
	}
	return bs, nil
}

// moveSpend changes a locked budget's spend by delta and emits budget.threshold_crossed for
// each threshold the change crosses, lowest first (Crossings, R5).
func moveSpend(ctx context.Context, tx pgx.Tx, emit emitFunc, pid string, b Budget, delta Decimal) (Budget, error) {
	next, err := b.Spent.Value.Add(delta)
	if err != nil {
		return b, invalidValue("the budget's spend would be out of range: %v", err)
	}
	after, err := scanBudget(tx.QueryRow(ctx, `UPDATE reseller.budget SET spent = $3::numeric, version = version + 1, updated_at = now()
		WHERE partner_id = $1 AND id = $2 RETURNING `+budgetColumns, pid, b.ID, next.String()))
	if err != nil {
		return b, fmt.Errorf("reseller: update budget: %w", err)
	}
	for _, c := range Crossings(b.Limit.Value, b.Thresholds, b.Spent.Value, next) {
		data := map[string]any{
			"budget_id": b.ID, "customer_id": b.CustomerID, "threshold_percent": c.Threshold,
			"previous_percent": c.PreviousPercent, "current_percent": c.CurrentPercent,
			"spent": after.Spent, "limit": after.Limit, "period_start": b.PeriodStart, "period_end": b.PeriodEnd,
		}
		if b.APIKeyID != nil {
			data["api_key_id"] = *b.APIKeyID
		}
		if err := emit(pid, "budget.threshold_crossed", outbox.Subject{Type: "budget", ID: b.ID}, data); err != nil {
			return b, err
		}
	}
	return after, nil
}

// RecordUsage records finalized usage: usage.finalized, the crossings of every budget it counts
// against, then balance.low if the debit takes the balance below its floor. All in one
// transaction under the customer's lock, so concurrent usage of one customer is applied one
// record after the other and each crossing fires once.
func (p *Platform) RecordUsage(ctx context.Context, pid, cid string, in NewUsage) (Usage, error) {
	if in.Cost.Sign() < 0 {
		return Usage{}, invalidValue("cost: must not be negative (corrections are adjustments)")
	}
	if in.Requests < 0 || in.InputTokens < 0 || in.OutputTokens < 0 {
		return Usage{}, invalidValue("requests, input_tokens and output_tokens: must not be negative")
	}
	if in.PeriodStart.IsZero() || in.PeriodEnd.Before(in.PeriodStart) {
		return Usage{}, invalidValue("period_start and period_end: both required, the end not before the start")
	}
	var u Usage
	err := p.change(ctx, func(tx pgx.Tx, emit emitFunc) error {
		c, keyID, err := lockCustomerKey(ctx, tx, pid, cid, in.APIKeyID)
		if err != nil {
			return err
		}
		budgets, err := lockBudgets(ctx, tx, pid, cid, `AND (api_key_id IS NULL OR api_key_id = $3) AND period_start <= $4 AND $4 < period_end`,
			keyID, in.PeriodStart)
		if err != nil {
			return err
		}
		u = Usage{ID: newID("use"), CustomerID: cid, APIKeyID: keyID, PeriodStart: in.PeriodStart.UTC().Truncate(time.Microsecond),
			PeriodEnd: in.PeriodEnd.UTC().Truncate(time.Microsecond), Requests: in.Requests, InputTokens: in.InputTokens,
			OutputTokens: in.OutputTokens, Cost: Money{in.Cost, c.Balance.Currency}}
		_, err = moveBalance(ctx, tx, emit, pid, c, in.Cost.Neg(), func(Customer) error {
			if err := tx.QueryRow(ctx, `INSERT INTO reseller.usage_record (id, partner_id, customer_id, api_key_id, period_start, period_end, requests, input_tokens, output_tokens, cost, currency)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::numeric, $11) RETURNING created_at`,
				u.ID, pid, cid, keyID, u.PeriodStart, u.PeriodEnd, u.Requests, u.InputTokens, u.OutputTokens, in.Cost.String(), u.Cost.Currency).Scan(&u.CreatedAt); err != nil {
				return fmt.Errorf("reseller: insert usage: %w", err)
			}
			u.CreatedAt = u.CreatedAt.UTC()
			data := map[string]any{"usage_id": u.ID, "customer_id": cid, "period_start": u.PeriodStart, "period_end": u.PeriodEnd,
				"requests": u.Requests, "input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
				// Version 2 (writtenVersions): the cost in millionths, which Decimal holds exactly.
				"cost": map[string]any{"amount_micros": u.Cost.Value.micros, "currency": u.Cost.Currency}}
			if keyID != nil {
				data["api_key_id"] = *keyID
			}
			if err := emit(pid, "usage.finalized", outbox.Subject{Type: "usage", ID: u.ID}, data); err != nil {
				return err
			}
			for _, b := range budgets {
				if _, err := moveSpend(ctx, tx, emit, pid, b, in.Cost); err != nil {
					return err
				}
			}
			return nil
		})
		return err
	})
	return u, err
}
