package kafkatxn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
)

// SetCoordinator replaces how r asks for a producer's transaction state.
func SetCoordinator(r *Repairer, fn func(ctx context.Context, pid int64, real func(context.Context, int64) (*kadm.DescribedTransaction, error)) (*kadm.DescribedTransaction, error)) {
	real := r.transactionOf
	r.coordinator = func(ctx context.Context, pid int64) (*kadm.DescribedTransaction, error) { return fn(ctx, pid, real) }
}
