package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/eventlog"
	"github.com/hookstream/hookstream/internal/records"
)

// streamEvents is the cursor feed as it happens, in server-sent events (for
// `hookstream listen`): the partner's events of the types asked for, in log order, from the
// same partition, scoping and cursors as listEvents. Each event's SSE id is the feed cursor
// after it, so a client that reconnects with Last-Event-ID (or ?after=) resumes with no gap and
// no duplicate; without either the stream starts at the end of the log, with the events
// committed from now on. A message with only an id moves the cursor past records the partner
// does not see, and a comment every StreamHeartbeat keeps an idle connection open.
//
// Refusals (a bad cursor, a cursor past the retention) are answered before the stream starts,
// with the JSON error of every route. A fault once it has started ends it with an `error` event
// when the cursor can no longer be served (410) or the partner key it was opened with no longer
// verifies (401: revoked, or its partner deleted), or silently when a dependency failed, so the
// client reconnects from its last id.
//
// The key is checked again before every batch of records is sent and every
// streamCredentialRecheck while the stream is idle, so a revoked key gets no event committed
// after its revocation, as every other call with it answers 401 (R36).
func (a *API) streamEvents(w http.ResponseWriter, r *http.Request, c caller) error {
	pid := r.PathValue("pid")
	q := r.URL.Query()
	types, e := feedTypes(q)
	if e != nil {
		return e
	}
	after := q.Get("after")
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		after = id // the browser's EventSource resends the URL it was opened with
	}
	cur, e := parseFeedCursor(after, pid)
	if e != nil {
		return e
	}
	ctx := r.Context()
	pos, err := a.feedPosition(ctx, pid, cur, true)
	if err != nil {
		return err
	}
	p, n, from, moved := pos.p, pos.n, pos.from, pos.moved

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx would buffer the stream otherwise
	w.WriteHeader(http.StatusOK)
	s := &eventStream{w: w, rc: rc, at: from}
	s.message(feedCursorAt(pid, p, n, from), "", nil)
	s.flush()
	a.metrics.streams.Inc()
	defer a.metrics.streams.Dec()

	poll := time.NewTicker(a.cfg.StreamPoll)
	defer poll.Stop()
	verified := time.Now()
	live := func() error {
		err := a.credentialLive(ctx, c)
		if err == nil {
			verified = time.Now()
		}
		return err
	}
	for s.err == nil {
		select {
		case <-ctx.Done():
			return nil
		case <-a.streamsEnd:
			return nil
		case <-poll.C:
		}
		var (
			next, end int64
			err       error
		)
		if time.Since(verified) >= streamCredentialRecheck {
			err = live()
		}
		if err == nil {
			next, end, err = a.streamStep(ctx, s, live, pid, types, p, n, from)
		}
		if err == nil && next >= end {
			// At the end of the partition: partitions may have been added since. The count is
			// looked at before the next step reads the end again, so that step still reads
			// whatever cdc published in the old partition before it moved on (feedPosition).
			switch {
			case moved:
				p, n, next, err = a.feedMoveOn(ctx, pid)
				moved, s.at = false, -1 // the cursor names the new partition from now on
			default:
				var nn, before int32
				nn, before, err = a.events.PartitionCounts(ctx)
				switch {
				case err != nil || nn <= n:
				case before != n:
					err = errRepartitioned
				case records.EventPartition(pid, nn) == p:
					n = nn
				default:
					moved = true
				}
			}
		}
		var ending *apiError
		switch {
		case errors.Is(err, eventlog.ErrOffsetExpired):
			ending = expiredCursor(a)
		case errors.Is(err, errRepartitioned):
			ending = repartitionedCursor()
		case errors.Is(err, errCredentialRevoked):
			ending = errorf(http.StatusUnauthorized, CodeUnauthorized, "the API key this stream was opened with was revoked; the stream ends")
		}
		if ending != nil {
			body, _ := json.Marshal(ending.problem(w.Header().Get(RequestIDHeader)))
			s.message("", "error", body)
			s.flush()
			return nil
		}
		if err != nil && ctx.Err() == nil {
			// A broker that stopped answering is a fault of ours: logged, and the stream ends so
			// the client reconnects from the last id it got, possibly to a healthier instance.
			a.log.Warn("event stream ended by a read error", "partner_id", pid, "err", err)
			return nil
		}
		from = next
		if from != s.at {
			s.message(feedCursorAt(pid, p, n, from), "", nil)
			s.at = from
		} else if time.Since(s.wrote) >= a.cfg.StreamHeartbeat {
			s.comment("heartbeat")
		}
		s.flush()
	}
	return nil // the client went away
}

// streamCredentialRecheck is how long an idle stream goes at most without checking that its
// partner key still verifies; a stream about to send records checks it first in any case.
const streamCredentialRecheck = 5 * time.Second

// errRepartitioned ends a stream whose partition count is older than the one before cdc's last
// change (repartitionedCursor).
var errRepartitioned = errors.New("admin: partitions were added more than once under the stream")

// errCredentialRevoked ends a stream whose partner key no longer verifies.
var errCredentialRevoked = errors.New("admin: the stream's partner key no longer verifies")

// credentialLive says whether c may still read its stream: the operator token is configuration
// and stays valid for the life of the process; a partner key must be unrevoked and exist (keys
// are deleted with their partner). One primary-key lookup.
func (a *API) credentialLive(ctx context.Context, c caller) error {
	if c.operator {
		return nil
	}
	var live bool
	err := a.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM partner_api_key
		WHERE id = $1 AND partner_id = $2 AND revoked_at IS NULL)`, c.keyID, c.partnerID).Scan(&live)
	if err != nil {
		return fmt.Errorf("admin: check the stream's partner key: %w", err)
	}
	if !live {
		return errCredentialRevoked
	}
	return nil
}

// streamStep sends the partner's events between from and the end of the committed log now, at
// most MaxFeedScan records at a time so the reader slot is shared with feed pages, and returns
// the offset after the last record examined and the end it read to. live is asked before any record is read: a stream
// whose credential no longer verifies sends nothing more.
func (a *API) streamStep(ctx context.Context, s *eventStream, live func() error, pid string, types []string, p, n int32, from int64) (next, end int64, err error) {
	_, end, err = a.events.Bounds(ctx, p)
	if err != nil || from >= end {
		return from, end, err
	}
	if err := live(); err != nil {
		return from, end, err
	}
	release, err := a.events.Acquire(ctx)
	if err != nil {
		return from, end, err
	}
	defer release()
	scanned := 0
	next, err = a.events.Scan(ctx, p, from, end, func(rec *kgo.Record) bool {
		scanned++
		if ev, ok := a.wanted(rec, pid, types); ok {
			s.message(feedCursorAt(pid, p, n, rec.Offset+1), ev.Type, rec.Value)
			s.at = rec.Offset + 1
			s.flush()
		}
		return s.err == nil && scanned < a.cfg.MaxFeedScan
	})
	return next, end, err
}

// eventStream writes server-sent events; the first write error is kept and ends the stream.
type eventStream struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	at    int64 // the offset of the last id sent
	wrote time.Time
	err   error
	buf   bytes.Buffer
}

// message writes one event: its id (a feed cursor) when given, its type as the SSE event name,
// and data, the envelope's bytes; a message with only an id moves the client's cursor.
func (s *eventStream) message(id, event string, data []byte) {
	s.buf.Reset()
	if id != "" {
		fmt.Fprintf(&s.buf, "id: %s\n", id)
	}
	if event != "" {
		fmt.Fprintf(&s.buf, "event: %s\n", event)
	}
	if data != nil {
		// A line break ends an SSE field: each line of the data is a field of its own, which the
		// client joins with "\n" again. A carriage return is a line break there too, and JSON
		// has it only as whitespace, so such a body is compacted instead.
		if bytes.IndexByte(data, '\r') >= 0 {
			var c bytes.Buffer
			if json.Compact(&c, data) == nil {
				data = c.Bytes()
			}
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			s.buf.WriteString("data: ")
			s.buf.Write(line)
			s.buf.WriteByte('\n')
		}
	}
	s.buf.WriteByte('\n')
	s.write(s.buf.Bytes())
}

func (s *eventStream) comment(text string) { s.write([]byte(": " + text + "\n\n")) }

func (s *eventStream) write(b []byte) {
	if s.err != nil {
		return
	}
	_, s.err = s.w.Write(b)
	s.wrote = time.Now()
}

func (s *eventStream) flush() {
	if s.err == nil {
		s.err = s.rc.Flush()
	}
}
