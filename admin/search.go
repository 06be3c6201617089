package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// errorCategories are the attempts' error categories (design.md section 7), the values of
// ?error_category=.
var errorCategories = []string{records.CategoryDNS, records.CategoryConnectionRefused, records.CategoryTLS,
	records.CategoryTimeout, records.CategoryHTTPStatus, records.CategoryRedirect, records.CategoryBlockedDestination,
	records.CategoryTenantMismatch, records.CategoryInternal}

// searchDeliveries answers "did partner X get event Y?" and its kin: the partner's deliveries
// across all its endpoints, newest first, by event id, endpoint, state, last error category,
// last HTTP status, event type and creation time (since inclusive, until exclusive),
// cursor-paged. Deleted endpoints' deliveries are found too, while the history keeps them.
func (a *API) searchDeliveries(w http.ResponseWriter, r *http.Request, _ caller) error {
	pid := r.PathValue("pid")
	q := r.URL.Query()
	limit, e := pageLimit(q)
	if e != nil {
		return e
	}
	eventID, endpointID := q.Get("event_id"), q.Get("endpoint_id")
	if eventID != "" && !outbox.ValidEventID(eventID) {
		return invalidField("event_id", "event_id must be an event id (evt_ and 26 characters)")
	}
	if endpointID != "" && !validID(endpointIDPrefix, endpointID) {
		return invalidField("endpoint_id", "endpoint_id must be an endpoint id (ep_ and 26 characters)")
	}
	state := q.Get("state")
	if state != "" && !validState(state) {
		return invalidField("state", "state must be one of %s", strings.Join(deliveryStates, ", "))
	}
	category := q.Get("error_category")
	if category != "" && !slices.Contains(errorCategories, category) {
		return invalidField("error_category", "error_category must be one of %s", strings.Join(errorCategories, ", "))
	}
	status := 0
	if s := q.Get("status"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			return invalidField("status", "status must be an HTTP status from 100 to 599")
		}
		status = n
	}
	win, e := parseHistoryWindow(q, "partner-deliveries")
	if e != nil {
		return e
	}
	since, until, types, after := win.since, win.until, win.types, win.after
	rows, err := a.pool.Query(r.Context(), `SELECT `+deliveryColumns+` FROM delivery
		WHERE partner_id = $1
		  AND ($2 = '' OR event_id = $2)
		  AND ($3 = '' OR endpoint_id = $3)
		  AND ($4 = '' OR state = $4)
		  AND ($5 = '' OR last_error_category = $5)
		  AND ($6 = 0 OR last_status = $6)
		  AND ($7::timestamptz IS NULL OR created_at >= $7)
		  AND ($8::timestamptz IS NULL OR created_at < $8)
		  AND ($9 OR event_type = ANY($10::text[]) OR event_type LIKE ANY($11::text[]))
		  AND ($12 = '' OR (created_at, delivery_id) < ($13, $12))
		ORDER BY created_at DESC, delivery_id DESC LIMIT $14`,
		pid, eventID, endpointID, state, category, status, nullTime(since), nullTime(until),
		types.empty(), types.exact, types.like, after.ID, after.CreatedAt, limit+1)
	if err != nil {
		return err
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (deliveryView, error) { return scanDelivery(row) })
	if err != nil {
		return err
	}
	out := list[deliveryView]{Data: items}
	if out.Data == nil {
		out.Data = []deliveryView{}
	}
	if len(items) > limit {
		out.Data, out.HasMore = items[:limit], true
		last := items[limit-1]
		out.NextCursor = encodeCursor("partner-deliveries", deliveryCursor{CreatedAt: last.CreatedAt, ID: last.DeliveryID})
	}
	respond(w, http.StatusOK, out)
	return nil
}

// jobCanceled is the state of a job canceled by its partner or the operator: final, like
// succeeded and failed.
const jobCanceled = "canceled"

var jobStates = []string{jobQueued, jobRunning, jobSucceeded, jobFailed, jobCanceled}

const jobColumns = `id, partner_id, endpoint_id, source, filter, state, total, done, failed,
	error, created_at, updated_at, started_at, finished_at, requested_by`

func scanJob(row pgx.Row) (jobView, error) {
	var (
		v                   jobView
		fj                  []byte
		total, done, failed int32
	)
	err := row.Scan(&v.ID, &v.PartnerID, &v.EndpointID, &v.Source, &fj, &v.State, &total, &done, &failed,
		&v.Error, &v.CreatedAt, &v.UpdatedAt, &v.StartedAt, &v.FinishedAt, &v.RequestedBy)
	if err == nil {
		_ = json.Unmarshal(fj, &v.Filter)
	}
	v.JobID, v.Total, v.Done, v.Failed = v.ID, int(total), int(done), int(failed)
	return v, err
}

type jobCursor struct {
	ID string `json:"id"`
}

// listReplayJobs is the partner's replay jobs, newest first, by endpoint and state.
func (a *API) listReplayJobs(w http.ResponseWriter, r *http.Request, _ caller) error {
	q := r.URL.Query()
	limit, e := pageLimit(q)
	if e != nil {
		return e
	}
	endpointID, state := q.Get("endpoint_id"), q.Get("state")
	if endpointID != "" && !validID(endpointIDPrefix, endpointID) {
		return invalidField("endpoint_id", "endpoint_id must be an endpoint id (ep_ and 26 characters)")
	}
	if state != "" && !slices.Contains(jobStates, state) {
		return invalidField("state", "state must be one of %s", strings.Join(jobStates, ", "))
	}
	var after jobCursor
	if s := q.Get("cursor"); s != "" {
		if e := decodeCursor(s, "replay-jobs", &after); e != nil {
			return e
		}
		if !validID(replayJobPrefix, after.ID) {
			return badCursor()
		}
	}
	// Job ids are ULIDs: their order is their creation order.
	rows, err := a.pool.Query(r.Context(), `SELECT `+jobColumns+` FROM replay_job
		WHERE partner_id = $1 AND ($2 = '' OR endpoint_id = $2) AND ($3 = '' OR state = $3) AND ($4 = '' OR id < $4)
		ORDER BY id DESC LIMIT $5`, r.PathValue("pid"), endpointID, state, after.ID, limit+1)
	if err != nil {
		return err
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (jobView, error) { return scanJob(row) })
	if err != nil {
		return err
	}
	out := list[jobView]{Data: items}
	if out.Data == nil {
		out.Data = []jobView{}
	}
	if len(items) > limit {
		out.Data, out.HasMore = items[:limit], true
		out.NextCursor = encodeCursor("replay-jobs", jobCursor{ID: items[limit-1].ID})
	}
	respond(w, http.StatusOK, out)
	return nil
}

// cancelReplayJob stops a queued or running job: it is canceled at once, and a runner holding it
// stops before its next batch (its progress save finds the job no longer running), so at most
// the batch in flight is still replayed. Canceling a canceled job changes nothing; a finished
// one answers 409.
func (a *API) cancelReplayJob(w http.ResponseWriter, r *http.Request, c caller) error {
	pid, id := r.PathValue("pid"), r.PathValue("jid")
	if !validID(replayJobPrefix, id) {
		return notFound("replay job")
	}
	var req struct{}
	if e := decodeBody(r, &req, false); e != nil {
		return e
	}
	v, err := scanJob(a.pool.QueryRow(r.Context(), `UPDATE replay_job SET state = 'canceled', lease_owner = NULL, lease_until = NULL,
			error = 'canceled by ' || $3::text, finished_at = now(), updated_at = now()
		WHERE id = $1 AND partner_id = $2 AND state IN ('queued', 'running')
		RETURNING `+jobColumns, id, pid, c.actor()))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, err := scanJob(a.pool.QueryRow(r.Context(), `SELECT `+jobColumns+` FROM replay_job WHERE id = $1 AND partner_id = $2`, id, pid))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("replay job")
		}
		if err != nil {
			return err
		}
		if cur.State != jobCanceled {
			return conflict("replay job %s has %s; only a queued or running job can be canceled", id, cur.State)
		}
		respond(w, http.StatusOK, cur) // canceled before: nothing changes
		return nil
	}
	if err != nil {
		return err
	}
	a.metrics.jobsDone.WithLabelValues(jobCanceled).Inc()
	a.log.Info("replay job canceled", "partner_id", pid, "job_id", id, "by", c.actor())
	respond(w, http.StatusOK, v)
	return nil
}
