package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/eventtype"
	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// expected returns, per endpoint, the committed events it must receive: the outbox rows of its
// partner whose type it subscribes to. The 410 endpoint is owed nothing (it refuses all).
func expected(ctx context.Context, pool *pgxpool.Pool, eps []*endpoint) (map[*endpoint][]string, int, error) {
	rows, err := pool.Query(ctx, `SELECT event_id, partner_id, type FROM outbox_event`)
	if err != nil {
		return nil, 0, fmt.Errorf("expected deliveries: %w", err)
	}
	out := map[*endpoint][]string{}
	total := 0
	var id, partner, typ string
	_, err = pgx.ForEachRow(rows, []any{&id, &partner, &typ}, func() error {
		for _, ep := range eps {
			if ep.partner == partner && ep.behave != behaveGone && eventtype.MatchesAny(ep.types, typ) {
				out[ep] = append(out[ep], id)
				total++
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("expected deliveries: %w", err)
	}
	return out, total, nil
}

// waitDrained waits until every endpoint has accepted all it must, or timeout passes; it
// returns how many are still missing, and says every 10 s how far it is.
func waitDrained(ctx context.Context, want map[*endpoint][]string, timeout time.Duration, log func(string, ...any)) (int, error) {
	pending := map[*endpoint][]string{}
	for ep, ids := range want {
		pending[ep] = ids
	}
	deadline, note := time.Now().Add(timeout), time.Now().Add(10*time.Second)
	for {
		left := 0
		for ep, ids := range pending {
			pending[ep] = ep.rx.Endpoint(0).Unreceived(ids)
			left += len(pending[ep])
		}
		if left == 0 || time.Now().After(deadline) {
			return left, nil
		}
		if time.Now().After(note) {
			log("drain: %d deliveries still to come", left)
			note = time.Now().Add(10 * time.Second)
		}
		if err := harness.Sleep(ctx, 200*time.Millisecond); err != nil {
			return left, err
		}
	}
}

// waitSettled waits (bounded) until the history has caught up, twice in a row: the recorder has
// consumed every attempt and, with closed, no delivery of an active endpoint is pending or
// retrying.
func waitSettled(ctx context.Context, pool *pgxpool.Pool, brokers []string, group string, closed bool, timeout time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return fmt.Errorf("settle: kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline, calm := time.Now().Add(timeout), 0
	var open int64
	var lag int64 = -1
	for calm < 2 {
		if time.Now().After(deadline) {
			return fmt.Errorf("history not settled after %s: %d deliveries of active endpoints pending or retrying, recorder lag %d", timeout, open, lag)
		}
		if err := harness.Sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
		lag = recorderLag(ctx, adm, group)
		err := pool.QueryRow(ctx, `SELECT count(*) FROM delivery d JOIN endpoint e ON e.id = d.endpoint_id
			WHERE d.state IN ('pending', 'retrying') AND e.status = 'active' AND $1`, closed).Scan(&open)
		if err == nil && open == 0 && lag == 0 {
			calm++
		} else {
			calm = 0
		}
	}
	return nil
}

// recorderLag is the recorder group's total lag; -1 when it cannot be read.
func recorderLag(ctx context.Context, adm *kadm.Client, group string) int64 {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lags, err := adm.Lag(ctx, group)
	if err != nil {
		return -1
	}
	l, ok := lags[group]
	if !ok || l.Error() != nil {
		return -1
	}
	return l.Lag.Total()
}

// groupLags describes every consumer group of the run whose lag is not zero: group → its
// lagging partitions ("chaos.retry.5s/0 195"), for the report of a run that did not drain.
func groupLags(ctx context.Context, brokers []string) map[string][]string {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return map[string][]string{"(kafka)": {err.Error()}}
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return map[string][]string{"(kafka)": {err.Error()}}
	}
	lags, err := adm.Lag(ctx, listed.Groups()...)
	if err != nil {
		return map[string][]string{"(kafka)": {err.Error()}}
	}
	out := map[string][]string{}
	for _, l := range lags.Sorted() {
		for _, m := range l.Lag.Sorted() {
			if m.Lag > 0 {
				owner := "no owner"
				if m.Member != nil {
					owner = m.Member.ClientID
					if m.Member.InstanceID != nil {
						owner = *m.Member.InstanceID
					}
				}
				out[l.Group] = append(out[l.Group], fmt.Sprintf("%s/%d %d (committed %d, end %d, %s)", m.Topic, m.Partition, m.Lag, m.Commit.At, m.End.Offset, owner))
			}
		}
	}
	return out
}
