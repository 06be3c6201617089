package admin

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/replay"
)

// testEventType is the type of test events (R25).
const testEventType = "webhook.test"

type testAccepted struct {
	EventID    string `json:"event_id"`
	DeliveryID string `json:"delivery_id"`
	EndpointID string `json:"endpoint_id"`
	AttemptNo  int    `json:"attempt_no"`
	Trigger    string `json:"trigger"`
}

// sendTestEvent delivers a fresh webhook.test event to this endpoint only (R25). The event is
// not written to the outbox, where fanout would offer it to every endpoint subscribed to
// webhook.test: its delivery record goes straight to the deliveries topic, keyed by the
// endpoint, with trigger test (which the sender delivers whatever the subscription). The
// attempt appears in the endpoint's history like any other. A partner sends at most
// Limits.TestEventsPerMinute in any minute (quota.go).
func (a *API) sendTestEvent(w http.ResponseWriter, r *http.Request, _ caller) error {
	pid := r.PathValue("pid")
	if e := noBody(r); e != nil {
		return e
	}
	ep, err := loadEndpoint(r.Context(), a.pool, pid, r.PathValue("eid"), false)
	if err != nil {
		return err
	}
	if ep.Status != "active" {
		return conflict("endpoint is disabled; enable it before sending a test event")
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	data, _ := json.Marshal(map[string]string{
		"endpoint_id": ep.ID,
		"message":     "This is a test event from hookstream. It needs no action.",
	})
	env := outbox.Envelope{
		EventID: outbox.NewEventID(), Type: testEventType, OccurredAt: now, PartnerID: pid,
		Subject: outbox.Subject{Type: "endpoint", ID: ep.ID}, SchemaVersion: 1, Data: data,
	}
	body, err := replay.MarshalEnvelope(env)
	if err != nil {
		return err
	}
	d := records.NewDelivery(env.EventID, ep.ID, pid, testEventType, records.TriggerTest, body, now)
	// Read-your-writes: the sender sends it with this configuration or a later one.
	d.EndpointVersion = ep.Version
	taken, used, wait := a.testEvents.take(pid)
	rateHeaders(w.Header(), a.testEvents, pid)
	if wait > 0 {
		return a.quotaExceeded(quotaTestEvents, a.cfg.Limits.TestEventsPerMinute, used, wait,
			"partner %s sent %d test events in the last minute, the most it may (%s): retry in %d s",
			pid, used, quotaTestEvents, retrySeconds(wait))
	}
	if err := a.replays.Produce(r.Context(), records.TriggerTest, []records.Delivery{d}); err != nil {
		a.testEvents.refund(pid, taken) // nothing was sent
		rateHeaders(w.Header(), a.testEvents, pid)
		return err
	}
	respondAt(w, http.StatusAccepted, partnerPath(r)+"/deliveries/"+d.DeliveryID, testAccepted{EventID: d.EventID, DeliveryID: d.DeliveryID, EndpointID: ep.ID,
		AttemptNo: 1, Trigger: records.TriggerTest})
	return nil
}
