package recorder_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/recorder"
)

// insertHistory adds n deliveries of endpoint ep1 in state, last changed at updated, each with
// two attempts, under ids prefix-1 … prefix-n.
func insertHistory(t *testing.T, db *testenv.Database, prefix, state string, updated time.Time, n int) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO delivery (delivery_id, event_id, endpoint_id, partner_id, state, attempt_count, created_at, updated_at)
		SELECT $1 || i, 'evt_' || $1 || i, 'ep1', 'p1', $2, 2, $3, $3 FROM generate_series(1, $4) i`,
		prefix+"-", state, updated, n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO delivery_attempt (delivery_id, attempt_no, trigger, started_at)
		SELECT d.delivery_id, a, 'initial', $2 FROM delivery d, generate_series(1, 2) a WHERE d.delivery_id LIKE $1 || '%'`,
		prefix+"-", updated); err != nil {
		t.Fatal(err)
	}
}

// R33: finished deliveries older than the retention go, with their attempts, in batches; live
// deliveries and recent history stay, unless their endpoint was deleted.
func TestExpireHistory(t *testing.T) {
	t.Parallel()
	db := testenv.NewDatabase(t)
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO partner (id) VALUES ('p1');
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example')`); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old, recent := now.Add(-40*24*time.Hour), now.Add(-time.Hour)
	insertHistory(t, db, "old-ok", "succeeded", old, 12000) // more than one batch
	insertHistory(t, db, "old-failed", "failed", old, 3)
	insertHistory(t, db, "old-skipped", "skipped", old, 3)
	insertHistory(t, db, "old-retrying", "retrying", old, 5)
	insertHistory(t, db, "old-pending", "pending", old, 5)
	insertHistory(t, db, "new-ok", "succeeded", recent, 7)
	// Of an endpoint deleted since: nothing will attempt them again.
	insertHistory(t, db, "gone-pending", "pending", old, 4)
	insertHistory(t, db, "gone-recent", "pending", recent, 2)
	if _, err := db.Pool.Exec(context.Background(), `UPDATE delivery SET endpoint_id = 'ep-deleted' WHERE delivery_id LIKE 'gone-%'`); err != nil {
		t.Fatal(err)
	}

	n, err := recorder.ExpireHistory(context.Background(), db.Pool, now.Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 12010 {
		t.Fatalf("expired %d deliveries, want 12010", n)
	}
	for prefix, want := range map[string]int{"old-ok": 0, "old-failed": 0, "old-skipped": 0, "old-retrying": 5, "old-pending": 5, "new-ok": 7,
		"gone-pending": 0, "gone-recent": 2} {
		if got := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM delivery WHERE delivery_id LIKE $1 || '-%'`, prefix); got != want {
			t.Errorf("%s: %d deliveries left, want %d", prefix, got, want)
		}
		if got := testenv.QueryInt(t, db.Pool, `SELECT count(*) FROM delivery_attempt WHERE delivery_id LIKE $1 || '-%'`, prefix); got != 2*want {
			t.Errorf("%s: %d attempts left, want %d", prefix, got, 2*want)
		}
	}
	if n, err := recorder.ExpireHistory(context.Background(), db.Pool, now.Add(-30*24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("a second sweep expired %d (%v), want 0", n, err)
	}
}

// The recorder sweeps by itself: history older than its retention disappears while it runs.
func TestRecorderExpiresHistory(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p1'); INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example')`)
	insertHistory(t, e.DB, "old", "succeeded", time.Now().Add(-2*time.Hour), 10)
	insertHistory(t, e.DB, "new", "succeeded", time.Now(), 10)
	reg := prometheus.NewRegistry()
	cfg := recorder.DefaultConfig()
	cfg.Base = e.Kafka.Base(t, reg)
	cfg.HistoryRetention, cfg.HistorySweepInterval = time.Hour, 50*time.Millisecond
	r, err := recorder.New(cfg, e.DB.Pool)
	if err != nil {
		t.Fatal(err)
	}
	background(t, "recorder", r.Run)
	testenv.WaitValue(t, reg, "hookstream_recorder_deliveries_expired_total", 10, time.Minute)
	if n := testenv.QueryInt(t, e.DB.Pool, `SELECT count(*) FROM delivery`); n != 10 {
		t.Fatalf("%d deliveries left, want the 10 recent ones", n)
	}
}
