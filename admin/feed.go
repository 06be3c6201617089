package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// feedCursor is a position in one partner's partition of the events topic. It names the
// partition count it was computed with and a tag of the partner, so a cursor is refused by
// another partner and after the topic was repartitioned.
type feedCursor struct {
	Partition  int32  `json:"p"`
	Partitions int32  `json:"n"`
	Offset     int64  `json:"o"`
	Partner    string `json:"t"`
}

// maxFeedPageBytes ends a page early when its envelopes reach this size, so a page of large
// events stays a reasonable response.
const maxFeedPageBytes = 8 << 20

func partnerTag(pid string) string {
	sum := sha256.Sum256([]byte("hookstream feed cursor\x00" + pid))
	return hex.EncodeToString(sum[:6])
}

type feedPage struct {
	Data       []json.RawMessage `json:"data"`
	NextCursor string            `json:"next_cursor"`
	HasMore    bool              `json:"has_more"`
}

// listEvents is the cursor feed (R32): the partner's events after the cursor, in log order, read
// from the partner's partition of the compacted events topic; other partners' records in the
// same partition are skipped. next_cursor is always returned, also on an empty page, and is the
// position after everything this page examined. A page ends at limit events, at the end of the
// committed log, or after MaxFeedScan records of other partners.
func (a *API) listEvents(w http.ResponseWriter, r *http.Request, _ caller) error {
	pid := r.PathValue("pid")
	q := r.URL.Query()
	limit, e := pageLimit(q)
	if e != nil {
		return e
	}
	types, e := feedTypes(q)
	if e != nil {
		return e
	}
	cur, e := parseFeedCursor(q.Get("after"), pid)
	if e != nil {
		return e
	}
	ctx := r.Context()
	release, err := a.events.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	pos, err := a.feedPosition(ctx, pid, cur, false)
	if err != nil {
		return err
	}
	p, n, from, end := pos.p, pos.n, pos.from, pos.end
	page := feedPage{Data: []json.RawMessage{}}
	scanned, size := 0, 0
	next, err := a.events.Scan(ctx, p, from, end, func(rec *kgo.Record) bool {
		scanned++
		if _, ok := a.wanted(rec, pid, types); ok {
			page.Data = append(page.Data, json.RawMessage(rec.Value))
			size += len(rec.Value)
		}
		return len(page.Data) < limit && scanned < a.cfg.MaxFeedScan && size < maxFeedPageBytes
	})
	if errors.Is(err, eventlog.ErrOffsetExpired) {
		return expiredCursor(a)
	}
	if err != nil {
		return err
	}
	page.NextCursor = feedCursorAt(pid, p, n, next)
	page.HasMore = next < end
	if pos.moved && next >= end {
		// Every event the partner had in the partition it left was examined: the next page
		// reads its new partition from the start.
		np, nn, nfrom, err := a.feedMoveOn(ctx, pid)
		if err != nil {
			return err
		}
		page.NextCursor, page.HasMore = feedCursorAt(pid, np, nn, nfrom), true
	}
	a.metrics.feedReads.Inc()
	respond(w, http.StatusOK, page)
	return nil
}

// feedTypes is the types parameter of the feed and the stream: event types and wildcards, with
// the pattern rules of endpoint filters (endpoints.Subscribed).
func feedTypes(q url.Values) ([]string, *apiError) {
	raw := q.Get("types")
	if raw == "" {
		return nil, nil
	}
	var p problems
	types := p.eventTypes(strings.Split(raw, ","), false)
	if len(p) > 0 {
		return nil, invalidField("types", "types: a comma-separated list of event types like \"api_key.created\" or wildcards like \"api_key.*\"")
	}
	return types, nil
}

// parseFeedCursor decodes a cursor of the partner's feed; "" is none (nil).
func parseFeedCursor(s, pid string) (*feedCursor, *apiError) {
	if s == "" {
		return nil, nil
	}
	cur := &feedCursor{}
	if e := decodeCursor(s, "events", cur); e != nil {
		return nil, e
	}
	if cur.Partner != partnerTag(pid) {
		return nil, badCursor()
	}
	return cur, nil
}

// feedPos is where a read of a partner's feed starts: its partition p of n, the offset from,
// and the end of the committed log then. moved says that p is where the partner's events went
// before partitions were added: once the read reaches end, the partner's events go on from the
// start of its partition under the new count (feedMoveOn).
type feedPos struct {
	p, n      int32
	from, end int64
	moved     bool
}

// feedPosition finds the partner's partition and the offset a read resumes at from cur; with
// no cursor the read starts at the oldest retained event, or with fromEnd at the end (from now
// on). A cursor past the retention or past the end is refused.
//
// The partition count is the one cdc publishes with (eventlog.Log.PartitionCounts). A cursor
// made under the count before cdc's last change still resumes with no gap (design.md section
// 5): cdc's sessions publish with one count each, so when a checkpoint names the new count every
// event published under the old one is committed, and the rest of the old partition then the
// new one hold the partner's events in commit order. A cursor of a larger count than this
// process has seen yet (another process saw cdc's new count first) is read as it is; one of an
// older count is refused (410).
func (a *API) feedPosition(ctx context.Context, pid string, cur *feedCursor, fromEnd bool) (feedPos, error) {
	n, before, err := a.events.PartitionCounts(ctx)
	if err != nil {
		return feedPos{}, err
	}
	p := records.EventPartition(pid, n)
	moved := false
	if cur != nil {
		if cur.Partitions <= 0 || records.EventPartition(pid, cur.Partitions) != cur.Partition {
			return feedPos{}, badCursor()
		}
		switch {
		case cur.Partitions == n:
		case cur.Partitions == before:
			moved = cur.Partition != p
			if moved {
				p, n = cur.Partition, cur.Partitions
			}
		case cur.Partitions > n:
			p, n = cur.Partition, cur.Partitions
		default:
			return feedPos{}, repartitionedCursor()
		}
	}
	start, end, err := a.events.Bounds(ctx, p)
	if err != nil {
		return feedPos{}, err
	}
	pos := feedPos{p: p, n: n, from: start, end: end, moved: moved}
	switch {
	case cur == nil && fromEnd:
		pos.from = end
	case cur == nil:
	case cur.Offset < start:
		return feedPos{}, expiredCursor(a)
	case cur.Offset > end:
		return feedPos{}, badCursor()
	default:
		pos.from = cur.Offset
	}
	return pos, nil
}

// repartitionedCursor refuses a position under a partition count older than the one before
// cdc's last change: partitions were added more than once since, and where the partner's events
// went in between is not known.
func repartitionedCursor() *apiError {
	return errorf(http.StatusGone, CodeGone, "partitions were added to the events topic more than once since this cursor was issued; start again without a cursor and reconcile through the platform's state APIs")
}

// feedMoveOn is where a read goes on after reaching the end of the partition the partner's
// events left (feedPos.moved): the start of its partition under cdc's count now.
func (a *API) feedMoveOn(ctx context.Context, pid string) (p, n int32, from int64, err error) {
	p, n, err = a.events.PartitionOf(ctx, pid)
	if err != nil {
		return 0, 0, 0, err
	}
	from, _, err = a.events.Bounds(ctx, p)
	return p, n, from, err
}

// feedCursorAt is the partner's cursor at offset of partition p of n.
func feedCursorAt(pid string, p, n int32, offset int64) string {
	return encodeCursor("events", feedCursor{Partition: p, Partitions: n, Offset: offset, Partner: partnerTag(pid)})
}

// wanted is whether a record of the events topic is an event of the partner's feed: theirs, of
// one of the types (all when none), and consistent with its key and headers.
func (a *API) wanted(rec *kgo.Record, pid string, types []string) (eventlog.Event, bool) {
	ev, ok := eventlog.FromRecord(rec)
	if !ok || ev.PartnerID != pid || (len(types) > 0 && !endpoints.Subscribed(types, ev.Type)) {
		return ev, false
	}
	if !ev.BodyAgrees() {
		a.log.Error("events record whose envelope disagrees with its key or headers left out of the feed",
			"partition", rec.Partition, "offset", rec.Offset)
		return ev, false
	}
	return ev, true
}

func expiredCursor(a *API) *apiError {
	return errorf(http.StatusGone, CodeGone,
		"the cursor points before the oldest retained event (feed retention %s); start again without a cursor and reconcile through the platform's state APIs",
		a.cfg.FeedRetention)
}

// getEvent returns one event's envelope: from the outbox while it holds the event, else from the
// partner's partition of the events topic.
func (a *API) getEvent(w http.ResponseWriter, r *http.Request, _ caller) error {
	pid, id := r.PathValue("pid"), r.PathValue("event_id")
	if !outbox.ValidEventID(id) {
		return notFound("event")
	}
	found, err := a.replays.Envelopes(r.Context(), pid, []string{id})
	if err != nil {
		return err
	}
	ev, ok := found[id]
	if !ok {
		return errorf(http.StatusNotFound, CodeNotFound, "event not found (events older than the feed retention of %s are gone)", a.cfg.FeedRetention)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(ev.Body)
	return nil
}
