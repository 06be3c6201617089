package reseller

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// Config configures a Platform.
type Config struct {
	// Catalog checks every event before it is written; nil means the published catalog
	// (eventcatalog.Published).
	Catalog outbox.Catalog
	// Logger gets the platform's faults; nil discards them.
	Logger *slog.Logger
	// CursorKey signs export cursors (HMAC-SHA256), so a cursor the platform did not issue is
	// refused. Every instance serving the same partners must hold the same key for their
	// cursors to work across them and across restarts: DeriveCursorKey makes one from a
	// deployment secret. Nil: a random key, valid for the life of the process.
	CursorKey []byte
}

// Platform is the reseller's control plane over a PostgreSQL database migrated by hookstream
// (migration 0013 holds its tables). Every method takes the partner the caller acts for and
// touches only that partner's rows. It is safe for concurrent use.
type Platform struct {
	pool      *pgxpool.Pool
	writer    outbox.Writer
	log       *slog.Logger
	cursorKey []byte
}

// New returns the platform over pool.
func New(pool *pgxpool.Pool, cfg Config) *Platform {
	if cfg.Catalog == nil {
		cfg.Catalog = eventcatalog.Published()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.CursorKey) == 0 {
		cfg.CursorKey = make([]byte, 32)
		_, _ = rand.Read(cfg.CursorKey) // crypto/rand.Read never fails (Go 1.24)
	}
	return &Platform{pool: pool, writer: outbox.Writer{Catalog: cfg.Catalog}, log: cfg.Logger, cursorKey: cfg.CursorKey}
}

// change runs fn in one transaction with an emit that appends an event to the outbox in the
// same transaction (R9). Any error, the catalog's refusal of an event included, rolls back the
// state change and every event before it.
func (p *Platform) change(ctx context.Context, fn func(tx pgx.Tx, emit emitFunc) error) error {
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		now := time.Now().UTC().Truncate(time.Microsecond)
		emit := func(pid, typ string, subject outbox.Subject, data any) error {
			b, err := json.Marshal(data)
			if err != nil {
				return fmt.Errorf("reseller: encode %s: %w", typ, err)
			}
			ev := outbox.Event{PartnerID: pid, Type: typ, Subject: subject, Data: b, OccurredAt: now, SchemaVersion: writtenVersions[typ]}
			if _, err := p.writer.Append(ctx, tx, ev); err != nil {
				return fmt.Errorf("reseller: event %s: %w", typ, err)
			}
			return nil
		}
		return fn(tx, emit)
	})
}

type emitFunc func(pid, typ string, subject outbox.Subject, data any) error

// writtenVersions are the schema versions the platform writes, by type; a type not named here
// is written at version 1. The platform names them itself rather than follow the catalog's
// newest, because the data it builds has one version's shape: a new version of a type is
// adopted here, with its data, on purpose. Endpoints pinned to an older version receive the
// event converted (R14).
var writtenVersions = map[string]int{
	"usage.finalized": 2, // cost as integer micros
}

// changeCustomer is change with the partner's live customer cid locked first (lockCustomer), so
// the changes of one customer, its balance and budgets, happen one at a time.
func (p *Platform) changeCustomer(ctx context.Context, pid, cid string, fn func(tx pgx.Tx, emit emitFunc, c Customer) error) error {
	return p.change(ctx, func(tx pgx.Tx, emit emitFunc) error {
		c, err := lockCustomer(ctx, tx, pid, cid)
		if err != nil {
			return err
		}
		return fn(tx, emit, c)
	})
}

// querier is what reads need: the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// queryOne reads the one row of a query, scanned by scan; no row is notFound(what).
func queryOne[T any](ctx context.Context, q querier, what string, scan func(pgx.Row) (T, error), sql string, args ...any) (T, error) {
	v, err := scan(q.QueryRow(ctx, sql, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return v, notFound(what)
	}
	return v, err
}

// queryAll reads every row of a query, scanned by scan.
func queryAll[T any](ctx context.Context, q querier, scan func(pgx.Row) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}

func newID(prefix string) string { return prefix + "_" + ulid.Make().String() }

// ---- customers ----

// Customer is a customer's state. Version increases with every change of the customer,
// its balance included (R30).
type Customer struct {
	ID                  string    `json:"id"`
	Name                string    `json:"name"`
	Status              string    `json:"status"`
	Balance             Money     `json:"balance"`
	LowBalanceThreshold *Money    `json:"low_balance_threshold"`
	Version             int64     `json:"version"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
}

// NewCustomer is the input of CreateCustomer.
type NewCustomer struct {
	Name     string `json:"name"`
	Currency string `json:"currency"`
	// LowBalanceThreshold is the floor of balance.low; nil means no balance.low.
	LowBalanceThreshold *Decimal `json:"low_balance_threshold"`
}

// CustomerChange is the input of UpdateCustomer: nil fields stay as they are.
type CustomerChange struct {
	Name                *string  `json:"name"`
	Status              *string  `json:"status"` // active or suspended
	LowBalanceThreshold *Decimal `json:"low_balance_threshold"`
}

const customerColumns = `id, name, status, currency, balance::text, low_balance_threshold::text, version, created_at, updated_at`

func scanCustomer(row pgx.Row) (Customer, error) {
	var (
		c             Customer
		currency, bal string
		threshold     *string
	)
	if err := row.Scan(&c.ID, &c.Name, &c.Status, &currency, &bal, &threshold, &c.Version, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return c, err
	}
	c.Balance = Money{Value: MustDecimal(bal), Currency: currency}
	if threshold != nil {
		c.LowBalanceThreshold = &Money{Value: MustDecimal(*threshold), Currency: currency}
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

func checkName(name string) error {
	if name == "" || len(name) > 200 {
		return invalidValue("name: 1 to 200 characters")
	}
	return nil
}

func checkThreshold(d *Decimal) error {
	if d != nil && d.Sign() < 0 {
		return invalidValue("low_balance_threshold: must not be negative")
	}
	return nil
}

// CreateCustomer creates a customer with a zero balance and emits customer.created.
func (p *Platform) CreateCustomer(ctx context.Context, pid string, in NewCustomer) (Customer, error) {
	if err := checkName(in.Name); err != nil {
		return Customer{}, err
	}
	if !currencyPattern.MatchString(in.Currency) {
		return Customer{}, invalidValue("currency: an ISO 4217 code like USD")
	}
	if err := checkThreshold(in.LowBalanceThreshold); err != nil {
		return Customer{}, err
	}
	var c Customer
	err := p.change(ctx, func(tx pgx.Tx, emit emitFunc) error {
		var err error
		c, err = scanCustomer(tx.QueryRow(ctx, `INSERT INTO reseller.customer (id, partner_id, name, status, currency, low_balance_threshold)
			VALUES ($1, $2, $3, 'active', $4, $5::numeric) RETURNING `+customerColumns,
			newID("cus"), pid, in.Name, in.Currency, decimalArg(in.LowBalanceThreshold)))
		if err != nil {
			return fmt.Errorf("reseller: insert customer: %w", err)
		}
		return emit(pid, "customer.created", outbox.Subject{Type: "customer", ID: c.ID},
			map[string]any{"customer_id": c.ID, "status": c.Status, "created_at": c.CreatedAt})
	})
	return c, err
}

// Customer returns one of the partner's customers.
func (p *Platform) Customer(ctx context.Context, pid, cid string) (Customer, error) {
	return queryOne(ctx, p.pool, "customer", scanCustomer,
		`SELECT `+customerColumns+` FROM reseller.customer WHERE partner_id = $1 AND id = $2`, pid, cid)
}

// Customers lists the partner's customers by id after the given one.
func (p *Platform) Customers(ctx context.Context, pid, after string, limit int) ([]Customer, error) {
	return queryAll(ctx, p.pool, scanCustomer, `SELECT `+customerColumns+` FROM reseller.customer
		WHERE partner_id = $1 AND id > $2 ORDER BY id LIMIT $3`, pid, after, limit)
}

// lockCustomer reads a live customer of the partner under a row lock: every change of its
// balance and budgets is serialised here.
func lockCustomer(ctx context.Context, tx pgx.Tx, pid, cid string) (Customer, error) {
	c, err := scanCustomer(tx.QueryRow(ctx, `SELECT `+customerColumns+` FROM reseller.customer
		WHERE partner_id = $1 AND id = $2 FOR NO KEY UPDATE`, pid, cid))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, notFound("customer")
	}
	if err != nil {
		return c, fmt.Errorf("reseller: lock customer: %w", err)
	}
	if c.Status == "deleted" {
		return c, conflict("customer %s is deleted", cid)
	}
	return c, nil
}

// UpdateCustomer changes a customer and emits customer.updated naming the changed fields.
func (p *Platform) UpdateCustomer(ctx context.Context, pid, cid string, in CustomerChange) (Customer, error) {
	if in.Name != nil {
		if err := checkName(*in.Name); err != nil {
			return Customer{}, err
		}
	}
	if in.Status != nil && *in.Status != "active" && *in.Status != "suspended" {
		return Customer{}, invalidValue("status: active or suspended (DELETE the customer to delete it)")
	}
	if err := checkThreshold(in.LowBalanceThreshold); err != nil {
		return Customer{}, err
	}
	var c Customer
	err := p.changeCustomer(ctx, pid, cid, func(tx pgx.Tx, emit emitFunc, old Customer) error {
		name, status, threshold := old.Name, old.Status, (*Decimal)(nil)
		if old.LowBalanceThreshold != nil {
			threshold = &old.LowBalanceThreshold.Value
		}
		var changed []string
		if in.Name != nil && *in.Name != name {
			name, changed = *in.Name, append(changed, "name")
		}
		if in.Status != nil && *in.Status != status {
			status, changed = *in.Status, append(changed, "status")
		}
		if in.LowBalanceThreshold != nil && (threshold == nil || threshold.Cmp(*in.LowBalanceThreshold) != 0) {
			threshold, changed = in.LowBalanceThreshold, append(changed, "low_balance_threshold")
		}
		if len(changed) == 0 {
			c = old
			return nil
		}
		var err error
		c, err = scanCustomer(tx.QueryRow(ctx, `UPDATE reseller.customer
			SET name = $3, status = $4, low_balance_threshold = $5::numeric, version = version + 1, updated_at = now()
			WHERE partner_id = $1 AND id = $2 RETURNING `+customerColumns, pid, cid, name, status, decimalArg(threshold)))
		if err != nil {
			return fmt.Errorf("reseller: update customer: %w", err)
		}
		return emit(pid, "customer.updated", outbox.Subject{Type: "customer", ID: cid},
			map[string]any{"customer_id": cid, "changed": changed, "version": c.Version})
	})
	return c, err
}

// DeleteCustomer marks a customer deleted (its ledger and usage stay for the export), revokes
// nothing else, and emits customer.deleted. The customer stays readable with status deleted.
func (p *Platform) DeleteCustomer(ctx context.Context, pid, cid string) (Customer, error) {
	var c Customer
	err := p.changeCustomer(ctx, pid, cid, func(tx pgx.Tx, emit emitFunc, _ Customer) error {
		var err error
		c, err = scanCustomer(tx.QueryRow(ctx, `UPDATE reseller.customer SET status = 'deleted', version = version + 1, updated_at = now()
			WHERE partner_id = $1 AND id = $2 RETURNING `+customerColumns, pid, cid))
		if err != nil {
			return fmt.Errorf("reseller: delete customer: %w", err)
		}
		return emit(pid, "customer.deleted", outbox.Subject{Type: "customer", ID: cid}, map[string]any{"customer_id": cid})
	})
	return c, err
}

// decimalArg passes an optional decimal as numeric text.
func decimalArg(d *Decimal) any {
	if d == nil {
		return nil
	}
	return d.String()
}
