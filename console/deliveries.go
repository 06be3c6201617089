package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/hookstream/hookstream/adminclient"
)

type deliveryView struct {
	D     adminclient.DeliveryDetail
	Await int // attempts the page waits to see, with live progress; 0: not waiting
}

func (c *Console) getDelivery(r *http.Request, ss *session) (*adminclient.DeliveryDetail, error) {
	res, err := c.api(ss).GetDeliveryWithResponse(r.Context(), r.PathValue("pid"), r.PathValue("did"))
	if err := check(res, err); err != nil {
		return nil, err
	}
	return res.JSON200, nil
}

func (c *Console) delivery(w http.ResponseWriter, r *http.Request, ss *session) error {
	d, err := c.getDelivery(r, ss)
	if err != nil {
		if pe, ok := err.(*pageError); ok && pe.status == http.StatusNotFound && r.URL.Query().Get("await") != "" {
			// A test event's delivery has no row until its first attempt is recorded: wait for it.
			return c.render(w, r, ss, http.StatusOK, "delivery_wait.html", "Delivery "+r.PathValue("did"), r.PathValue("did"))
		}
		return err
	}
	v := deliveryView{D: *d}
	if n, err := strconv.Atoi(r.URL.Query().Get("await")); err == nil && n > len(d.Attempts) {
		v.Await = n
	}
	return c.render(w, r, ss, http.StatusOK, "delivery.html", "Delivery "+d.DeliveryID, v)
}

// deliveryStatus is the delivery page's live progress: its state and how many attempts are
// recorded, polled by console.js until the awaited attempt is in.
func (c *Console) deliveryStatus(w http.ResponseWriter, r *http.Request, ss *session) error {
	d, err := c.getDelivery(r, ss)
	out := map[string]any{"found": false, "attempts": 0}
	if err != nil {
		if pe, ok := err.(*pageError); !ok || pe.status != http.StatusNotFound {
			return err
		}
	} else {
		out = map[string]any{"found": true, "attempts": len(d.Attempts), "state": d.State}
	}
	return writeJSON(w, out)
}

type attemptView struct {
	D        adminclient.DeliveryDetail
	A        adminclient.Attempt
	Index    int
	Headers  [][2]string
	Envelope string // the event as the feed holds it, pretty-printed; empty when it is not there
	NoBody   string
}

func (c *Console) attempt(w http.ResponseWriter, r *http.Request, ss *session) error {
	d, err := c.getDelivery(r, ss)
	if err != nil {
		return err
	}
	i, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || i < 1 || i > len(d.Attempts) {
		return &pageError{status: http.StatusNotFound, msg: fmt.Sprintf("delivery %s has no attempt %s", d.DeliveryID, r.PathValue("n"))}
	}
	a := d.Attempts[i-1]
	v := attemptView{D: *d, A: a, Index: i, Headers: [][2]string{
		{"webhook-id", d.EventID},
		{"webhook-timestamp", strconv.FormatInt(a.StartedAt.Unix(), 10) + " (about; the sender stamps it as it sends)"},
		{"webhook-signature", "v1,… one per active secret (never shown)"},
		{"content-type", "application/json"},
		{"user-agent", c.cfg.UserAgent},
	}}
	ev, err := c.api(ss).GetEventWithResponse(r.Context(), d.PartnerID, d.EventID)
	if err := check(ev, err); err == nil {
		v.Envelope = prettyJSON(ev.Body)
	} else if pe, ok := err.(*pageError); ok && pe.status < 500 {
		v.NoBody = "The event log no longer holds this event, or never did (test events are not in the feed): " + pe.msg
	} else {
		return err
	}
	return c.render(w, r, ss, http.StatusOK, "attempt.html", fmt.Sprintf("Attempt %d of %s", i, d.DeliveryID), v)
}

func prettyJSON(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

func (c *Console) replayDelivery(w http.ResponseWriter, r *http.Request, ss *session) error {
	pid, did := r.PathValue("pid"), r.PathValue("did")
	back := pathOf("partners", pid, "deliveries", did)
	d, err := c.getDelivery(r, ss)
	if err != nil {
		return err
	}
	res, err := c.api(ss).ReplayDeliveryWithResponse(r.Context(), pid, did, adminclient.Empty{})
	if err := check(res, err); err != nil {
		if pe, ok := err.(*pageError); ok && pe.status != http.StatusNotFound && pe.status < 500 {
			return c.redirect(w, r, ss, back, &flash{Message: pe.msg, Error: true})
		}
		return err
	}
	return c.redirect(w, r, ss, back+"?await="+strconv.Itoa(len(d.Attempts)+1), &flash{
		Message: fmt.Sprintf("Replay requested: attempt %d, same event id %s.", res.JSON202.AttemptNo, res.JSON202.EventID)})
}

type replayJobView struct {
	J        adminclient.ReplayJob
	Finished bool
}

func (c *Console) getReplayJob(r *http.Request, ss *session) (*adminclient.ReplayJob, error) {
	res, err := c.api(ss).GetReplayJobWithResponse(r.Context(), r.PathValue("pid"), r.PathValue("jid"))
	if err := check(res, err); err != nil {
		return nil, err
	}
	return res.JSON200, nil
}

func (c *Console) replayJob(w http.ResponseWriter, r *http.Request, ss *session) error {
	j, err := c.getReplayJob(r, ss)
	if err != nil {
		return err
	}
	v := replayJobView{J: *j, Finished: j.State == adminclient.ReplayJobStateSucceeded || j.State == adminclient.ReplayJobStateFailed}
	return c.render(w, r, ss, http.StatusOK, "replay_job.html", "Replay job "+j.JobID, v)
}

// replayJobProgress is the replay job page's live progress, polled by console.js.
func (c *Console) replayJobProgress(w http.ResponseWriter, r *http.Request, ss *session) error {
	j, err := c.getReplayJob(r, ss)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"state": j.State, "done": j.Done, "failed": j.Failed, "total": j.Total, "error": j.Error})
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}
