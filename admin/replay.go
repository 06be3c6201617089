package admin

import (
	"errors"
	"net/http"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/replay"
)

// replayAccepted is the answer to a single replay.
type replayAccepted struct {
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
	AttemptNo  int    `json:"attempt_no"`
	Trigger    string `json:"trigger"`
}

// replayDelivery makes one new attempt of a delivery (R24): 202 with its attempt number. The
// attempt itself happens asynchronously and shows up in the delivery's attempts. A disabled
// endpoint's delivery is refused here (409); one disabled after this answer is not sent and is
// recorded as category endpoint_disabled. Past Limits.ReplaysPerMinute the answer is 429.
func (a *API) replayDelivery(w http.ResponseWriter, r *http.Request, _ caller) error {
	pid, did := r.PathValue("pid"), r.PathValue("did")
	if e := noBody(r); e != nil {
		return e
	}
	d, err := loadDelivery(r.Context(), a.pool, pid, did)
	if err != nil {
		return err
	}
	if d.EventType == testEventType {
		return conflict("test deliveries are not replayed; send a new test event")
	}
	ep, err := a.replays.Endpoint(r.Context(), pid, d.EndpointID)
	if errors.Is(err, replay.ErrEndpointGone) {
		return conflict("the endpoint of this delivery was deleted")
	}
	if err != nil {
		return err
	}
	if ep.Status != "active" {
		return conflict("endpoint is disabled; enable it before replaying")
	}
	if !endpoints.Subscribed(ep.EventTypes, d.EventType) {
		return conflict("endpoint is no longer subscribed to %s", d.EventType)
	}
	// Single replays are rated like test events: each is a request to the partner's receiver
	// that no schedule bounds (R24).
	taken, used, wait := a.replaysRate.take(pid)
	rateHeaders(w.Header(), a.replaysRate, pid)
	if wait > 0 {
		return a.quotaExceeded(quotaReplays, a.cfg.Limits.ReplaysPerMinute, used, wait,
			"partner %s asked for %d single replays in the last minute, the most it may (%s): retry in %d s, or replay many deliveries at once with a replay job (POST /v1/partners/%s/endpoints/{eid}/replay)",
			pid, used, quotaReplays, retrySeconds(wait), pid)
	}
	p, err := a.replays.One(r.Context(), ep, replay.Target{EventID: d.EventID, EventType: d.EventType, CreatedAt: d.CreatedAt.Time})
	if err != nil {
		a.replaysRate.refund(pid, taken) // nothing was sent
		rateHeaders(w.Header(), a.replaysRate, pid)
	}
	var refused *replay.RefusedError
	switch {
	case errors.Is(err, replay.ErrNotRetained):
		return errorf(http.StatusGone, CodeGone, "event %s is older than the replay window (%s): reconcile through the platform's state APIs",
			d.EventID, a.cfg.ReplayWindow)
	case errors.As(err, &refused):
		return conflict("%s", refused.Reason)
	case err != nil:
		return err
	}
	a.log.Info("delivery replayed", "partner_id", pid, "delivery_id", did, "attempt_no", p.AttemptNo)
	respondAt(w, http.StatusAccepted, partnerPath(r)+"/deliveries/"+p.DeliveryID, replayAccepted{DeliveryID: p.DeliveryID, EventID: p.EventID,
		EndpointID: p.EndpointID, AttemptNo: p.AttemptNo, Trigger: p.Trigger})
	return nil
}
