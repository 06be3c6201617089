package admin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// page reads one feed page.
func (e *env) page(token, pid, after string, limit int, types string) feedPage {
	e.t.Helper()
	q := url.Values{"limit": {itoa(limit)}}
	if after != "" {
		q.Set("after", after)
	}
	if types != "" {
		q.Set("types", types)
	}
	var p feedPage
	e.must(200, token, "GET", "/v1/partners/"+pid+"/events?"+q.Encode(), nil).json(e.t, &p)
	if p.NextCursor == "" {
		e.t.Fatal("feed page without next_cursor")
	}
	return p
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestCursorFeed pages through 50,000 events of one partner interleaved with other partners'
// events in the same partition, 100 at a time: each of the partner's events comes exactly once,
// in log order, and no other partner's event comes at all (R32).
func TestCursorFeed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parts := e.Kafka.TopicConfig().Partitions
	ids := partnersInPartition("feed", 3, int32(parts))
	pid := ids[0]
	key := e.partner(pid)
	const n = 50000
	var recs []*kgo.Record
	var want []string
	lsn := records.LSN(1)
	now := time.Now()
	for i := 0; i < n; i++ {
		env := testEnvelope(pid, "customer.created", i)
		if i%10 == 0 {
			env.Type = "api_key.created"
		}
		lsn++
		recs = append(recs, envelopeRecord(e.Names.Events, parts, env, lsn, now))
		want = append(want, env.EventID)
		if i%4 == 0 { // other partners of the same partition, interleaved
			lsn++
			recs = append(recs, envelopeRecord(e.Names.Events, parts, testEnvelope(ids[1+i%2], "customer.created", i), lsn, now))
		}
	}
	e.produceEvents(recs)

	var got []string
	cursor := ""
	pages := 0
	for {
		p := e.page(key, pid, cursor, 100, "")
		pages++
		if len(p.Data) > 100 {
			t.Fatalf("page of %d events, limit 100", len(p.Data))
		}
		for _, raw := range p.Data {
			var env outbox.Envelope
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatal(err)
			}
			if env.PartnerID != pid {
				t.Fatalf("event %s of partner %s in %s's feed", env.EventID, env.PartnerID, pid)
			}
			got = append(got, env.EventID)
		}
		cursor = p.NextCursor
		if !p.HasMore && len(p.Data) == 0 {
			break
		}
		if pages > 2*n/100 {
			t.Fatal("the feed does not end")
		}
	}
	if len(got) != n {
		t.Fatalf("%d events, want %d", len(got), n)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d is %s, want %s (log order, each once)", i, got[i], want[i])
		}
	}
	t.Logf("%d pages", pages)

	// At the end: an empty page keeps the cursor; new events arrive after it.
	again := e.page(key, pid, cursor, 100, "")
	if len(again.Data) != 0 || again.HasMore {
		t.Fatalf("page after the end: %d events", len(again.Data))
	}
	fresh := testEnvelope(pid, "customer.deleted", 1)
	lsn++
	e.produceEvents([]*kgo.Record{envelopeRecord(e.Names.Events, parts, fresh, lsn, time.Now())})
	next := e.page(key, pid, again.NextCursor, 100, "")
	if len(next.Data) != 1 || !json.Valid(next.Data[0]) {
		t.Fatalf("new event after the end: %d events", len(next.Data))
	}

	// Type filter.
	p := e.page(key, pid, "", 1000, "api_key.*")
	for _, raw := range p.Data {
		var env outbox.Envelope
		_ = json.Unmarshal(raw, &env)
		if env.Type != "api_key.created" {
			t.Fatalf("type filter let %s through", env.Type)
		}
	}
	if len(p.Data) != 1000 {
		t.Errorf("type-filtered page of %d events, want 1000", len(p.Data))
	}

	// Cursors are the partner's own: another partner's cursor and garbage are refused.
	otherKey := e.partner(ids[1])
	e.must(400, otherKey, "GET", "/v1/partners/"+ids[1]+"/events?after="+url.QueryEscape(cursor), nil)
	e.must(400, key, "GET", "/v1/partners/"+pid+"/events?after=not-a-cursor", nil)
	e.must(400, key, "GET", "/v1/partners/"+pid+"/events?limit=1001", nil)
	e.must(400, key, "GET", "/v1/partners/"+pid+"/events?types=Bad.Type", nil)
	e.must(404, otherKey, "GET", "/v1/partners/"+pid+"/events", nil)

	// Retention removes the start of the log: a cursor from before it answers 410.
	first := e.page(key, pid, "", 10, "")
	adm := kadm.NewClient(e.Kafka.Client(t))
	o := kadm.Offsets{}
	o.Add(kadm.Offset{Topic: e.Names.Events, Partition: records.EventPartition(pid, int32(parts)), At: 1000})
	if _, err := adm.DeleteRecords(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	r := e.do(key, "GET", "/v1/partners/"+pid+"/events?after="+url.QueryEscape(first.NextCursor), nil)
	var eb errorBody
	r.json(t, &eb)
	if r.Status != 410 || eb.Code != CodeGone {
		t.Fatalf("expired cursor: %s", r)
	}
}

// TestGetEvent looks an event up by id from the outbox and, once the outbox no longer holds it,
// from the events topic; another partner never finds it.
func TestGetEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	otherKey := e.partner("globex")
	parts := e.Kafka.TopicConfig().Partitions
	env := testEnvelope("acme", "customer.created", 7)
	rec := envelopeRecord(e.Names.Events, parts, env, 42, time.Now())
	var noise []*kgo.Record
	for i := 0; i < 100; i++ {
		noise = append(noise, envelopeRecord(e.Names.Events, parts, testEnvelope("acme", "customer.updated", i), 41, time.Now()))
	}
	e.produceEvents(append(noise, rec))
	r := e.must(200, key, "GET", "/v1/partners/acme/events/"+env.EventID, nil)
	if string(r.Body) != string(rec.Value) {
		t.Fatalf("event from the log: %s", r.Body)
	}
	e.must(404, otherKey, "GET", "/v1/partners/acme/events/"+env.EventID, nil)
	e.must(404, otherKey, "GET", "/v1/partners/globex/events/"+env.EventID, nil)
	e.must(404, key, "GET", "/v1/partners/acme/events/"+outbox.NewEventID(), nil)
	e.must(404, key, "GET", "/v1/partners/acme/events/evt_nope", nil)

	id := e.appendEvent("acme", "customer.deleted", `{"customer_id":"cus_9"}`)
	e.must(200, key, "GET", "/v1/partners/acme/events/"+id, nil)
	e.must(404, otherKey, "GET", "/v1/partners/globex/events/"+id, nil)
}

// TestGetEventOfAnotherPartner: an event id is one partner's event. Another partner asking for it
// under its own path gets 404, and cannot make the id its own by writing a row with it; rows
// that shared an id before ids were unique (migration 0008) are each found by their own partner
// only, neither hiding the other.
func TestGetEventOfAnotherPartner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	acmeKey := e.partner("acme")
	globexKey := e.partner("globex")
	insert := `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ($1, $2, 'customer.created', 'customer', 'cus_1', $3, jsonb_build_object('owner', $2::text))`

	id := e.appendEvent("acme", "customer.created", `{"customer_id":"cus_1","owner":"acme"}`)
	_, err := e.DB.Pool.Exec(ctx, insert, id, "globex", time.Now().Add(time.Hour))
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != "23505" {
		t.Fatalf("globex row with acme's id: err = %v, want unique_violation", err)
	}
	e.must(404, globexKey, "GET", "/v1/partners/globex/events/"+id, nil)
	e.must(404, operatorToken, "GET", "/v1/partners/globex/events/"+id, nil)
	if r := e.must(200, acmeKey, "GET", "/v1/partners/acme/events/"+id, nil); !strings.Contains(string(r.Body), `"owner":"acme"`) {
		t.Fatalf("acme's event: %s", r.Body)
	}

	// Rows as they may be from before the migration, made here by a superuser writing with the
	// outbox's triggers off.
	legacy := outbox.NewEventID()
	err = pgx.BeginFunc(ctx, e.DB.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, insert, legacy, "acme", time.Now()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, insert, legacy, "globex", time.Now().Add(time.Second))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ pid, token string }{{"acme", acmeKey}, {"globex", globexKey}} {
		r := e.must(200, c.token, "GET", "/v1/partners/"+c.pid+"/events/"+legacy, nil)
		var env outbox.Envelope
		if err := json.Unmarshal(r.Body, &env); err != nil || env.PartnerID != c.pid || !strings.Contains(string(env.Data), `"owner":"`+c.pid+`"`) {
			t.Errorf("%s asking for the shared id got %s (%v), want its own event", c.pid, r.Body, err)
		}
	}
}

// TestFeedSkipsAbortedEvents interleaves an aborted transaction of events with committed ones:
// the feed returns the committed events only and pages across the abort marker.
func TestFeedSkipsAbortedEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parts := e.Kafka.TopicConfig().Partitions
	key := e.partner("acme")
	var want []string
	batch := func(n int) []*kgo.Record {
		var recs []*kgo.Record
		for i := 0; i < n; i++ {
			env := testEnvelope("acme", "customer.created", i)
			want = append(want, env.EventID)
			recs = append(recs, envelopeRecord(e.Names.Events, parts, env, 7, time.Now()))
		}
		return recs
	}
	e.produceEvents(batch(5))

	txn := e.Kafka.Client(t, kgo.TransactionalID(e.Kafka.Prefix+".abort-test"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := context.Background()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var aborted []*kgo.Record
	for i := 0; i < 3; i++ {
		aborted = append(aborted, envelopeRecord(e.Names.Events, parts, testEnvelope("acme", "customer.deleted", i), 8, time.Now()))
	}
	if err := txn.ProduceSync(ctx, aborted...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	e.produceEvents(batch(5))

	var got []string
	cursor := ""
	for i := 0; i < 20; i++ {
		p := e.page(key, "acme", cursor, 2, "")
		for _, raw := range p.Data {
			var env outbox.Envelope
			_ = json.Unmarshal(raw, &env)
			if env.Type == "customer.deleted" {
				t.Fatalf("aborted event %s in the feed", env.EventID)
			}
			got = append(got, env.EventID)
		}
		cursor = p.NextCursor
		if !p.HasMore {
			break
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: %s, want %s", i, got[i], want[i])
		}
	}
}

// A feed cursor is a position in the events topic that a reader of the log can take over, as
// docs/consuming-the-log.md states its layout: base64url of {"k":"events","v":{"p","n","o"}},
// where p is outbox.PartitionFor of the partner, n the partition count and o the offset of the
// next record to read. Reading the partition from o, the partner's records alone, continues the
// feed with no gap and no duplicate (R32).
func TestFeedCursorIsALogPosition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parts := e.Kafka.TopicConfig().Partitions
	ids := partnersInPartition("cursor", 2, parts)
	pid, other := ids[0], ids[1]
	key := e.partner(pid)
	var recs []*kgo.Record
	var want []string
	for i := 0; i < 6; i++ {
		env := testEnvelope(pid, "customer.created", i)
		want = append(want, env.EventID)
		recs = append(recs, envelopeRecord(e.Names.Events, parts, env, records.LSN(10+i), time.Now()),
			envelopeRecord(e.Names.Events, parts, testEnvelope(other, "customer.created", i), records.LSN(10+i), time.Now()))
	}
	e.produceEvents(recs)
	page := e.page(key, pid, "", 2, "")
	if len(page.Data) != 2 {
		t.Fatalf("first page: %d events", len(page.Data))
	}

	s := page.NextCursor
	raw, err := base64.URLEncoding.DecodeString(s + strings.Repeat("=", (4-len(s)%4)%4))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		K string `json:"k"`
		V struct {
			P int32 `json:"p"`
			N int32 `json:"n"`
			O int64 `json:"o"`
		} `json:"v"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.K != "events" {
		t.Fatalf("cursor %s: %s, %v", s, raw, err)
	}
	if p, _ := outbox.PartitionFor(pid, parts); doc.V.P != p || doc.V.N != parts {
		t.Fatalf("cursor names partition %d of %d, want %d of %d", doc.V.P, doc.V.N, p, parts)
	}

	cl := e.Kafka.Client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{e.Names.Events: {doc.V.P: kgo.NewOffset().At(doc.V.O)}}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	for len(got) < len(want)-2 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v (got %v)", err, got)
		}
		fs.EachRecord(func(r *kgo.Record) {
			for _, h := range r.Headers {
				if h.Key == records.HeaderPartnerID && string(h.Value) == pid {
					got = append(got, string(r.Key))
				}
			}
		})
	}
	if strings.Join(got, ",") != strings.Join(want[2:], ",") {
		t.Fatalf("read from the cursor's offset: %v, want %v", got, want[2:])
	}
}
