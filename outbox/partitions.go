package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Querier is what partition maintenance needs: *pgx.Conn, *pgxpool.Pool and pgx.Tx all fit.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// PartitionsAhead is how many UTC days of outbox partitions maintenance keeps ready, today
// included, so a missed maintenance run or two never sends events to the default partition.
const PartitionsAhead = 8

// CreatePartitions makes sure the day partitions of outbox_event exist for the UTC days from the
// day before `now` through PartitionsAhead days after, and returns the ones it created.
func CreatePartitions(ctx context.Context, q Querier, now time.Time) ([]string, error) {
	from := now.UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	return collect(ctx, q, `SELECT outbox_create_partitions($1::date, $2)`, "create", from, PartitionsAhead+1)
}

// DropPartitions drops the day partitions that end at or before `before`, and returns their
// names. Only a caller that knows every event before that time has been published (cdc's
// checkpoint) may call it: a dropped partition's events are gone.
func DropPartitions(ctx context.Context, q Querier, before time.Time) ([]string, error) {
	return collect(ctx, q, `SELECT outbox_drop_partitions($1)`, "drop", before)
}

func collect(ctx context.Context, q Querier, sql, what string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("outbox: %s partitions: %w", what, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("outbox: %s partitions: %w", what, err)
	}
	return names, nil
}
