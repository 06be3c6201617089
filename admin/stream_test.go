package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// openStream opens GET …/events/stream through a real server (a stream never ends, so it cannot
// be recorded) and returns its reader; the stream closes with the test.
func openStream(t *testing.T, srv *httptest.Server, token, pid, query, lastID string) *adminclient.StreamReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/partners/"+pid+"/events/stream?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return adminclient.NewStreamReader(resp.Body)
}

// nextEvent reads messages until one carries an event, failing after timeout.
func nextEvent(t *testing.T, r *adminclient.StreamReader, timeout time.Duration) (adminclient.StreamMessage, outbox.Envelope) {
	t.Helper()
	got := make(chan adminclient.StreamMessage, 1)
	failed := make(chan error, 1)
	go func() {
		for {
			m, err := r.Next()
			if err != nil {
				failed <- err
				return
			}
			if m.Data != nil {
				got <- m
				return
			}
		}
	}()
	select {
	case m := <-got:
		var env outbox.Envelope
		if err := json.Unmarshal(m.Data, &env); err != nil {
			t.Fatalf("stream data is not an envelope: %v\n%s", err, m.Data)
		}
		return m, env
	case err := <-failed:
		t.Fatalf("stream ended: %v", err)
	case <-time.After(timeout):
		t.Fatalf("no event on the stream within %s", timeout)
	}
	panic("unreachable")
}

// R32, design.md section 10: the event stream sends a partner its own events of the types asked for, as they are
// committed, never another partner's of the same partition; its ids resume it with no gap and
// no duplicate; a bad cursor, another partner's cursor or route is refused before it starts.
func TestEventStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.StreamPoll = 20 * time.Millisecond; c.StreamHeartbeat = 100 * time.Millisecond })
	srv := httptest.NewServer(e.api.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(e.api.EndStreams) // before srv.Close, which waits for the open streams
	parts := int32(e.Kafka.TopicConfig().Partitions)
	ids := partnersInPartition("stream", 2, parts)
	mine, theirs := ids[0], ids[1]
	key, otherKey := e.partner(mine), e.partner(theirs)

	before := testEnvelope(mine, "customer.created", 0) // committed before the stream opens
	lsn := records.LSN(1)
	e.produceEvents([]*kgo.Record{envelopeRecord(e.Names.Events, parts, before, lsn, time.Now())})

	live := openStream(t, srv, key, mine, "types=customer.*", "")
	var want []string
	var recs []*kgo.Record
	for i := 1; i <= 6; i++ {
		lsn++
		recs = append(recs, envelopeRecord(e.Names.Events, parts, testEnvelope(theirs, "customer.created", i), lsn, time.Now()))
		env := testEnvelope(mine, "customer.created", i)
		if i%3 == 0 {
			env.Type = "api_key.created" // not of the types asked for
		} else {
			want = append(want, env.EventID)
		}
		lsn++
		recs = append(recs, envelopeRecord(e.Names.Events, parts, env, lsn, time.Now()))
	}
	e.produceEvents(recs)
	var cursors []string
	for i, id := range want {
		m, env := nextEvent(t, live, 10*time.Second)
		if env.EventID != id || env.PartnerID != mine || m.Event != env.Type || m.ID == "" {
			t.Fatalf("event %d of the stream: %s %s of %s (id %q), want %s of %s", i, m.Event, env.EventID, env.PartnerID, m.ID, id, mine)
		}
		cursors = append(cursors, m.ID)
	}

	// Resumed after the second event, by Last-Event-ID and by ?after=: the rest, and only it.
	for _, resume := range []struct{ query, lastID string }{{"types=customer.*", cursors[1]}, {"types=customer.*&after=" + cursors[1], ""}} {
		r := openStream(t, srv, key, mine, resume.query, resume.lastID)
		for _, id := range want[2:] {
			if _, env := nextEvent(t, r, 10*time.Second); env.EventID != id {
				t.Fatalf("resumed stream (%+v) sent %s, want %s", resume, env.EventID, id)
			}
		}
	}
	// From the first cursor without a type filter: every event of mine after the one before the
	// stream opened, the api_key.created ones included, and none of the other partner's.
	first := openStream(t, srv, key, mine, "", "")
	lsn++
	late := testEnvelope(theirs, "customer.created", 99)
	e.produceEvents([]*kgo.Record{envelopeRecord(e.Names.Events, parts, late, lsn, time.Now())})
	lsn++
	last := testEnvelope(mine, "customer.created", 100)
	e.produceEvents([]*kgo.Record{envelopeRecord(e.Names.Events, parts, last, lsn, time.Now())})
	if _, env := nextEvent(t, first, 10*time.Second); env.EventID != last.EventID {
		t.Fatalf("a stream opened without a cursor sent %s first, want the next event of the partner %s", env.EventID, last.EventID)
	}

	// Refusals, as JSON errors before any stream.
	for _, c := range []struct {
		token, pid, query string
		status            int
		code              string
	}{
		{key, theirs, "", 404, CodeNotFound},                              // another partner's stream
		{otherKey, theirs, "after=" + cursors[0], 400, CodeInvalidCursor}, // a cursor of mine, by the other partner
		{key, mine, "after=not-a-cursor", 400, CodeInvalidCursor},
		{key, mine, "types=nope", 400, CodeInvalidRequest},
		{"", mine, "", 401, CodeUnauthorized},
	} {
		r := e.do(c.token, "GET", "/v1/partners/"+c.pid+"/events/stream?"+c.query, nil)
		var body errorBody
		r.json(t, &body)
		if r.Status != c.status || body.Code != c.code || body.Detail == "" {
			t.Errorf("stream %s?%s as %s: %s, want %d %s", c.pid, c.query, c.token, r, c.status, c.code)
		}
	}
	if got := e.do(key, "GET", "/v1/partners/"+mine+"/events/stream?after=x", nil); !strings.Contains(string(got.Body), "cursor is not a cursor of this list") {
		t.Errorf("a bad cursor's error does not say what is wrong: %s", got)
	}
}

// R36: a revoked key loses its open stream too. The key is revoked through the API while the
// stream is open; the next event committed for the partner is not sent, and the stream ends with
// an `error` event whose problem says the key was revoked.
func TestEventStreamEndsWhenItsKeyIsRevoked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.StreamPoll = 20 * time.Millisecond; c.StreamHeartbeat = 100 * time.Millisecond })
	srv := httptest.NewServer(e.api.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(e.api.EndStreams)
	parts := int32(e.Kafka.TopicConfig().Partitions)
	pid := partnersInPartition("revoked", 1, parts)[0]
	e.partner(pid)
	var k createdAPIKey
	e.must(201, operatorToken, "POST", "/v1/partners/"+pid+"/api-keys", nil).json(t, &k)

	stream := openStream(t, srv, k.Key, pid, "", "")
	first := testEnvelope(pid, "customer.created", 1)
	e.produceEvents([]*kgo.Record{envelopeRecord(e.Names.Events, parts, first, 1, time.Now())})
	if _, env := nextEvent(t, stream, 10*time.Second); env.EventID != first.EventID {
		t.Fatalf("the stream sent %s, want %s", env.EventID, first.EventID)
	}

	e.must(204, operatorToken, "DELETE", "/v1/partners/"+pid+"/api-keys/"+k.ID, nil)
	after := testEnvelope(pid, "customer.created", 2)
	e.produceEvents([]*kgo.Record{envelopeRecord(e.Names.Events, parts, after, 2, time.Now())})

	ended := make(chan error, 1)
	var last adminclient.StreamMessage
	go func() {
		for {
			m, err := stream.Next()
			if err != nil {
				ended <- err
				return
			}
			if m.Data != nil {
				last = m
				if m.Event != "error" {
					ended <- fmt.Errorf("the stream sent an event committed after its key was revoked: %s", m.Data)
					return
				}
			}
		}
	}()
	select {
	case err := <-ended:
		if !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream of a revoked key is still open")
	}
	var problem errorBody
	if last.Event != "error" || json.Unmarshal(last.Data, &problem) != nil || problem.Status != 401 ||
		problem.Code != CodeUnauthorized || !strings.Contains(problem.Detail, "revoked") {
		t.Fatalf("the stream of a revoked key ended with %q %s, want an error event with a 401 problem saying the key was revoked", last.Event, last.Data)
	}
	if r := e.do(k.Key, "GET", "/v1/partners/"+pid+"/events/stream", nil); r.Status != 401 {
		t.Fatalf("a revoked key reopened its stream: %s", r)
	}
}
