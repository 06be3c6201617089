package admin

import (
	"cmp"
	"encoding/json"
	"net/http"
	"time"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/topics"
)

type catalogPage struct {
	Data       []eventcatalog.EventType `json:"data"`
	NextCursor string                   `json:"next_cursor"`
	HasMore    bool                     `json:"has_more"`
	Envelope   json.RawMessage          `json:"envelope_schema"`
}

// listEventTypes publishes the catalog with its JSON Schemas and examples (R4, R31). The page
// shape is the list shape of the other routes; the catalog is small, so it is one page.
func (a *API) listEventTypes(w http.ResponseWriter, _ *http.Request, _ caller) error {
	respond(w, http.StatusOK, catalogPage{Data: eventcatalog.Types(), Envelope: eventcatalog.EnvelopeSchema()})
	return nil
}

// limitsView states the retention and replay windows (R33), the API's request limits and the
// partner quotas.
type limitsView struct {
	FeedRetentionSeconds int64 `json:"feed_retention_seconds"`
	// EventLogRetentionSeconds is the events topic's retention; -1: unlimited.
	EventLogRetentionSeconds int64 `json:"event_log_retention_seconds"`
	OutboxRetentionSeconds   int64 `json:"outbox_retention_seconds"`
	HistoryRetentionSeconds  int64 `json:"history_retention_seconds"`
	ReplayWindowSeconds      int64 `json:"replay_window_seconds"`
	RotationOverlapSeconds   int64 `json:"rotation_overlap_seconds"`
	AutomaticAttempts        int   `json:"automatic_attempts"`
	MaxPageLimit             int   `json:"max_page_limit"`
	DefaultPageLimit         int   `json:"default_page_limit"`
	MaxRequestBytes          int   `json:"max_request_bytes"`
	// PartnerID is the partner whose usage Quotas show: the key's partner, or the operator's
	// ?partner_id=; empty (the operator without it): the limits alone.
	PartnerID string      `json:"partner_id,omitempty"`
	Quotas    quotasView  `json:"quotas"`
	Retry     retryView   `json:"retry"`
	Notes     limitsNotes `json:"notes"`
}

type limitsNotes struct {
	Feed    string `json:"feed"`
	History string `json:"history"`
	Replay  string `json:"replay"`
	Quotas  string `json:"quotas"`
	Retry   string `json:"retry"`
}

// quotasView holds each quota by the name error.quota gives it.
type quotasView struct {
	Endpoints              quotaView `json:"endpoints"`
	ReplayJobs             quotaView `json:"replay_jobs"`
	TestEventsPerMinute    quotaView `json:"test_events_per_minute"`
	ReplaysPerMinute       quotaView `json:"replays_per_minute"`
	ReplayDeliveries       quotaView `json:"replay_deliveries"`
	DeliveriesInFlight     quotaView `json:"deliveries_in_flight"`
	DeliveriesPerSec       quotaView `json:"deliveries_per_sec"`
	ReplayDeliveriesPerSec quotaView `json:"replay_deliveries_per_sec"`
}

// quotaView is a quota's limit and, for a partner, its usage now. replay_deliveries bounds
// each replay job and has no usage.
type quotaView struct {
	Limit int  `json:"limit"`
	Usage *int `json:"usage,omitempty"`
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

// getLimits states the limits. A partner key sees its own partner's quota usage; the operator
// sees the limits alone, or a partner's usage with ?partner_id=.
func (a *API) getLimits(w http.ResponseWriter, r *http.Request, c caller) error {
	cfg := a.cfg
	logRetention := seconds(cmp.Or(cfg.EventLogRetention, cfg.FeedRetention))
	if cfg.EventLogRetention == topics.RetainForever {
		logRetention = -1
	}
	v := limitsView{
		EventLogRetentionSeconds: logRetention,
		FeedRetentionSeconds:     seconds(cfg.FeedRetention), OutboxRetentionSeconds: seconds(cfg.OutboxRetention),
		HistoryRetentionSeconds: seconds(cfg.HistoryRetention), ReplayWindowSeconds: seconds(cfg.ReplayWindow),
		RotationOverlapSeconds: seconds(cfg.RotationOverlap), AutomaticAttempts: cfg.AutomaticAttempts,
		MaxPageLimit: MaxPageLimit, DefaultPageLimit: DefaultPageLimit, MaxRequestBytes: MaxBodyBytes,
		Retry: cfg.Retry.view(),
		Quotas: quotasView{
			Endpoints:              quotaView{Limit: cfg.Limits.Endpoints},
			ReplayJobs:             quotaView{Limit: cfg.Limits.ReplayJobs},
			TestEventsPerMinute:    quotaView{Limit: cfg.Limits.TestEventsPerMinute},
			ReplaysPerMinute:       quotaView{Limit: cfg.Limits.ReplaysPerMinute},
			ReplayDeliveries:       quotaView{Limit: cfg.Limits.ReplayDeliveries},
			DeliveriesInFlight:     quotaView{Limit: cfg.Limits.DeliveriesInFlight},
			DeliveriesPerSec:       quotaView{Limit: cfg.Limits.DeliveriesPerSec},
			ReplayDeliveriesPerSec: quotaView{Limit: cfg.Limits.ReplayDeliveriesPerSec},
		},
	}
	v.Notes.Feed = "GET /v1/partners/{pid}/events reaches back at least feed_retention, and as far as the event log keeps events (event_log_retention_seconds; -1: no time limit), since it reads the log; a cursor before the oldest retained event answers 410 and the partner reconciles from the platform's state APIs."
	v.Notes.History = "Delivery history and attempts are kept for history_retention; the feed stays available after delivery records expire."
	v.Notes.Replay = "Replays read the event from the outbox (outbox_retention; 0: rows are never dropped) or the events topic (at least feed_retention; event_log_retention_seconds); events older than replay_window cannot be replayed (410)."
	v.Notes.Retry = "After a failed attempt a delivery waits schedule_seconds[i] (±jitter) before attempt i+2, attempts in all; an endpoint's retry_policy replaces the schedule, the attempt count and client_errors (what a 4xx other than 408, 410, 425 and 429 does: retry by the schedule, or stop at once) for all its events or per event type, within bounds. Retries wait in the shared tiers whatever the policy. automatic_attempts is the highest number an automatic attempt can have; replays made while one may still come are numbered above it."
	v.Notes.Quotas = "Per partner, whoever calls: over endpoints, replay_jobs, test_events_per_minute or replays_per_minute (single-delivery replays) a request answers 429 quota_exceeded (Retry-After for the per-minute ones); a replay selecting more than replay_deliveries answers 422 replay_too_large (a log replay stops at it instead). test_events_per_minute and replays_per_minute are counted over the last 60 s by each admin process. deliveries_in_flight and deliveries_per_sec (0: no limit) bound the requests each sender process makes for all of a partner's endpoints together, whatever each endpoint allows; a partner's backlog waits for them and never delays another partner's deliveries. replay_deliveries_per_sec (0: no limit) is the most deliveries a second a partner's bulk replay jobs replay together in each admin process."

	pid := r.URL.Query().Get("partner_id")
	switch {
	case !c.operator && pid == "":
		pid = c.partnerID
	case !c.operator && pid != c.partnerID:
		return notFound("partner") // as any other partner's resource
	case c.operator && pid != "":
		if e := a.authorize(r.Context(), c, partnerOwn, pid); e != nil {
			return e
		}
	}
	if pid != "" {
		endpoints, err := countEndpoints(r.Context(), a.pool, pid)
		if err != nil {
			return err
		}
		jobs, err := countOpenJobs(r.Context(), a.pool, pid)
		if err != nil {
			return err
		}
		tests, replays := a.testEvents.usage(pid), a.replaysRate.usage(pid)
		v.PartnerID = pid
		v.Quotas.Endpoints.Usage, v.Quotas.ReplayJobs.Usage, v.Quotas.TestEventsPerMinute.Usage = &endpoints, &jobs, &tests
		v.Quotas.ReplaysPerMinute.Usage = &replays
	}
	respond(w, http.StatusOK, v)
	return nil
}
