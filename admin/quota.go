package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Per-partner quotas (Config.Limits). Without them one partner key could create endpoints,
// test events, single replays and full-window replays without end, and take the fanout, the sender and the
// deliveries topic from every other partner. A request over a quota is refused before it
// changes anything: 429 quota_exceeded with error.quota naming the quota, its limit and the
// partner's usage, and Retry-After where waiting is enough. A replay larger than one job may
// replay is 422 replay_too_large instead: waiting never makes it smaller, and clients (Stripe's
// and Svix's libraries among them) retry 429s by themselves.
//
// The quotas bind every request on a partner's routes, the operator token's included: they
// bound what the partner's work takes of the system whoever asks for it, and GET /v1/limits
// never shows a partner over its limit. Operator-only routes (partners, API keys) have none.

// Quota names, as GET /v1/limits and error.quota give them.
const (
	quotaEndpoints        = "endpoints"
	quotaReplayJobs       = "replay_jobs"
	quotaTestEvents       = "test_events_per_minute"
	quotaReplays          = "replays_per_minute"
	quotaReplayDeliveries = "replay_deliveries"
)

// rateWindow is the window of the per-minute quotas (test events, single replays).
const rateWindow = time.Minute

func (a *API) quotaExceeded(name string, limit, usage int, retryAfter time.Duration, format string, args ...any) *apiError {
	a.metrics.quotaRefusals.WithLabelValues(name).Inc()
	return &apiError{Status: http.StatusTooManyRequests, Code: CodeQuotaExceeded, Message: fmt.Sprintf(format, args...),
		Quota: &quotaDetail{Name: name, Limit: limit, Usage: usage}, RetryAfter: retryAfter}
}

// replayTooLarge refuses a replay selecting size deliveries, more than one job may replay.
func (a *API) replayTooLarge(size int) *apiError {
	limit := a.cfg.Limits.ReplayDeliveries
	a.metrics.quotaRefusals.WithLabelValues(quotaReplayDeliveries).Inc()
	return &apiError{Status: http.StatusUnprocessableEntity, Code: CodeReplayTooLarge,
		Message: fmt.Sprintf("the replay selects %d deliveries, more than the %d one replay job may replay (%s): split since/until into smaller ranges or narrow it by state",
			size, limit, quotaReplayDeliveries),
		Quota: &quotaDetail{Name: quotaReplayDeliveries, Limit: limit, Usage: size}}
}

// lockPartner takes the partner's row lock until tx ends, so the quota checks of one partner
// run one at a time: two concurrent creations cannot both see room for one more. FOR NO KEY
// UPDATE leaves the foreign-key checks (FOR KEY SHARE) of rows written for the partner
// meanwhile unblocked.
func lockPartner(ctx context.Context, tx pgx.Tx, pid string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM partner WHERE id = $1 FOR NO KEY UPDATE`, pid).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("partner")
	}
	return err
}

// checkEndpointQuota, inside the transaction that inserts an endpoint of pid, refuses it when
// pid already has Limits.Endpoints.
func (a *API) checkEndpointQuota(ctx context.Context, tx pgx.Tx, pid string) error {
	return a.checkCountQuota(ctx, tx, pid, quotaEndpoints, a.cfg.Limits.Endpoints, countEndpoints, func(n int) string {
		return fmt.Sprintf("partner %s has %d endpoints, the most it may have (%s): delete one it no longer uses, or ask the operator to raise the limit",
			pid, n, quotaEndpoints)
	})
}

// checkReplayJobQuota, inside the transaction that queues a replay job of pid, refuses it when
// pid already has Limits.ReplayJobs queued or running.
func (a *API) checkReplayJobQuota(ctx context.Context, tx pgx.Tx, pid string) error {
	return a.checkCountQuota(ctx, tx, pid, quotaReplayJobs, a.cfg.Limits.ReplayJobs, countOpenJobs, func(n int) string {
		return fmt.Sprintf("partner %s has %d replay jobs queued or running, the most it may have at once (%s): start this one after one of them finished (GET /v1/partners/%s/replay-jobs/{id})",
			pid, n, quotaReplayJobs, pid)
	})
}

// checkCountQuota, inside the transaction that adds one of what count counts of pid, locks the
// partner (lockPartner) and refuses the addition, as refusal says for pid's count n, when pid
// already has limit of them. No Retry-After: when one of them goes away is not known.
func (a *API) checkCountQuota(ctx context.Context, tx pgx.Tx, pid, name string, limit int,
	count func(context.Context, querier, string) (int, error), refusal func(n int) string) error {
	if err := lockPartner(ctx, tx, pid); err != nil {
		return err
	}
	n, err := count(ctx, tx, pid)
	if err != nil {
		return err
	}
	if n >= limit {
		return a.quotaExceeded(name, limit, n, 0, "%s", refusal(n))
	}
	return nil
}

func countEndpoints(ctx context.Context, q querier, pid string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM endpoint WHERE partner_id = $1`, pid).Scan(&n)
	return n, err
}

func countOpenJobs(ctx context.Context, q querier, pid string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM replay_job WHERE partner_id = $1 AND state IN ('queued', 'running')`, pid).Scan(&n)
	return n, err
}

// rateLog is a per-minute quota (test events, single replays): per partner, the times of what
// it took within the last rateWindow (a sliding window), kept by this process only. Several
// admin processes behind one address each allow the limit; it bounds a flood, not an exact
// count. Memory is at most the limit's worth of times per partner active in the last minute.
type rateLog struct {
	mu    sync.Mutex
	limit int
	sent  map[string][]time.Time // oldest first, never more than limit
	now   func() time.Time       // time.Now; tests move it
}

func newRateLog(limit int) *rateLog {
	return &rateLog{limit: limit, sent: map[string][]time.Time{}, now: time.Now}
}

// take records one use by pid, or refuses it with the wait until the oldest use in the window
// leaves it. used is pid's count within the window, this one included when taken.
func (l *rateLog) take(pid string) (at time.Time, used int, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	ts := l.recent(pid, now)
	if len(ts) >= l.limit {
		return time.Time{}, len(ts), ts[0].Add(rateWindow).Sub(now)
	}
	l.sent[pid] = append(ts, now)
	return now, len(ts) + 1, 0
}

// state is pid's count of uses within the window and the wait until the oldest of them leaves
// it (zero when there is none): when one more use becomes available.
func (l *rateLog) state(pid string) (used int, reset time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	ts := l.recent(pid, now)
	if len(ts) == 0 {
		return 0, 0
	}
	return len(ts), ts[0].Add(rateWindow).Sub(now)
}

// Rate-limit headers (the IETF httpapi draft's names) on every answer of a route bound by a
// per-minute quota, once the caller is authorized for the partner: its limit, what remains of
// it and the seconds until one more use is available (0: now), so clients pace themselves
// before a 429.
const (
	RateLimitLimitHeader     = "RateLimit-Limit"
	RateLimitRemainingHeader = "RateLimit-Remaining"
	RateLimitResetHeader     = "RateLimit-Reset"
)

// rateQuotas are the routes bound by a per-minute quota, with it.
func (a *API) rateQuotas() map[string]*rateLog {
	return map[string]*rateLog{
		"POST /v1/partners/{pid}/endpoints/{eid}/test":    a.testEvents,
		"POST /v1/operator/endpoints/{eid}/test":          a.testEvents,
		"POST /v1/partners/{pid}/deliveries/{did}/replay": a.replaysRate,
		"POST /v1/operator/deliveries/{did}/replay":       a.replaysRate,
	}
}

// rateHeaders states l for pid in h (RateLimit-*), as it is now.
func rateHeaders(h http.Header, l *rateLog, pid string) {
	used, reset := l.state(pid)
	h.Set(RateLimitLimitHeader, strconv.Itoa(l.limit))
	h.Set(RateLimitRemainingHeader, strconv.Itoa(max(l.limit-used, 0)))
	h.Set(RateLimitResetHeader, strconv.FormatInt(retrySeconds(reset), 10))
}

// refund takes back the use taken at `at`, whose delivery record was never produced.
func (l *rateLog) refund(pid string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.sent[pid]
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Equal(at) {
			l.sent[pid] = append(ts[:i:i], ts[i+1:]...)
			break
		}
	}
	if len(l.sent[pid]) == 0 {
		delete(l.sent, pid)
	}
}

// usage is pid's count of uses within the window.
func (l *rateLog) usage(pid string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recent(pid, l.now()))
}

// sweep forgets the partners with no use in the window.
func (l *rateLog) sweep() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for pid := range l.sent {
		l.recent(pid, now)
	}
}

// recent drops pid's uses that left the window and returns the others; l.mu is held.
func (l *rateLog) recent(pid string, now time.Time) []time.Time {
	ts := l.sent[pid]
	cut := now.Add(-rateWindow)
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.sent, pid)
		return nil
	}
	l.sent[pid] = ts
	return ts
}

// retrySeconds is a wait as the whole seconds Retry-After states, rounded up.
func retrySeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
