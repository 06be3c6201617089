package testenv

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Querier is what QueryStrings reads through: a *pgx.Conn, a *pgxpool.Pool or a pgx.Tx.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// QueryStrings runs a query of one text column and returns its rows, or fails t.
func QueryStrings(t testing.TB, q Querier, sql string, args ...any) []string {
	t.Helper()
	rows, err := q.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// QueryInt runs a query of one row of one integer column (a count) and returns it, or fails t.
func QueryInt(t testing.TB, q Querier, sql string, args ...any) int {
	t.Helper()
	rows, err := q.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	n, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
