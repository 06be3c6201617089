package admin

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/hookstream/hookstream/eventcatalog"
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

// limitsView states the retention and replay windows (R33) and the API's request limits.
type limitsView struct {
	FeedRetentionSeconds    int64 `json:"feed_retention_seconds"`
	OutboxRetentionSeconds  int64 `json:"outbox_retention_seconds"`
	HistoryRetentionSeconds int64 `json:"history_retention_seconds"`
	ReplayWindowSeconds     int64 `json:"replay_window_seconds"`
	RotationOverlapSeconds  int64 `json:"rotation_overlap_seconds"`
	AutomaticAttempts       int   `json:"automatic_attempts"`
	MaxPageLimit            int   `json:"max_page_limit"`
	DefaultPageLimit        int   `json:"default_page_limit"`
	MaxRequestBytes         int   `json:"max_request_bytes"`
	Notes                   struct {
		Feed    string `json:"feed"`
		History string `json:"history"`
		Replay  string `json:"replay"`
	} `json:"notes"`
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

func (a *API) getLimits(w http.ResponseWriter, _ *http.Request, _ caller) error {
	c := a.cfg
	v := limitsView{
		FeedRetentionSeconds: seconds(c.FeedRetention), OutboxRetentionSeconds: seconds(c.OutboxRetention),
		HistoryRetentionSeconds: seconds(c.HistoryRetention), ReplayWindowSeconds: seconds(c.ReplayWindow),
		RotationOverlapSeconds: seconds(c.RotationOverlap), AutomaticAttempts: c.AutomaticAttempts,
		MaxPageLimit: MaxPageLimit, DefaultPageLimit: DefaultPageLimit, MaxRequestBytes: MaxBodyBytes,
	}
	v.Notes.Feed = "GET /v1/partners/{pid}/events reaches back feed_retention; a cursor older than that answers 410 and the partner reconciles from the platform's state APIs."
	v.Notes.History = "Delivery history and attempts are kept for history_retention; the feed stays available after delivery records expire."
	v.Notes.Replay = "Replays read the event from the outbox (outbox_retention; 0: rows are never dropped) or the events topic (feed_retention); events older than replay_window cannot be replayed (410)."
	respond(w, http.StatusOK, v)
	return nil
}
