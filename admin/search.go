package admin

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/replay"
)

// errorCategories are the attempts' error categories (design.md section 7), the values of
// ?error_category=.
var errorCategories = records.ErrorCategories

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
	out, err := queryPage(r.Context(), a.pool, limit, scanDelivery, func(last deliveryView) string {
		return encodeCursor("partner-deliveries", deliveryCursor{CreatedAt: last.CreatedAt.Time, ID: last.DeliveryID})
	}, `SELECT `+deliveryColumns+` FROM delivery
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
	respond(w, http.StatusOK, out)
	return nil
}

// jobStates are the states of ?state= of the job list.
var jobStates = []string{replay.JobQueued, replay.JobRunning, replay.JobSucceeded, replay.JobFailed, replay.JobCanceled}

type jobCursor struct {
	ID string `json:"id"`
}

// listReplayJobs is the partner's replay jobs, newest first, by endpoint and state.
func (a *API) listReplayJobs(w http.ResponseWriter, r *http.Request, _ caller) error {
	q := r.URL.Query()
	var after jobCursor
	limit, e := pageQuery(q, "replay-jobs", &after, func() bool { return validID(replayJobPrefix, after.ID) })
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
	jobs, err := a.replays.Jobs(r.Context(), r.PathValue("pid"), replay.JobQuery{EndpointID: endpointID, State: state,
		Before: after.ID, Limit: limit + 1})
	if err != nil {
		return err
	}
	items := make([]jobView, len(jobs))
	for i, j := range jobs {
		items[i] = viewJob(j)
	}
	out := page(items, limit, func(last jobView) string { return encodeCursor("replay-jobs", jobCursor{ID: last.ID}) })
	respond(w, http.StatusOK, out)
	return nil
}

// cancelReplayJob stops a queued or running job (replay.Engine.Cancel): at most the batch in
// flight is still replayed. Canceling a canceled job changes nothing; a finished one answers
// 409.
func (a *API) cancelReplayJob(w http.ResponseWriter, r *http.Request, c caller) error {
	pid, id := r.PathValue("pid"), r.PathValue("jid")
	if !validID(replayJobPrefix, id) {
		return notFound("replay job")
	}
	if e := noBody(r); e != nil {
		return e
	}
	j, err := a.replays.Cancel(r.Context(), pid, id, c.actor())
	switch {
	case errors.Is(err, replay.ErrJobNotFound):
		return notFound("replay job")
	case errors.Is(err, replay.ErrJobFinished):
		return conflict("replay job %s has %s; only a queued or running job can be canceled", id, j.State)
	case err != nil:
		return err
	}
	respond(w, http.StatusOK, viewJob(j))
	return nil
}
