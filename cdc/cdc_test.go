package cdc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/cdc"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// R10: only committed events reach Kafka, each once, with the envelope of R8, in its partner's
// partition.
func TestCommittedEventsArePublishedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	start(t, e.config(t))

	a := appendEvents(t, e, "partner_a", 3)
	// A rolled-back transaction leaves nothing.
	ctx := context.Background()
	tx, err := e.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := outbox.Append(ctx, tx, outbox.Event{PartnerID: "partner_a", Type: "customer.deleted",
		Subject: outbox.Subject{Type: "customer", ID: "cus_gone"}, Data: testenv.CatalogData(t, "customer.deleted", nil)}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	b := appendEvents(t, e, "partner_b", 2)

	got := settle(t, e, e.Names.Events, 5, 30*time.Second)
	if fmt.Sprint(got.keys()) != fmt.Sprint(append(append([]string{}, a...), b...)) && !testenv.SameElements(got.keys(), append(a, b...)) {
		t.Fatalf("events topic holds %v, want %v then %v", got.keys(), a, b)
	}
	partitionOf := map[string]int32{}
	snappy := false
	for _, r := range got.records {
		var env outbox.Envelope
		if err := json.Unmarshal(r.Value, &env); err != nil {
			t.Fatalf("value is not an envelope: %v\n%s", err, r.Value)
		}
		if env.EventID != string(r.Key) || env.Type != "customer.created" || env.SchemaVersion != 1 || env.Subject.Type != "customer" {
			t.Fatalf("envelope %s", r.Value)
		}
		if header(r, records.HeaderPartnerID) != env.PartnerID || header(r, records.HeaderType) != env.Type ||
			header(r, records.HeaderSchemaVersion) != "1" || header(r, records.HeaderCommitLSN) == "" {
			t.Fatalf("headers %v", r.Headers)
		}
		if _, err := time.Parse(time.RFC3339Nano, header(r, records.HeaderCommitTime)); err != nil {
			t.Fatalf("commit_time header: %v", err)
		}
		if p, ok := partitionOf[env.PartnerID]; ok && p != r.Partition {
			t.Fatalf("partner %s in partitions %d and %d", env.PartnerID, p, r.Partition)
		}
		partitionOf[env.PartnerID] = r.Partition
		// docs/consuming-the-log.md: batches are snappy, or uncompressed when snappy would not
		// make them smaller; readers need nothing else to decode them.
		if c := r.Attrs.CompressionType(); c != 0 && c != 2 {
			t.Fatalf("events record compressed with codec %d, want snappy (2) or none", c)
		}
		snappy = snappy || r.Attrs.CompressionType() == 2
		if want, _ := outbox.PartitionFor(env.PartnerID, 3); r.Partition != want {
			t.Fatalf("partner %s in partition %d, want %d", env.PartnerID, r.Partition, want)
		}
	}
	if !snappy {
		t.Error("no events batch was snappy-compressed")
	}
	// Within a partner, commit order.
	var gotA []string
	for _, r := range got.records {
		if header(r, records.HeaderPartnerID) == "partner_a" {
			gotA = append(gotA, string(r.Key))
		}
	}
	if fmt.Sprint(gotA) != fmt.Sprint(a) {
		t.Fatalf("partner_a order %v, want %v", gotA, a)
	}
}

// Endpoint rows become full configuration records on the endpoints topic, secrets included,
// with a tombstone on delete (design.md section 5).
func TestEndpointChangesArePublished(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	startStreaming(t, e, e.config(t))
	ctx := context.Background()
	e.DB.Exec(t, `INSERT INTO partner (id, name) VALUES ('p1', 'Partner One') ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name`)
	err := pgx.BeginFunc(ctx, e.DB.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO endpoint (id, partner_id, url, event_types, rate_limit_per_sec)
			VALUES ('ep_1', 'p1', 'https://example.com/hook', '{customer.*,"api_key.created"}', 2.5)`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO endpoint_secret (endpoint_id, id, secret_ciphertext) VALUES ('ep_1', 'sec_1', '\x0102ff')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.DB.Exec(t, `UPDATE endpoint SET status = 'disabled', disabled_reason = 'gone', version = version + 1 WHERE id = 'ep_1'`)
	e.DB.Exec(t, `INSERT INTO endpoint_secret (endpoint_id, id, secret_ciphertext, expires_at) VALUES ('ep_1', 'sec_2', '\x03', now() + interval '1 day')`)
	e.DB.Exec(t, `DELETE FROM endpoint WHERE id = 'ep_1'`)

	got := consume(t, e, e.Names.Endpoints, 4, 30*time.Second)
	var vals []*records.Endpoint
	for _, r := range got.records {
		if string(r.Key) != "ep_1" {
			t.Fatalf("key %q", r.Key)
		}
		if r.Value == nil {
			vals = append(vals, nil)
			continue
		}
		var v records.Endpoint
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatal(err)
		}
		vals = append(vals, &v)
	}
	first := vals[0]
	if first == nil || first.PartnerID != "p1" || first.URL != "https://example.com/hook" || first.Status != "active" ||
		fmt.Sprint(first.EventTypes) != "[customer.* api_key.created]" || first.MaxInFlight != 64 ||
		first.RateLimitPerSec == nil || *first.RateLimitPerSec != 2.5 || len(first.Secrets) != 1 ||
		string(first.Secrets[0].Ciphertext) != "\x01\x02\xff" || first.CreatedLSN == 0 || first.CreatedLSN != first.LSN {
		t.Fatalf("first record (one per transaction, secret included): %+v", first)
	}
	if v := vals[1]; v == nil || v.Status != "disabled" || v.DisabledReason != "gone" || v.Version != 2 || v.CreatedLSN != first.CreatedLSN || v.LSN <= first.LSN {
		t.Fatalf("after update: %+v", v)
	}
	if v := vals[2]; v == nil || len(v.Secrets) != 2 || v.Secrets[1].ExpiresAt == nil {
		t.Fatalf("after second secret: %+v", v)
	}
	if vals[3] != nil {
		t.Fatalf("delete: want a tombstone, got %+v", vals[3])
	}
}

// An endpoint change is committed to Kafka before any event committed after it in PostgreSQL:
// the two never share a Kafka transaction, even when they arrive within one commit interval.
// In one transaction, a reader could see the event committed on its partition while the
// endpoints partition still waits for the transaction's marker, and fanout, catching up to
// the endpoints topic's last stable offset, would match the event without the new endpoint
// (seen on three brokers: the first events to a just-created endpoint never delivered).
func TestEndpointChangeIsCommittedBeforeLaterEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	// One Kafka transaction would take both, but for the rule.
	cfg.CommitInterval, cfg.WriteInterval = 5*time.Second, 5*time.Second
	startStreaming(t, e, cfg)
	// Kafka transactions are paced, not delayed: the first after a quiet spell starts at once.
	// One committed just before makes the next wait out the interval, with both rows in it
	// unless the rule keeps them apart.
	appendEvents(t, e, "p0", 1)
	first := consume(t, e, e.Names.Events, 1, 30*time.Second).records[0]
	ctx := context.Background()
	if _, err := e.DB.Pool.Exec(ctx, `INSERT INTO partner (id) VALUES ('p1') ON CONFLICT (id) DO NOTHING;
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep_1', 'p1', 'https://example.com/hook')`); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, e, "p1", 1)

	endpoint := consume(t, e, e.Names.Endpoints, 1, 30*time.Second).records[0]
	var event *kgo.Record
	for _, r := range consume(t, e, e.Names.Events, 2, 30*time.Second).records {
		if string(r.Key) != string(first.Key) {
			event = r
		}
	}
	eventLSN, err := records.ParseLSN(header(event, records.HeaderCommitLSN))
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, r := range consume(t, e, e.Names.Checkpoints, -1, 12*time.Second).records {
		var cp records.Checkpoint
		if err := json.Unmarshal(r.Value, &cp); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, fmt.Sprintf("%s (endpoints to %d)", cp.CommitLSN, cp.EndpointsOffset))
		if cp.EndpointsOffset > endpoint.Offset {
			if cp.CommitLSN >= eventLSN {
				t.Fatalf("the endpoint change (offset %d) was first committed with the event of %s: checkpoints %v", endpoint.Offset, eventLSN, seen)
			}
			return
		}
	}
	t.Fatalf("no checkpoint covers the endpoint change at offset %d: %v", endpoint.Offset, seen)
}

// Kafka transactions are paced, not delayed: an event committed after a quiet spell is in Kafka
// at once, not a commit interval later; only a stream of commits waits for the interval.
func TestEventAfterQuietSpellIsNotHeldForTheInterval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	cfg.CommitInterval = 8 * time.Second
	startStreaming(t, e, cfg)
	// One reader throughout, warm before the measured event: the wait is cdc's, not a new
	// reader's start on a busy machine.
	read := committedEventsReader(t, e)
	appendEvents(t, e, "p1", 1)
	read(1)
	time.Sleep(cfg.CommitInterval) // the quiet spell

	appendEvents(t, e, "p1", 1)
	began := time.Now()
	read(1)
	if waited := time.Since(began); waited > cfg.CommitInterval/2 {
		t.Fatalf("the event after a quiet spell reached Kafka after %v; the commit interval is %v", waited, cfg.CommitInterval)
	}
}

// A delivery waits for its record to be written, not for its Kafka transaction to commit
// (design.md section 5): cdc's producer writes within the write interval, and the transaction
// commits on its own, slower cadence. A reader of uncommitted records (the sender) has the event
// while a read_committed one does not yet.
func TestRecordsAreWrittenBeforeTheirTransactionCommits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	cfg.CommitInterval, cfg.WriteInterval = 8*time.Second, 10*time.Millisecond
	startStreaming(t, e, cfg)
	committed := committedEventsReader(t, e)
	// The first commit after a quiet spell starts at once; the next waits out the interval.
	appendEvents(t, e, "p1", 1)
	committed(1)
	second := appendEvents(t, e, "p1", 1)[0]

	uncommitted := e.Kafka.Client(t, kgo.ConsumeTopics(e.Names.Events), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	defer uncommitted.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for seen := false; !seen; {
		fs := uncommitted.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("event %s not written within 30 s", second)
		}
		fs.EachRecord(func(r *kgo.Record) { seen = seen || string(r.Key) == second })
	}
	// Written, and its transaction still open: a read_committed reader has nothing more.
	for _, r := range consume(t, e, e.Names.Events, -1, time.Second).records {
		if string(r.Key) == second {
			t.Fatalf("event %s was committed as soon as it was written: written at its transaction's commit, not within the write interval", second)
		}
	}
	committed(1) // and committed once the interval is up
}

// A transaction holding an event cdc leaves to fanout, which reads the events topic
// read_committed, commits at the write interval, not the commit interval.
func TestEventLeftToFanoutIsCommittedAtTheWriteInterval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	cfg.FanoutMax = 0 // every event is fanout's
	cfg.CommitInterval, cfg.WriteInterval = 50*time.Second, 10*time.Millisecond
	startStreaming(t, e, cfg)
	committed := committedEventsReader(t, e) // fails after 30 s, well within the commit interval
	appendEvents(t, e, "p1", 1)
	committed(1)
	appendEvents(t, e, "p1", 1)
	committed(1)
}

// A malformed outbox row goes to the dlq with its reason; the events around it are published.
func TestMalformedRowIsDeadLettered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	start(t, e.config(t))
	before := appendEvents(t, e, "p1", 1)
	// Migration 0013 refuses such a row at INSERT; one written before it, or with the outbox's
	// triggers off, still reaches cdc, which must dead-letter it.
	tx, err := e.DB.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), `SET LOCAL session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), `INSERT INTO outbox_event
		(event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ('evt_01JBADBADBADBADBADBADBADBA', 'p1', 'Not A Type', 'customer', 'c1', now(), '[1,2]')`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := appendEvents(t, e, "p1", 1)

	events := settle(t, e, e.Names.Events, 2, 30*time.Second)
	if fmt.Sprint(events.keys()) != fmt.Sprint(append(before, after...)) {
		t.Fatalf("events %v, want %v", events.keys(), append(before, after...))
	}
	dlq := consume(t, e, e.Names.DLQ, 1, 10*time.Second)
	var dl records.DeadLetter
	if err := json.Unmarshal(dlq.records[0].Value, &dl); err != nil {
		t.Fatal(err)
	}
	if dl.Source != "cdc" || dl.EventID != "evt_01JBADBADBADBADBADBADBADBA" || !strings.HasPrefix(dl.Reason, "malformed: ") || len(dl.Original) == 0 {
		t.Fatalf("dead letter %+v", dl)
	}
	t.Logf("dead letter reason: %s", dl.Reason)
	if l := deadLetterRows(t, e); len(l) != 1 || l[0].eventID != dl.EventID || l[0].reason != cdc.ReasonMalformed || l[0].typ != "Not A Type" {
		t.Fatalf("outbox_dead_letter %+v", l)
	}
}

// R4: rows a platform commits outside the checking writer (raw SQL) whose type the catalog
// does not know, whose data breaks their type's schema or whose schema version is not their
// type's never reach the events topic; each is in the dlq topic and outbox_dead_letter once with
// its reason, the valid rows around them flow in commit order, and a restart lists nothing twice.
func TestCatalogRefusedRowsAreNotPublished(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	stop := start(t, cfg)
	ctx := context.Background()
	raw := func(partner, typ string, version int, data string) string {
		t.Helper()
		id := outbox.NewEventID()
		if _, err := e.DB.Pool.Exec(ctx, `INSERT INTO outbox_event
			(event_id, partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload)
			VALUES ($1, $2, $3, 'customer', 'cus_1', now(), $4, $5)`, id, partner, typ, version, data); err != nil {
			t.Fatal(err)
		}
		return id
	}
	var valid []string
	valid = append(valid, appendEvents(t, e, "p1", 1)...)
	unknown := raw("p1", "invoice.paid", 1, `{"invoice_id":"inv_1"}`)
	valid = append(valid, appendEvents(t, e, "p1", 1)...)
	invalid := raw("p1", "balance.credited", 1,
		`{"customer_id":"cus_1","credit_id":"crd_1","amount":{"value":50.0,"currency":"USD"},"balance":{"value":"62.40","currency":"USD"}}`)
	version := raw("p2", "customer.deleted", 2, `{"customer_id":"cus_1"}`)
	valid = append(valid, appendEvents(t, e, "p1", 2)...)

	events := settle(t, e, e.Names.Events, len(valid), 30*time.Second)
	if fmt.Sprint(events.keys()) != fmt.Sprint(valid) {
		t.Fatalf("events %v, want the valid rows %v in commit order", events.keys(), valid)
	}
	dlq := settle(t, e, e.Names.DLQ, 3, 30*time.Second)
	if !testenv.SameElements(dlq.keys(), []string{unknown, invalid, version}) { // keyed by event id: spread over partitions
		t.Fatalf("dlq %v, want %v", dlq.keys(), []string{unknown, invalid, version})
	}
	want := []deadLetterRow{
		{unknown, "p1", "invoice.paid", cdc.ReasonUnknownType, "'invoice.paid' is not in the event catalog"},
		{invalid, "p1", "balance.credited", cdc.ReasonInvalidData, "data/amount/value"},
		{version, "p2", "customer.deleted", cdc.ReasonSchemaVersion, "published at version 1, got 2"},
	}
	check := func(when string) {
		t.Helper()
		got := deadLetterRows(t, e)
		if len(got) != len(want) {
			t.Fatalf("%s: outbox_dead_letter %+v, want %d rows", when, got, len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.eventID != w.eventID || g.partnerID != w.partnerID || g.typ != w.typ || g.reason != w.reason || !strings.Contains(g.detail, w.detail) {
				t.Errorf("%s: row %d = %+v, want %+v (detail containing %q)", when, i, g, w, w.detail)
			}
		}
	}
	check("first run")
	for _, reason := range []string{cdc.ReasonUnknownType, cdc.ReasonInvalidData, cdc.ReasonSchemaVersion} {
		if v := testenv.Counter(t, reg, "hookstream_cdc_dead_letters_total", "reason", reason); v != 1 {
			t.Errorf("hookstream_cdc_dead_letters_total{reason=%q} = %v, want 1", reason, v)
		}
	}

	// A restart resumes after its checkpoint: nothing is published or listed again.
	stop()
	cfg.Registerer = prometheus.NewRegistry()
	start(t, cfg)
	valid = append(valid, appendEvents(t, e, "p1", 1)...)
	if got := settle(t, e, e.Names.Events, len(valid), 30*time.Second); fmt.Sprint(got.keys()) != fmt.Sprint(valid) {
		t.Fatalf("after the restart: events %v, want %v", got.keys(), valid)
	}
	if got := settle(t, e, e.Names.DLQ, 3, 30*time.Second); len(got.records) != 3 {
		t.Fatalf("after the restart: %d dead letters, want 3", len(got.records))
	}
	check("after the restart")
}

// A Config without a catalog publishes every valid envelope, as a Writer without one accepts
// every well-formed event.
func TestNoCatalogPublishesUnknownTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	cfg.Catalog = nil
	start(t, cfg)
	id := outbox.NewEventID()
	if _, err := e.DB.Pool.Exec(context.Background(), `INSERT INTO outbox_event
		(event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ($1, 'p1', 'invoice.paid', 'invoice', 'inv_1', now(), '{}')`, id); err != nil {
		t.Fatal(err)
	}
	if got := settle(t, e, e.Names.Events, 1, 30*time.Second); len(got.records) != 1 || string(got.records[0].Key) != id {
		t.Fatalf("events %v, want %s", got.keys(), id)
	}
	if l := deadLetterRows(t, e); len(l) != 0 {
		t.Fatalf("outbox_dead_letter %+v, want none", l)
	}
}

// With no outbox traffic the heartbeat keeps the slot's confirmed position moving, so WAL
// written by other databases of the cluster does not pile up behind it.
func TestIdleHeartbeatAdvancesSlot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	cfg.HeartbeatInterval = 200 * time.Millisecond
	cfg.StatusInterval = 200 * time.Millisecond
	start(t, cfg)
	ctx := context.Background()
	confirmed := func() records.LSN {
		var s *string
		if err := e.DB.Pool.QueryRow(ctx, `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, cfg.Slot).Scan(&s); err != nil {
			return 0
		}
		if s == nil {
			return 0
		}
		l, _ := records.ParseLSN(*s)
		return l
	}
	deadline := time.Now().Add(30 * time.Second)
	var first records.LSN
	for first == 0 && time.Now().Before(deadline) {
		first = confirmed()
		time.Sleep(100 * time.Millisecond)
	}
	advances := 0
	last := first
	for advances < 3 && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		if c := confirmed(); c > last {
			advances++
			last = c
		}
	}
	if advances < 3 {
		t.Fatalf("confirmed_flush_lsn advanced %d times in 30s (from %s to %s), want 3", advances, first, last)
	}
}

// Stopping cdc releases the slot at once, so a standby can take over after a graceful stop.
func TestStopReleasesSlot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	for i := 0; i < 5; i++ {
		cfg.Registerer = prometheus.NewRegistry()
		stop := startStreaming(t, e, cfg)
		appendEvents(t, e, "p1", 1)
		stop()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var active bool
			// A missing slot is not held either (a session that failed before its first
			// checkpoint recreates the slot, and the stop may come in between).
			if err := e.DB.Pool.QueryRow(context.Background(), `SELECT coalesce((SELECT active FROM pg_replication_slots WHERE slot_name = $1), false)`, cfg.Slot).Scan(&active); err != nil {
				t.Fatal(err)
			}
			if !active {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: slot still active 10s after cdc stopped", i)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// An event appended just before a stop is published by the next session.
	cfg.Registerer = prometheus.NewRegistry()
	start(t, cfg)
	if got := settle(t, e, e.Names.Events, 5, 30*time.Second); len(got.records) != 5 {
		t.Fatalf("%d events, want 5", len(got.records))
	}
}

// A new slot reaches its consistent point only when the transactions running anywhere in the
// cluster have ended; until then it already shows as active. What is committed in that window
// is in the slot's snapshot, not in the stream, so a writer (and a test) must wait for the
// consistent point: this test holds a transaction open elsewhere while cdc starts, and the
// endpoint written once the slot streams is published.
func TestSlotStreamsOnlyAfterItsConsistentPoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := testenv.NewDatabase(t) // another database of the same cluster
	ctx := context.Background()
	tx, err := other.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT txid_current()`); err != nil { // holds an xid
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(2 * time.Second)
		_ = tx.Commit(ctx)
	}()
	startStreaming(t, e, e.config(t))
	select {
	case <-released:
	default:
		t.Fatal("the slot was reported streaming while a transaction in the cluster was still open")
	}
	if _, err := e.DB.Pool.Exec(ctx, `INSERT INTO partner (id, name) VALUES ('p1', 'P') ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name;
		INSERT INTO endpoint (id, partner_id, url) VALUES ('ep_1', 'p1', 'https://example.com/hook')`); err != nil {
		t.Fatal(err)
	}
	if got := consume(t, e, e.Names.Endpoints, 1, 30*time.Second); string(got.records[0].Key) != "ep_1" {
		t.Fatalf("endpoint record %q", got.records[0].Key)
	}
}

// Every checkpoint names the partition count cdc published its events with, which readers of
// one partner's partition follow after partitions are added (design.md section 5).
func TestCheckpointNamesThePartitionCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	startStreaming(t, e, e.config(t))
	appendEvents(t, e, "p0", 3)
	consume(t, e, e.Names.Events, 3, 30*time.Second)
	want := int32(e.Kafka.TopicConfig().Partitions)
	n := 0
	for _, r := range consume(t, e, e.Names.Checkpoints, -1, 5*time.Second).records {
		if strings.HasSuffix(string(r.Key), "/session") {
			continue // the session markers
		}
		var cp records.Checkpoint
		if err := json.Unmarshal(r.Value, &cp); err != nil {
			t.Fatal(err)
		}
		if cp.EventsPartitions != want {
			t.Fatalf("checkpoint at offset %d names %d partitions, the events were published with %d", r.Offset, cp.EventsPartitions, want)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no checkpoint")
	}
}

// A run of endpoint changes that alter matching shares Kafka transactions instead of taking one
// each with the stream waiting for every commit (on the real broker about 20 ms each: 98 filter
// changes held every partner's events about 2 s), and the event after them still goes into a
// later transaction than any of them.
func TestRunOfEndpointChangesSharesTransactions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	stop := startStreaming(t, e, cfg)
	appendEvents(t, e, "p0", 1)
	consume(t, e, e.Names.Events, 1, 30*time.Second)
	stop()

	// Committed while cdc is away, so the next session reads them as one backlog of WAL.
	ctx := context.Background()
	const changes = 40
	for i := range changes {
		if _, err := e.DB.Pool.Exec(ctx, `INSERT INTO endpoint (id, partner_id, url) VALUES ($1, 'p1', 'https://example.com/hook')`,
			fmt.Sprintf("ep_run%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	appendEvents(t, e, "p1", 1)
	startStreaming(t, e, e.config(t)) // the same slot, metrics of its own
	eps := consume(t, e, e.Names.Endpoints, changes, 30*time.Second).records
	var event *kgo.Record
	for _, r := range consume(t, e, e.Names.Events, 2, 30*time.Second).records {
		if header(r, records.HeaderPartnerID) == "p1" {
			event = r
		}
	}
	if event == nil {
		t.Fatal("the event after the endpoint changes was not published")
	}
	eventLSN, err := records.ParseLSN(header(event, records.HeaderCommitLSN))
	if err != nil {
		t.Fatal(err)
	}
	lastEndpoint := eps[len(eps)-1].Offset

	sessions, after := 0, 0
	covered := false
	for _, r := range consume(t, e, e.Names.Checkpoints, -1, 5*time.Second).records {
		if strings.HasSuffix(string(r.Key), "/session") {
			sessions++
			continue
		}
		if sessions < 2 {
			continue // the first session's
		}
		after++
		var cp records.Checkpoint
		if err := json.Unmarshal(r.Value, &cp); err != nil {
			t.Fatal(err)
		}
		if !covered && cp.EndpointsOffset > lastEndpoint {
			covered = true
			if cp.CommitLSN >= eventLSN {
				t.Fatalf("the last endpoint change was first committed with the event of %s", eventLSN)
			}
		}
	}
	if !covered {
		t.Fatal("no checkpoint of the second session covers the endpoint changes")
	}
	if after > changes/4 {
		t.Fatalf("%d Kafka transactions for %d endpoint changes and one event: one per change, or nearly", after, changes)
	}
	t.Logf("%d Kafka transactions for %d endpoint changes and one event", after, changes)
}

// Endpoint changes decoded while a Kafka transaction commits, whose own commit message comes
// after that transaction returned with nothing queued, are produced into a new transaction: the
// session once failed there ("cannot produce record transactionally if not in a transaction")
// and restarted, holding every partner's events about a second (seen after a run of endpoint
// changes on the real broker).
func TestEndpointChangesBesideCommitsKeepTheSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	startStreaming(t, e, cfg)
	ctx := context.Background()
	const rounds = 300
	for i := range rounds {
		if i%10 == 0 {
			appendEvents(t, e, "p2", 1)
		}
		if _, err := e.DB.Pool.Exec(ctx, `INSERT INTO endpoint (id, partner_id, url) VALUES ($1, 'p3', 'https://example.com/hook')`,
			fmt.Sprintf("ep_beside%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	consume(t, e, e.Names.Endpoints, rounds, 60*time.Second)
	consume(t, e, e.Names.Events, rounds/10, 60*time.Second)
	// A commit's time is observed before the commit is counted, so with the counter read first
	// the histogram holds at least as many.
	txns := testenv.Counter(t, reg, "hookstream_cdc_kafka_transactions_total")
	if timed := testenv.HistogramCount(t, reg, "hookstream_cdc_kafka_commit_seconds"); timed == 0 || float64(timed) < txns {
		t.Fatalf("%d commit times observed for %v transactions", timed, txns)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "hookstream_cdc_session_failures_total" {
			if n := f.GetMetric()[0].GetCounter().GetValue(); n != 0 {
				t.Fatalf("%v cdc sessions failed during %d rounds of an event then an endpoint change", n, rounds)
			}
			return
		}
	}
	t.Fatal("no hookstream_cdc_session_failures_total")
}

// Reads are spaced only while WAL flows: an event committed after a quiet spell is read, and in
// Kafka, at once, not a read interval later.
func TestEventAfterQuietSpellIsNotHeldForTheReadInterval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(t)
	cfg.ReadInterval = 4 * time.Second
	cfg.CommitInterval = 8 * time.Second
	cfg.WriteInterval = 8 * time.Second // reads are spaced by at most it less the linger
	cfg.HeartbeatInterval = time.Hour   // its logical message is WAL: no flow but the test's
	startStreaming(t, e, cfg)
	read := committedEventsReader(t, e)
	appendEvents(t, e, "p1", 1)
	read(1)
	time.Sleep(cfg.CommitInterval) // the quiet spell, longer than both intervals

	appendEvents(t, e, "p1", 1)
	began := time.Now()
	read(1)
	if waited := time.Since(began); waited > cfg.ReadInterval/2 {
		t.Fatalf("the event after a quiet spell reached Kafka after %v; the read interval is %v", waited, cfg.ReadInterval)
	}
}

// committedEventsReader returns a function that reads want more committed records of the events
// topic, failing the test after 30 s. One reader serves every call, started now: the waits it
// measures are cdc's, not a new reader's start on a busy machine.
func committedEventsReader(t *testing.T, e *env) func(want int) {
	t.Helper()
	cl := e.Kafka.Client(t, kgo.ConsumeTopics(e.Names.Events), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	t.Cleanup(cl.Close)
	return func(want int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for n := 0; n < want; {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("%d of %d events read in 30 s", n, want)
			}
			n += fs.NumRecords()
		}
	}
}

// cdc takes its Kafka transactions with two producers in turn (design.md section 5): a new
// session fences a previous holder of either transactional id before it writes anything, so
// what a crashed session left open under either id is aborted ahead of the new session's first
// checkpoint (and ahead of any copy it publishes, design.md section 6), never reaches a
// read_committed reader, and a zombie cdc can commit under neither id.
func TestSessionFencesBothTransactionalIDs(t *testing.T) {
	t.Parallel()
	for _, suffix := range []string{"", ".2"} {
		t.Run("id"+suffix, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := e.config(t)
			ctx := context.Background()
			id := cfg.Prefix + ".cdc." + cfg.Slot + suffix
			zombie := e.Kafka.Client(t, kgo.TransactionalID(id),
				kgo.TransactionTimeout(10*time.Minute), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			if err := zombie.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			var zombieID int64
			for _, topic := range []string{e.Names.Checkpoints, e.Names.Events} {
				stale := &kgo.Record{Topic: topic, Partition: 0, Key: []byte("zombie"), Value: []byte(`{}`)}
				if err := zombie.ProduceSync(ctx, stale).FirstErr(); err != nil {
					t.Fatal(err)
				}
				zombieID = stale.ProducerID
			}

			startStreaming(t, e, cfg)
			ids := appendEvents(t, e, "p0", 1)
			got := consume(t, e, e.Names.Events, 1, 60*time.Second).records
			if err := zombie.EndTransaction(ctx, kgo.TryCommit); err == nil {
				t.Fatalf("a holder of %q committed after cdc's session began", id)
			}
			got = append(got, consumeFor(t, e, e.Names.Events, -1, 3*time.Second, 0).records...)
			for _, r := range got {
				if string(r.Key) == "zombie" {
					t.Fatalf("the zombie's record is committed (offset %d)", r.Offset)
				}
			}
			if string(got[0].Key) != ids[0] {
				t.Fatalf("events topic begins with %q, want the event %s", got[0].Key, ids[0])
			}

			abortAt, checkpointAt := zombieAbortAndFirstCheckpoint(t, e, cfg.Slot, zombieID)
			if abortAt < 0 || abortAt > checkpointAt {
				t.Fatalf("the zombie's transaction was aborted at offset %d of the checkpoint topic, want before the session's first checkpoint at %d (-1: not aborted)", abortAt, checkpointAt)
			}
		})
	}
}

// zombieAbortAndFirstCheckpoint reads partition 0 of the checkpoint topic uncommitted, with its
// transaction markers, until it has found slot's first checkpoint, and returns that offset and
// the offset of the abort marker of the producer zombie (-1 when none comes before it).
func zombieAbortAndFirstCheckpoint(t *testing.T, e *env, slot string, zombie int64) (abortAt, checkpointAt int64) {
	t.Helper()
	cl := e.Kafka.Client(t,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{e.Names.Checkpoints: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords())
	abortAt = -1
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		fetches := cl.PollFetches(ctx)
		cancel()
		for _, r := range fetches.Records() {
			switch {
			case r.Attrs.IsControl():
				// A marker's key: version (int16), then type (int16): 0 abort, 1 commit.
				if r.ProducerID == zombie && len(r.Key) >= 4 && r.Key[2] == 0 && r.Key[3] == 0 && abortAt < 0 {
					abortAt = r.Offset
				}
			case string(r.Key) == slot:
				return abortAt, r.Offset
			}
		}
	}
	t.Fatalf("no checkpoint of slot %s in the checkpoint topic after 30 s", slot)
	return 0, 0
}
