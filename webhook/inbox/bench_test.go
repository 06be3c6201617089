package inbox_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook/inbox"
)

// BenchmarkServeHTTP measures one verified, validated and committed delivery.
func BenchmarkServeHTTP(b *testing.B) {
	db := newDatabase(b)
	hookstream := newPartner(b)
	in := newInbox(b, db.Pool, hookstream.verifier(b), noProcessing, testConfig(b))
	reqs := make([]*http.Request, b.N)
	for n := range reqs {
		id := outbox.NewEventID()
		reqs[n] = hookstream.request(id, customerUpdated(b, id, 1), time.Now())
	}
	b.ResetTimer()
	for _, r := range reqs {
		rec := httptest.NewRecorder()
		in.ServeHTTP(rec, r)
		if rec.Code != http.StatusNoContent {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// BenchmarkRun measures processing a backlog with one Run loop, per batch size.
func BenchmarkRun(b *testing.B) {
	for _, batch := range []int{1, 10} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			db := newDatabase(b)
			hookstream := newPartner(b)
			cfg := testConfig(b)
			cfg.BatchSize = batch
			done := make(chan struct{}, b.N)
			in := newInbox(b, db.Pool, hookstream.verifier(b), func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
				done <- struct{}{}
				return nil
			}, cfg)
			for range b.N {
				id := outbox.NewEventID()
				if code := hookstream.deliver(in, id, customerUpdated(b, id, 1)); code != http.StatusNoContent {
					b.Fatalf("status %d", code)
				}
			}
			b.ResetTimer()
			testenv.Go(b, "Run", in.Run)
			for range b.N {
				<-done
			}
		})
	}
}
