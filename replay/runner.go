package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/clip"
	"github.com/hookstream/hookstream/outbox"
)

// Bulk replays (R24) run as jobs recorded in replay_job: state, counts and position live in
// PostgreSQL and are written after every step, so a job survives a restart of its process. A job
// is leased by the process running it; a process that stops releases its leases, and one that
// dies loses them after JobLease, so another process (or the restarted one) resumes the job
// from its last recorded position. The step in flight when a process dies is replayed again
// when the job resumes: its receivers may see those events twice, with the same event ids,
// which the delivery contract allows (at least once, R2).
//
// source history: the endpoint's deliveries in PostgreSQL created in [since, until) (until
// capped at the job's creation, so the set does not grow while the job runs), optionally only
// those in one state. Test deliveries are left out. total is counted when the job starts.
//
// source log: every event of the partner committed in [since, until), read from the partner's
// partition of the events topic and matched against the endpoint's current subscription, up to
// the end of the log when the job started. state "missing" keeps the events the endpoint never
// had a delivery for (what it missed while disabled); another state keeps the events whose
// delivery is in it. total grows as matching events are found.
//
// Size (Config.MaxDeliveries): a history job whose selection is larger is refused when it is
// requested (the admin API counts it with CountHistory: 422 replay_too_large) and, should it
// have grown since, fails when it starts; a log job stops and fails once it went through the
// limit, naming the commit time to start the next job from. How many jobs a partner may have
// queued or running is the admin API's quota, checked in the transaction that queues a job.
//
// Whatever the source, nothing makes a new event id: each replay is a new attempt of the (event,
// endpoint) delivery, numbered as nextAttempt describes.

// job is a claimed replay job as the runner holds it.
type job struct {
	ID, PartnerID, EndpointID, Source string
	Filter                            Filter
	Total, Done, Failed               int
	Pos                               jobPosition
	LastError                         string
}

// jobPosition is where a job resumes, stored as JSON in replay_job.position.
type jobPosition struct {
	Started bool `json:"started"`
	// history: the last delivery replayed, in (created_at, delivery_id) order.
	After   time.Time `json:"after,omitzero"`
	AfterID string    `json:"after_id,omitempty"`
	// log: the partition, its count when the job started, the next offset and the end.
	Partition  int32 `json:"p,omitempty"`
	Partitions int32 `json:"n,omitempty"`
	Next       int64 `json:"next,omitempty"`
	End        int64 `json:"end,omitempty"`
}

// maxStepBytes bounds the envelopes one step of a log replay holds in memory.
const maxStepBytes = 16 << 20

// errJobFailed marks a job that cannot go on; other errors are retried.
var errJobFailed = errors.New("replay job cannot continue")

// errLeaseLost: another process took the job over (this one was too slow to renew its lease).
var errLeaseLost = errors.New("replay job lease lost")

// Run executes replay jobs until ctx ends: queued ones, and running ones whose process stopped
// or died (their lease ran out). At most Config.Workers jobs run at once. On return every job
// this process held has been released for the next process to resume.
func (e *Engine) Run(ctx context.Context) error {
	slots := make(chan struct{}, e.cfg.Workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	ticker := time.NewTicker(e.cfg.PollInterval)
	defer ticker.Stop()
	for {
	claim:
		for {
			select {
			case slots <- struct{}{}:
			default:
				break claim
			}
			j, err := e.claimJob(ctx)
			if err != nil || j == nil {
				<-slots
				if err != nil && ctx.Err() == nil {
					e.log.Warn("claim replay job", "err", err)
				}
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots; e.Notify() }()
				e.runJob(ctx, j)
			}()
		}
		e.refreshJobGauge(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-e.wake:
		}
	}
}

// claimJob leases the oldest job that is queued, or running without a live lease.
func (e *Engine) claimJob(ctx context.Context) (*job, error) {
	var (
		j                   job
		fj                  []byte
		pos                 string
		total, done, failed int32
	)
	err := e.pool.QueryRow(ctx, `UPDATE replay_job SET state = 'running', lease_owner = $1,
			lease_until = now() + $2 * interval '1 millisecond', started_at = COALESCE(started_at, now()), updated_at = now()
		WHERE id = (SELECT id FROM replay_job WHERE state IN ('queued', 'running')
			AND (lease_until IS NULL OR lease_until < now()) ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING id, partner_id, endpoint_id, source, filter, total, done, failed, position, error`,
		e.instance, e.cfg.JobLease.Milliseconds()).Scan(&j.ID, &j.PartnerID, &j.EndpointID, &j.Source, &fj,
		&total, &done, &failed, &pos, &j.LastError)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	j.Total, j.Done, j.Failed = int(total), int(done), int(failed)
	var bad error
	if err := json.Unmarshal(fj, &j.Filter); err != nil {
		bad = fmt.Errorf("filter not understood: %w", err)
	} else if pos != "" {
		if err := json.Unmarshal([]byte(pos), &j.Pos); err != nil {
			bad = fmt.Errorf("position not understood: %w", err)
		}
	}
	if bad != nil {
		// Written by an incompatible version: fail it rather than guess.
		return nil, e.finishJob(ctx, &j, JobFailed, bad.Error())
	}
	e.log.Info("replay job claimed", "job_id", j.ID, "done", j.Done, "resumed", j.Pos.Started)
	return &j, nil
}

// runJob steps a job until it finishes, fails, loses its lease or ctx ends.
func (e *Engine) runJob(ctx context.Context, j *job) {
	const backoff = 5 * time.Second
	for {
		finished, err := e.stepJob(ctx, j)
		switch {
		case ctx.Err() != nil:
			e.releaseJob(j, 0)
			return
		case errors.Is(err, errLeaseLost):
			e.log.Warn("replay job taken over by another process, or canceled", "job_id", j.ID)
			return
		case errors.Is(err, errJobFailed):
			if err := e.finishJob(ctx, j, JobFailed, strings.TrimPrefix(err.Error(), errJobFailed.Error()+": ")); err != nil {
				e.log.Error("record failed replay job", "job_id", j.ID, "err", err)
			}
			return
		case err != nil:
			// A dependency is down: let the job go for a while; this or another process
			// resumes it from its last position.
			e.log.Warn("replay job step failed; will resume", "job_id", j.ID, "err", err, "retry_in", backoff)
			e.releaseJob(j, backoff)
			return
		case finished:
			if err := e.finishJob(ctx, j, JobSucceeded, j.LastError); err != nil {
				e.log.Error("record finished replay job", "job_id", j.ID, "err", err)
			}
			return
		}
		if e.afterBatch != nil {
			e.afterBatch(j.ID)
		}
	}
}

// stepJob replays the next batch of a job and records the progress (renewing the lease) in
// PostgreSQL. finished is true when nothing is left.
func (e *Engine) stepJob(ctx context.Context, j *job) (finished bool, err error) {
	ep, err := e.Endpoint(ctx, j.PartnerID, j.EndpointID)
	if errors.Is(err, ErrEndpointGone) {
		return false, fmt.Errorf("%w: the endpoint was deleted", errJobFailed)
	}
	if err != nil {
		return false, err
	}
	if ep.Status != "active" {
		// The sender would refuse every replay; stop rather than fill the history with refusals.
		return false, fmt.Errorf("%w: the endpoint was disabled while the job ran; enable it and start a new replay", errJobFailed)
	}
	switch j.Source {
	case SourceHistory:
		finished, err = e.stepHistory(ctx, j, ep)
	case SourceLog:
		finished, err = e.stepLog(ctx, j, ep)
	default:
		return false, fmt.Errorf("%w: unknown source %q", errJobFailed, j.Source)
	}
	if err != nil {
		return false, err
	}
	return finished, e.saveProgress(ctx, j)
}

// saveProgress records a job's counts and position and renews its lease; errLeaseLost when
// another process holds the job now.
func (e *Engine) saveProgress(ctx context.Context, j *job) error {
	pos, _ := json.Marshal(j.Pos)
	tag, err := e.pool.Exec(ctx, `UPDATE replay_job SET total = $3, done = $4, failed = $5, position = $6, error = $7,
			lease_until = now() + $8 * interval '1 millisecond', updated_at = now()
		WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
		j.ID, e.instance, j.Total, j.Done, j.Failed, string(pos), j.LastError, e.cfg.JobLease.Milliseconds())
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errLeaseLost
	}
	return nil
}

// releaseJob gives a job back for any process to resume after `after`.
func (e *Engine) releaseJob(j *job, after time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := e.pool.Exec(ctx, `UPDATE replay_job SET lease_owner = NULL,
			lease_until = CASE WHEN $3 > 0 THEN now() + $3 * interval '1 millisecond' END, updated_at = now()
		WHERE id = $1 AND lease_owner = $2`, j.ID, e.instance, after.Milliseconds())
	if err != nil {
		e.log.Warn("release replay job", "job_id", j.ID, "err", err)
	}
}

// finishJob records a job's final state and, in the same transaction, the operator's event of
// it (design.md section 8, "Operator events"), so the operator hears of a job once it is final
// and only then.
func (e *Engine) finishJob(ctx context.Context, j *job, state, reason string) error {
	pos, _ := json.Marshal(j.Pos)
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE replay_job SET state = $3, total = $4, done = $5, failed = $6, position = $7,
				error = $8, lease_owner = NULL, lease_until = NULL, finished_at = now(), updated_at = now()
			WHERE id = $1 AND lease_owner = $2`,
			j.ID, e.instance, state, j.Total, j.Done, j.Failed, string(pos), reason)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return appendJobFinished(ctx, tx, j, state, reason)
	})
	if err != nil {
		return err
	}
	e.metrics.jobsDone.WithLabelValues(state).Inc()
	e.log.Info("replay job finished", "job_id", j.ID, "state", state, "total", j.Total, "done", j.Done, "failed", j.Failed, "error", reason)
	return nil
}

// refreshJobGauge reads how many jobs are queued and running.
func (e *Engine) refreshJobGauge(ctx context.Context) {
	rows, err := e.pool.Query(ctx, `SELECT state, count(*) FROM replay_job WHERE state IN ('queued', 'running') GROUP BY state`)
	if err != nil {
		return
	}
	counts := map[string]float64{JobQueued: 0, JobRunning: 0}
	var (
		state string
		n     int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { counts[state] = float64(n); return nil }); err != nil {
		return
	}
	for s, n := range counts {
		e.metrics.jobs.WithLabelValues(s).Set(n)
	}
}

// The operator's events of a finished job (eventcatalog.OperatorReplayJobSucceeded and
// OperatorReplayJobFailed).
const (
	operatorJobSucceeded = "operator.replay_job.succeeded"
	operatorJobFailed    = "operator.replay_job.failed"
)

// jobFinished is the data of the operator's event of a finished job.
type jobFinished struct {
	PartnerID  string `json:"partner_id"`
	EndpointID string `json:"endpoint_id"`
	JobID      string `json:"job_id"`
	State      string `json:"state"`
	Total      int    `json:"total"`
	Done       int    `json:"done"`
	Failed     int    `json:"failed"`
	Error      string `json:"error,omitempty"`
}

// appendJobFinished writes, in tx, the operator's event of j finished in state.
func appendJobFinished(ctx context.Context, tx pgx.Tx, j *job, state, reason string) error {
	typ := operatorJobSucceeded
	if state == JobFailed {
		typ = operatorJobFailed
	}
	b, err := json.Marshal(jobFinished{PartnerID: j.PartnerID, EndpointID: j.EndpointID, JobID: j.ID, State: state,
		Total: j.Total, Done: j.Done, Failed: j.Failed, Error: clip.Bytes(reason, 2048)})
	if err != nil {
		return err
	}
	_, err = outbox.Append(ctx, tx, outbox.Event{PartnerID: outbox.OperatorPartnerID, Type: typ,
		Subject: outbox.Subject{Type: "replay_job", ID: j.ID}, Data: b})
	return err
}
