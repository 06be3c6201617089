package admin

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/replay"
)

// Bulk replays (R24) are jobs of the replay engine (package replay), which runs them in Run and
// records them in replay_job. The API queues a job (202, after checking the request, the
// endpoint, the partner's quota of open jobs and, for a history job, the size of its
// selection), reports its progress, lists and cancels the partner's jobs (search.go).

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
	var req replayJobRequest
	pid, eid, e := endpointRequest(r, &req, true)
	if e != nil {
		return e
	}
	now := time.Now().UTC()
	var (
		p      problems
		filter replay.Filter
	)
	if req.Source == "" {
		req.Source = replay.SourceHistory
	}
	if req.Source != replay.SourceHistory && req.Source != replay.SourceLog {
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
	case req.State == replay.StateMissing && req.Source == replay.SourceLog:
	default:
		allowed := strings.Join(deliveryStates, ", ")
		if req.Source == replay.SourceLog {
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
	if req.Source == replay.SourceHistory {
		// The selection is known now (until is capped at now), so a job too large for the
		// limit is refused before it exists. A log job's size is only known as it reads the
		// log: it stops at the limit.
		n, err := a.replays.CountHistory(r.Context(), pid, eid, filter)
		if err != nil {
			return err
		}
		if n > a.cfg.Limits.ReplayDeliveries {
			return a.replayTooLarge(n)
		}
	}
	id := newID(replayJobPrefix)
	err = pgx.BeginFunc(r.Context(), a.pool, func(tx pgx.Tx) error {
		if err := a.checkReplayJobQuota(r.Context(), tx, pid); err != nil {
			return err
		}
		return replay.Queue(r.Context(), tx, replay.NewJob{ID: id, PartnerID: pid, EndpointID: eid,
			Source: req.Source, Filter: filter, RequestedBy: c.actor()})
	})
	if err != nil {
		return err
	}
	a.replays.Notify()
	a.log.Info("replay job queued", "job_id", id, "partner_id", pid, "endpoint_id", eid, "source", req.Source)
	respondAt(w, http.StatusAccepted, "/v1/partners/"+pid+"/replay-jobs/"+id, jobAccepted{JobID: id, State: replay.JobQueued})
	return nil
}

type jobView struct {
	ID          string     `json:"id"`
	JobID       string     `json:"job_id"`
	PartnerID   string     `json:"partner_id"`
	EndpointID  string     `json:"endpoint_id"`
	Source      string     `json:"source"`
	Filter      filterView `json:"filter"`
	State       string     `json:"state"`
	Total       int        `json:"total"`
	Done        int        `json:"done"`
	Failed      int        `json:"failed"`
	Error       string     `json:"error"`
	CreatedAt   timestamp  `json:"created_at"`
	UpdatedAt   timestamp  `json:"updated_at"`
	StartedAt   *timestamp `json:"started_at"`
	FinishedAt  *timestamp `json:"finished_at"`
	RequestedBy string     `json:"requested_by"`
}

// filterView is a job's replay.Filter as the API shows it.
type filterView struct {
	Since timestamp `json:"since"`
	Until timestamp `json:"until"`
	State string    `json:"state,omitempty"`
}

// viewJob is a job as the API shows it.
func viewJob(j replay.Job) jobView {
	return jobView{ID: j.ID, JobID: j.ID, PartnerID: j.PartnerID, EndpointID: j.EndpointID, Source: j.Source,
		Filter: filterView{Since: stamp(j.Filter.Since), Until: stamp(j.Filter.Until), State: j.Filter.State}, State: j.State,
		Total: j.Total, Done: j.Done, Failed: j.Failed, Error: j.Error,
		CreatedAt: stamp(j.CreatedAt), UpdatedAt: stamp(j.UpdatedAt), StartedAt: stampPtr(j.StartedAt), FinishedAt: stampPtr(j.FinishedAt),
		RequestedBy: j.RequestedBy}
}

// getReplayJob reports a job's progress: {"state","total","done","failed",…}. done counts
// replays produced, failed the deliveries or events that could not be replayed (error gives
// the last reason).
func (a *API) getReplayJob(w http.ResponseWriter, r *http.Request, _ caller) error {
	id := r.PathValue("jid")
	if !validID(replayJobPrefix, id) {
		return notFound("replay job")
	}
	j, err := a.replays.Job(r.Context(), r.PathValue("pid"), id)
	if errors.Is(err, replay.ErrJobNotFound) {
		return notFound("replay job")
	}
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, viewJob(j))
	return nil
}
