package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/internal/records"
)

// Bulk replays (R24) run as jobs recorded in replay_job: state, counts and position live in
// PostgreSQL and are written after every step, so a job survives a restart of the API. A job
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
// Size (Limits.ReplayDeliveries): a history job whose selection is larger is refused when it is
// requested (422 replay_too_large) and, should it have grown since, fails when it starts; a log
// job stops and fails once it went through the limit, naming the commit time to start the next
// job from. A partner has at most Limits.ReplayJobs queued or running (quota.go).
//
// Whatever the source, nothing makes a new event id: each replay is a new attempt of the (event,
// endpoint) delivery, numbered as nextAttempt describes.

// Job states.
const (
	jobQueued    = "queued"
	jobRunning   = "running"
	jobSucceeded = "succeeded"
	jobFailed    = "failed"
)

const (
	sourceHistory = "history"
	sourceLog     = "log"
	stateMissing  = "missing"
)

type jobFilter struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	State string    `json:"state,omitempty"`
}

type replayJobRequest struct {
	Since  string `json:"since"`
	Until  string `json:"until"`
	State  string `json:"state"`
	Source string `json:"source"`
}

type jobAccepted struct {
	JobID string `json:"job_id"`
	State string `json:"state"`
}

// createReplayJob queues a bulk replay of one endpoint: 202 {"job_id"}.
func (a *API) createReplayJob(w http.ResponseWriter, r *http.Request, c caller) error {
	pid, eid := r.PathValue("pid"), r.PathValue("eid")
	if !validID(endpointIDPrefix, eid) {
		return notFound("endpoint")
	}
	var req replayJobRequest
	if e := decodeBody(r, &req, true); e != nil {
		return e
	}
	now := time.Now().UTC()
	var (
		p      problems
		filter jobFilter
	)
	if req.Source == "" {
		req.Source = sourceHistory
	}
	if req.Source != sourceHistory && req.Source != sourceLog {
		p.add("source", `must be "history" (deliveries in the history) or "log" (events in the event log)`)
	}
	if req.Since == "" {
		p.add("since", "is required: an RFC 3339 time")
	} else if t, err := parseTime(req.Since); err != nil {
		p.add("since", "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
	} else {
		filter.Since = t
	}
	filter.Until = now
	if req.Until != "" {
		if t, err := parseTime(req.Until); err != nil {
			p.add("until", "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
		} else if t.Before(now) {
			filter.Until = t
		}
	}
	if !filter.Since.IsZero() {
		if filter.Since.Before(now.Add(-a.cfg.ReplayWindow)) {
			p.add("since", "is older than the replay window of %s (GET /v1/limits)", a.cfg.ReplayWindow)
		} else if !filter.Since.Before(filter.Until) {
			p.add("since", "must be before until (and before now)")
		}
	}
	switch {
	case req.State == "" || validState(req.State):
	case req.State == stateMissing && req.Source == sourceLog:
	default:
		allowed := strings.Join(deliveryStates, ", ")
		if req.Source == sourceLog {
			allowed += ", missing"
		}
		p.add("state", "must be empty or one of %s", allowed)
	}
	filter.State = req.State
	if e := p.err(); e != nil {
		return e
	}
	ep, err := loadEndpoint(r.Context(), a.pool, pid, eid, false)
	if err != nil {
		return err
	}
	if ep.Status != "active" {
		return conflict("endpoint is disabled; enable it before replaying")
	}
	if req.Source == sourceHistory {
		// The selection is known now (until is capped at now), so a job too large for the
		// limit is refused before it exists. A log job's size is only known as it reads the
		// log: it stops at the limit (stepLog).
		n, err := countHistory(r.Context(), a.pool, eid, pid, filter)
		if err != nil {
			return err
		}
		if n > a.cfg.Limits.ReplayDeliveries {
			return a.replayTooLarge(n)
		}
	}
	id := newID(replayJobPrefix)
	fj, _ := json.Marshal(filter)
	err = pgx.BeginFunc(r.Context(), a.pool, func(tx pgx.Tx) error {
		if err := a.checkReplayJobQuota(r.Context(), tx, pid); err != nil {
			return err
		}
		_, err := tx.Exec(r.Context(), `INSERT INTO replay_job (id, partner_id, endpoint_id, source, filter, requested_by)
			VALUES ($1, $2, $3, $4, $5, $6)`, id, pid, eid, req.Source, fj, c.actor())
		return err
	})
	if err != nil {
		return err
	}
	a.notify()
	a.log.Info("replay job queued", "job_id", id, "partner_id", pid, "endpoint_id", eid, "source", req.Source)
	w.Header().Set("Location", "/v1/partners/"+pid+"/replay-jobs/"+id)
	respond(w, http.StatusAccepted, jobAccepted{JobID: id, State: jobQueued})
	return nil
}

func (a *API) notify() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

type jobView struct {
	ID          string     `json:"id"`
	JobID       string     `json:"job_id"`
	PartnerID   string     `json:"partner_id"`
	EndpointID  string     `json:"endpoint_id"`
	Source      string     `json:"source"`
	Filter      jobFilter  `json:"filter"`
	State       string     `json:"state"`
	Total       int        `json:"total"`
	Done        int        `json:"done"`
	Failed      int        `json:"failed"`
	Error       string     `json:"error"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	RequestedBy string     `json:"requested_by"`
}

// getReplayJob reports a job's progress: {"state","total","done","failed",…}. done counts
// replays produced, failed the deliveries or events that could not be replayed (error gives
// the last reason).
func (a *API) getReplayJob(w http.ResponseWriter, r *http.Request, _ caller) error {
	id := r.PathValue("jid")
	if !validID(replayJobPrefix, id) {
		return notFound("replay job")
	}
	var (
		v                   jobView
		fj                  []byte
		total, done, failed int32
	)
	err := a.pool.QueryRow(r.Context(), `SELECT id, partner_id, endpoint_id, source, filter, state, total, done, failed,
		error, created_at, updated_at, started_at, finished_at, requested_by FROM replay_job WHERE id = $1 AND partner_id = $2`,
		id, r.PathValue("pid")).Scan(&v.ID, &v.PartnerID, &v.EndpointID, &v.Source, &fj, &v.State, &total, &done, &failed,
		&v.Error, &v.CreatedAt, &v.UpdatedAt, &v.StartedAt, &v.FinishedAt, &v.RequestedBy)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("replay job")
	}
	if err != nil {
		return err
	}
	_ = json.Unmarshal(fj, &v.Filter)
	v.JobID, v.Total, v.Done, v.Failed = v.ID, int(total), int(done), int(failed)
	respond(w, http.StatusOK, v)
	return nil
}

// job is a claimed replay job as the runner holds it.
type job struct {
	ID, PartnerID, EndpointID, Source string
	Filter                            jobFilter
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
// or died (their lease ran out). At most ReplayWorkers jobs run at once. On return every job
// this process held has been released for the next process to resume.
func (a *API) Run(ctx context.Context) error {
	slots := make(chan struct{}, a.cfg.ReplayWorkers)
	var wg sync.WaitGroup
	defer wg.Wait()
	ticker := time.NewTicker(a.cfg.JobPollInterval)
	defer ticker.Stop()
	for {
	claim:
		for {
			select {
			case slots <- struct{}{}:
			default:
				break claim
			}
			j, err := a.claimJob(ctx)
			if err != nil || j == nil {
				<-slots
				if err != nil && ctx.Err() == nil {
					a.log.Warn("claim replay job", "err", err)
				}
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots; a.notify() }()
				a.runJob(ctx, j)
			}()
		}
		a.refreshJobGauge(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-a.wake:
		}
	}
}

// claimJob leases the oldest job that is queued, or running without a live lease.
func (a *API) claimJob(ctx context.Context) (*job, error) {
	var (
		j                   job
		fj                  []byte
		pos                 string
		total, done, failed int32
	)
	err := a.pool.QueryRow(ctx, `UPDATE replay_job SET state = 'running', lease_owner = $1,
			lease_until = now() + $2 * interval '1 millisecond', started_at = COALESCE(started_at, now()), updated_at = now()
		WHERE id = (SELECT id FROM replay_job WHERE state IN ('queued', 'running')
			AND (lease_until IS NULL OR lease_until < now()) ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING id, partner_id, endpoint_id, source, filter, total, done, failed, position, error`,
		a.instance, a.cfg.JobLease.Milliseconds()).Scan(&j.ID, &j.PartnerID, &j.EndpointID, &j.Source, &fj,
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
		return nil, a.finishJob(ctx, &j, jobFailed, bad.Error())
	}
	a.log.Info("replay job claimed", "job_id", j.ID, "done", j.Done, "resumed", j.Pos.Started)
	return &j, nil
}

// runJob steps a job until it finishes, fails, loses its lease or ctx ends.
func (a *API) runJob(ctx context.Context, j *job) {
	const backoff = 5 * time.Second
	for {
		finished, err := a.stepJob(ctx, j)
		switch {
		case ctx.Err() != nil:
			a.releaseJob(j, 0)
			return
		case errors.Is(err, errLeaseLost):
			a.log.Warn("replay job taken over by another process, or canceled", "job_id", j.ID)
			return
		case errors.Is(err, errJobFailed):
			if err := a.finishJob(ctx, j, jobFailed, strings.TrimPrefix(err.Error(), errJobFailed.Error()+": ")); err != nil {
				a.log.Error("record failed replay job", "job_id", j.ID, "err", err)
			}
			return
		case err != nil:
			// A dependency is down: let the job go for a while; this or another process
			// resumes it from its last position.
			a.log.Warn("replay job step failed; will resume", "job_id", j.ID, "err", err, "retry_in", backoff)
			a.releaseJob(j, backoff)
			return
		case finished:
			if err := a.finishJob(ctx, j, jobSucceeded, j.LastError); err != nil {
				a.log.Error("record finished replay job", "job_id", j.ID, "err", err)
			}
			return
		}
		if a.afterBatch != nil {
			a.afterBatch(j.ID)
		}
	}
}

// stepJob replays the next batch of a job and records the progress (renewing the lease) in
// PostgreSQL. finished is true when nothing is left.
func (a *API) stepJob(ctx context.Context, j *job) (finished bool, err error) {
	ep, err := loadEndpoint(ctx, a.pool, j.PartnerID, j.EndpointID, false)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
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
	case sourceHistory:
		finished, err = a.stepHistory(ctx, j, ep)
	case sourceLog:
		finished, err = a.stepLog(ctx, j, ep)
	default:
		return false, fmt.Errorf("%w: unknown source %q", errJobFailed, j.Source)
	}
	if err != nil {
		return false, err
	}
	return finished, a.saveProgress(ctx, j)
}

// historyWhere selects a history job's deliveries: $1 endpoint, $2 partner, $3 since,
// $4 until, $5 state.
const historyWhere = `endpoint_id = $1 AND partner_id = $2 AND created_at >= $3 AND created_at < $4
	AND ($5 = '' OR state = $5) AND event_type <> '` + testEventType + `'`

// countHistory counts the deliveries a history job of filter f at endpoint eid replays.
func countHistory(ctx context.Context, q querier, eid, pid string, f jobFilter) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM delivery WHERE `+historyWhere, eid, pid, f.Since, f.Until, f.State).Scan(&n)
	return n, err
}

func (a *API) stepHistory(ctx context.Context, j *job, ep endpointView) (bool, error) {
	f := j.Filter
	if !j.Pos.Started {
		n, err := countHistory(ctx, a.pool, j.EndpointID, j.PartnerID, f)
		if err != nil {
			return false, err
		}
		j.Total, j.Pos = n, jobPosition{Started: true, After: f.Since}
		if limit := a.cfg.Limits.ReplayDeliveries; n > limit {
			// Queued before the limit was lowered, or grown by deliveries recorded late.
			return false, fmt.Errorf("%w: the replay selects %d deliveries, more than the %d one replay job may replay (%s): split it into smaller time ranges",
				errJobFailed, n, limit, quotaReplayDeliveries)
		}
		return false, nil
	}
	rows, err := a.pool.Query(ctx, `SELECT delivery_id, event_id, event_type, created_at FROM delivery
		WHERE `+historyWhere+` AND (created_at, delivery_id) > ($6, $7)
		ORDER BY created_at, delivery_id LIMIT $8`,
		j.EndpointID, j.PartnerID, f.Since, f.Until, f.State, j.Pos.After, j.Pos.AfterID, a.cfg.ReplayBatch)
	if err != nil {
		return false, err
	}
	var (
		targets []replayTarget
		last    deliveryCursor
	)
	var (
		did string
		t   replayTarget
	)
	if _, err := pgx.ForEachRow(rows, []any{&did, &t.EventID, &t.EventType, &t.CreatedAt}, func() error {
		targets = append(targets, t)
		last = deliveryCursor{CreatedAt: t.CreatedAt, ID: did}
		return nil
	}); err != nil {
		return false, err
	}
	if len(targets) == 0 {
		j.Total = j.Done + j.Failed // the final count of what the job went through
		return true, nil
	}
	out, err := a.replay(ctx, ep, targets, nil)
	if err != nil {
		return false, err
	}
	j.Done += len(out.Produced)
	j.Failed += out.Failed
	if out.Reason != "" {
		j.LastError = out.Reason
	}
	j.Pos.After, j.Pos.AfterID = last.CreatedAt, last.ID
	j.Total = max(j.Total, j.Done+j.Failed)
	return false, nil
}

func (a *API) stepLog(ctx context.Context, j *job, ep endpointView) (bool, error) {
	f := j.Filter
	if !j.Pos.Started {
		p, n, err := a.events.PartitionOf(ctx, j.PartnerID)
		if err != nil {
			return false, err
		}
		start, end, err := a.events.Bounds(ctx, p)
		if err != nil {
			return false, err
		}
		// Records are written after their commit, so none committed at or after since was
		// written before since (less clock differences).
		from, err := a.events.OffsetAt(ctx, p, f.Since.Add(-eventlog.ClockSlack))
		if err != nil {
			return false, err
		}
		j.Pos = jobPosition{Started: true, Partition: p, Partitions: n, Next: max(from, start), End: end}
		return j.Pos.Next >= j.Pos.End, nil
	}
	if n, err := a.events.Partitions(ctx); err != nil {
		return false, err
	} else if n != j.Pos.Partitions {
		return false, fmt.Errorf("%w: the events topic was repartitioned while the job ran", errJobFailed)
	}
	// room keeps the job within the limit of replayed deliveries; targets only shrink after the
	// scan (the state filter), so the job's total never passes it.
	limit := a.cfg.Limits.ReplayDeliveries
	room := min(a.cfg.ReplayBatch, limit-j.Total)
	if room <= 0 {
		// Queued before the limit was lowered.
		return false, fmt.Errorf("%w: stopped at the limit of %d deliveries one replay job may replay (%s)", errJobFailed, limit, quotaReplayDeliveries)
	}
	release, err := a.events.Acquire(ctx)
	if err != nil {
		return false, err
	}
	refused, err := filterOf(ep)
	if err != nil {
		return false, fmt.Errorf("%w: %v", errJobFailed, err)
	}
	var (
		targets []replayTarget
		known   = map[string]eventlog.Event{}
		scanned int
		size    int
		past    bool
	)
	next, err := a.events.Scan(ctx, j.Pos.Partition, j.Pos.Next, j.Pos.End, func(rec *kgo.Record) bool {
		scanned++
		ev, ok := eventlog.FromRecord(rec)
		switch {
		case !ok || ev.PartnerID != j.PartnerID:
		case ev.CommitTime.After(f.Until.Add(eventlog.ClockSlack)):
			// Commit order is log order: nothing later is in range.
			past = true
			return false
		case ev.CommitTime.Before(f.Since) || !ev.CommitTime.Before(f.Until):
		case !endpoints.Subscribed(ep.EventTypes, ev.Type), refused(ev):
		case !ev.BodyAgrees():
			a.log.Error("events record whose envelope disagrees with its key or headers not replayed",
				"job_id", j.ID, "partition", rec.Partition, "offset", rec.Offset)
		default:
			if _, dup := known[ev.EventID]; !dup {
				known[ev.EventID] = ev
				targets = append(targets, replayTarget{EventID: ev.EventID, EventType: ev.Type})
				size += len(ev.Body)
			}
		}
		return len(targets) < room && scanned < a.cfg.MaxFeedScan && size < maxStepBytes
	})
	release()
	if errors.Is(err, eventlog.ErrOffsetExpired) {
		return false, fmt.Errorf("%w: the events topic's retention removed events the job had not read yet", errJobFailed)
	}
	if err != nil {
		return false, err
	}
	if f.State != "" && len(targets) > 0 {
		if targets, err = a.filterByState(ctx, ep.ID, targets, f.State); err != nil {
			return false, err
		}
	}
	if len(targets) > 0 {
		out, err := a.replay(ctx, ep, targets, known)
		if err != nil {
			return false, err
		}
		j.Total += len(targets)
		j.Done += len(out.Produced)
		j.Failed += out.Failed
		if out.Reason != "" {
			j.LastError = out.Reason
		}
	}
	j.Pos.Next = next
	if past {
		j.Pos.Next = j.Pos.End
	}
	finished := j.Pos.Next >= j.Pos.End
	if !finished && j.Total >= limit {
		last := known[targets[len(targets)-1].EventID].CommitTime.UTC().Format(time.RFC3339Nano)
		return false, fmt.Errorf("%w: stopped at the limit of %d deliveries one replay job may replay (%s) after the events committed up to %s: replay the rest with a job from since=%s",
			errJobFailed, limit, quotaReplayDeliveries, last, last)
	}
	return finished, nil
}

// filterByState keeps the targets whose delivery at endpoint eid is in state ("missing": has
// no delivery at all).
func (a *API) filterByState(ctx context.Context, eid string, targets []replayTarget, state string) ([]replayTarget, error) {
	ids := make([]string, len(targets))
	for i, t := range targets {
		ids[i] = records.DeliveryID(t.EventID, eid)
	}
	rows, err := a.pool.Query(ctx, `SELECT delivery_id, state, created_at FROM delivery WHERE delivery_id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	type row struct {
		state   string
		created time.Time
	}
	have := map[string]row{}
	var (
		id string
		rw row
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &rw.state, &rw.created}, func() error { have[id] = rw; return nil }); err != nil {
		return nil, err
	}
	out := targets[:0]
	for i, t := range targets {
		got, ok := have[ids[i]]
		switch {
		case state == stateMissing && !ok:
			out = append(out, t)
		case state != stateMissing && ok && got.state == state:
			t.CreatedAt = got.created
			out = append(out, t)
		}
	}
	return out, nil
}

// saveProgress records a job's counts and position and renews its lease; errLeaseLost when
// another process holds the job now.
func (a *API) saveProgress(ctx context.Context, j *job) error {
	pos, _ := json.Marshal(j.Pos)
	tag, err := a.pool.Exec(ctx, `UPDATE replay_job SET total = $3, done = $4, failed = $5, position = $6, error = $7,
			lease_until = now() + $8 * interval '1 millisecond', updated_at = now()
		WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
		j.ID, a.instance, j.Total, j.Done, j.Failed, string(pos), j.LastError, a.cfg.JobLease.Milliseconds())
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errLeaseLost
	}
	return nil
}

// releaseJob gives a job back for any process to resume after `after`.
func (a *API) releaseJob(j *job, after time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := a.pool.Exec(ctx, `UPDATE replay_job SET lease_owner = NULL,
			lease_until = CASE WHEN $3 > 0 THEN now() + $3 * interval '1 millisecond' END, updated_at = now()
		WHERE id = $1 AND lease_owner = $2`, j.ID, a.instance, after.Milliseconds())
	if err != nil {
		a.log.Warn("release replay job", "job_id", j.ID, "err", err)
	}
}

// finishJob records a job's final state.
func (a *API) finishJob(ctx context.Context, j *job, state, reason string) error {
	pos, _ := json.Marshal(j.Pos)
	_, err := a.pool.Exec(ctx, `UPDATE replay_job SET state = $3, total = $4, done = $5, failed = $6, position = $7,
			error = $8, lease_owner = NULL, lease_until = NULL, finished_at = now(), updated_at = now()
		WHERE id = $1 AND lease_owner = $2`,
		j.ID, a.instance, state, j.Total, j.Done, j.Failed, string(pos), reason)
	if err != nil {
		return err
	}
	a.metrics.jobsDone.WithLabelValues(state).Inc()
	a.log.Info("replay job finished", "job_id", j.ID, "state", state, "total", j.Total, "done", j.Done, "failed", j.Failed, "error", reason)
	return nil
}

// refreshJobGauge reads how many jobs are queued and running.
func (a *API) refreshJobGauge(ctx context.Context) {
	rows, err := a.pool.Query(ctx, `SELECT state, count(*) FROM replay_job WHERE state IN ('queued', 'running') GROUP BY state`)
	if err != nil {
		return
	}
	counts := map[string]float64{jobQueued: 0, jobRunning: 0}
	var (
		state string
		n     int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { counts[state] = float64(n); return nil }); err != nil {
		return
	}
	for s, n := range counts {
		a.metrics.jobs.WithLabelValues(s).Set(n)
	}
}
