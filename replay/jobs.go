package replay

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Job states. Succeeded, failed and canceled are final.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCanceled  = "canceled"
)

// finalStates are the states a job ends in: hookstream_admin_replay_jobs_finished_total exports
// each at 0 from the start, so HookstreamReplayJobsFailing sees the first failed job.
var finalStates = []string{JobSucceeded, JobFailed, JobCanceled}

// Job sources, and the state of a log job's filter that keeps the events the endpoint never had
// a delivery for.
const (
	SourceHistory = "history"
	SourceLog     = "log"
	StateMissing  = "missing"
)

// ErrJobNotFound: the partner has no replay job by that id.
var ErrJobNotFound = errors.New("replay: job not found")

// ErrJobFinished: the job has succeeded or failed, so it can no longer be canceled.
var ErrJobFinished = errors.New("replay: job finished")

// Filter selects what a job replays: the deliveries (history) or events (log) in [Since,
// Until), and for State only those whose delivery is in that state (StateMissing: that have
// none, log jobs only). It is stored as JSON in replay_job.filter, and shown so by the admin API.
type Filter struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	State string    `json:"state,omitempty"`
}

// Job is a replay job as replay_job records it.
type Job struct {
	ID, PartnerID, EndpointID, Source string
	Filter                            Filter
	State                             string
	// Total, Done and Failed count the deliveries or events the job went through, replayed,
	// and could not replay; Error is the last reason one could not be replayed, or why the job
	// failed.
	Total, Done, Failed  int
	Error                string
	CreatedAt, UpdatedAt time.Time
	StartedAt            *time.Time
	FinishedAt           *time.Time
	RequestedBy          string
}

// NewJob is a job to queue: its id (made by the caller), whose endpoint, from which source,
// what it selects, and who asked.
type NewJob struct {
	ID, PartnerID, EndpointID, Source string
	Filter                            Filter
	RequestedBy                       string
}

// Queue writes a queued job in tx, so the caller's checks (the partner's quota) and the job
// commit together. Call Notify after the commit to have it claimed at once.
func Queue(ctx context.Context, tx pgx.Tx, j NewJob) error {
	fj, _ := json.Marshal(j.Filter)
	_, err := tx.Exec(ctx, `INSERT INTO replay_job (id, partner_id, endpoint_id, source, filter, requested_by)
		VALUES ($1, $2, $3, $4, $5, $6)`, j.ID, j.PartnerID, j.EndpointID, j.Source, fj, j.RequestedBy)
	return err
}

const jobColumns = `id, partner_id, endpoint_id, source, filter, state, total, done, failed,
	error, created_at, updated_at, started_at, finished_at, requested_by`

func scanJob(row pgx.Row) (Job, error) {
	var (
		j                   Job
		fj                  []byte
		total, done, failed int32
	)
	err := row.Scan(&j.ID, &j.PartnerID, &j.EndpointID, &j.Source, &fj, &j.State, &total, &done, &failed,
		&j.Error, &j.CreatedAt, &j.UpdatedAt, &j.StartedAt, &j.FinishedAt, &j.RequestedBy)
	if err == nil {
		_ = json.Unmarshal(fj, &j.Filter)
	}
	j.Total, j.Done, j.Failed = int(total), int(done), int(failed)
	return j, err
}

// Job reads the partner's job id; ErrJobNotFound when the partner has none by that id.
func (e *Engine) Job(ctx context.Context, pid, id string) (Job, error) {
	j, err := scanJob(e.pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM replay_job WHERE id = $1 AND partner_id = $2`, id, pid))
	if errors.Is(err, pgx.ErrNoRows) {
		return Job{}, ErrJobNotFound
	}
	return j, err
}

// JobQuery selects a partner's jobs: of one endpoint and in one state when set, with ids
// before Before when set, at most Limit.
type JobQuery struct {
	EndpointID, State, Before string
	Limit                     int
}

// Jobs lists the partner's jobs that q selects, newest first.
func (e *Engine) Jobs(ctx context.Context, pid string, q JobQuery) ([]Job, error) {
	// Job ids are ULIDs: their order is their creation order.
	rows, err := e.pool.Query(ctx, `SELECT `+jobColumns+` FROM replay_job
		WHERE partner_id = $1 AND ($2 = '' OR endpoint_id = $2) AND ($3 = '' OR state = $3) AND ($4 = '' OR id < $4)
		ORDER BY id DESC LIMIT $5`, pid, q.EndpointID, q.State, q.Before, q.Limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Job, error) { return scanJob(row) })
}

// Cancel stops a queued or running job: it is canceled at once, and a runner holding it stops
// before its next batch (its progress save finds the job no longer running), so at most the
// batch in flight is still replayed. Canceling a canceled job changes nothing. It returns the
// job as it then is; ErrJobNotFound, or ErrJobFinished with the job when it had finished.
func (e *Engine) Cancel(ctx context.Context, pid, id, by string) (Job, error) {
	j, err := scanJob(e.pool.QueryRow(ctx, `UPDATE replay_job SET state = 'canceled', lease_owner = NULL, lease_until = NULL,
			error = 'canceled by ' || $3::text, finished_at = now(), updated_at = now()
		WHERE id = $1 AND partner_id = $2 AND state IN ('queued', 'running')
		RETURNING `+jobColumns, id, pid, by))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, err := e.Job(ctx, pid, id)
		if err == nil && cur.State != JobCanceled {
			err = ErrJobFinished
		}
		return cur, err
	}
	if err != nil {
		return Job{}, err
	}
	e.metrics.jobsDone.WithLabelValues(JobCanceled).Inc()
	e.log.Info("replay job canceled", "partner_id", pid, "job_id", id, "by", by)
	return j, nil
}

// historyWhere selects a history job's deliveries: $1 endpoint, $2 partner, $3 since,
// $4 until, $5 state. Test deliveries (R25) are left out.
const historyWhere = `endpoint_id = $1 AND partner_id = $2 AND created_at >= $3 AND created_at < $4
	AND ($5 = '' OR state = $5) AND event_type <> '` + testEventType + `'`

// testEventType is the type of the admin API's test events, which are never replayed.
const testEventType = "webhook.test"

// CountHistory counts the deliveries a history job of filter f at the partner's endpoint eid
// replays.
func (e *Engine) CountHistory(ctx context.Context, pid, eid string, f Filter) (int, error) {
	var n int
	err := e.pool.QueryRow(ctx, `SELECT count(*) FROM delivery WHERE `+historyWhere, eid, pid, f.Since, f.Until, f.State).Scan(&n)
	return n, err
}
