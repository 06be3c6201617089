package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// How soon a restarted member must consume its partitions again. Static membership makes it
// take them back at once; without it the group waits for the killed member's session to time
// out (45 s). The slack covers starting the process on a busy 2-core machine.
const (
	handover      = 5 * time.Second
	handoverSlack = 5 * time.Second
)

// A sender, fanout, retry or recorder process killed with SIGKILL (nothing left, committed or
// flushed) and started again with the same HOOKSTREAM_INSTANCE_ID consumes every partition of
// its topic again within handover (plus slack) of its restart: a record put on each partition
// is processed.
func TestRestartedMemberTakesItsPartitionsBack(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sender", "fanout", "retry", "recorder"} {
		t.Run(kind, func(t *testing.T) {
			m := newMemberEnv(t, kind)
			args := append(m.args, "--instance-id", kind+"-0")
			p := testenv.StartProcess(t, args...)
			m.waitProcessed(t, m.feed(t), time.Minute) // the member has joined and consumes
			p.Kill()
			backlog := m.feed(t) // waits for the restarted member
			restarted := time.Now()
			testenv.StartProcess(t, args...)
			m.waitProcessed(t, backlog, handover+handoverSlack)
			t.Logf("%s lane: %s: every partition consumed again %s after the restart", m.k.Lane, kind, time.Since(restarted).Round(10*time.Millisecond))
		})
	}
}

// memberEnv is what one kind of member consumes and how the test sees that it did.
type memberEnv struct {
	kind     string
	db       *testenv.Database
	k        *testenv.Kafka
	names    topics.Names
	producer *kgo.Client
	args     []string // the command and its flags

	mu   sync.Mutex
	seen map[string]int // ids processed, and how often: webhook-ids received, event ids delivered, delivery ids recorded
	// delay is how long the sender's receiver takes to answer (nanoseconds), so that requests
	// are in flight when a test stops the sender.
	delay atomic.Int64
}

// A sender, fanout, retry or recorder started while the broker is down waits for it (its
// /readyz says kafka) instead of exiting into a supervisor's restart loop, and consumes every
// partition once the broker is back.
func TestMemberWaitsOutABrokerOutage(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sender", "fanout", "retry", "recorder"} {
		t.Run(kind, func(t *testing.T) {
			m := newMemberEnvOn(t, kind, testenv.NewRestartableKafka(t))
			m.k.Stop(t)
			p := testenv.StartProcess(t, append(m.args, "--instance-id", kind+"-0")...)
			// Long enough for every start-up step to have failed and its retries to have begun.
			time.Sleep(5 * time.Second)
			if p.Exited() {
				t.Fatalf("%s exited while the broker was down:\n%s", kind, p.LogTail())
			}
			m.k.Start(t)
			m.waitProcessed(t, m.feed(t), 2*time.Minute)
			if p.Exited() {
				t.Fatalf("%s exited:\n%s", kind, p.LogTail())
			}
		})
	}
}

func newMemberEnv(t *testing.T, kind string) *memberEnv {
	return newMemberEnvOn(t, kind, testenv.NewKafka(t))
}

func newMemberEnvOn(t *testing.T, kind string, k *testenv.Kafka) *memberEnv {
	t.Helper()
	m := &memberEnv{kind: kind, db: testenv.NewDatabase(t), k: k, seen: map[string]int{}}
	m.names = m.k.CreateTopics(t)
	m.producer = m.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	m.args = []string{kind, "--kafka-brokers", strings.Join(m.k.Brokers, ","), "--topic-prefix", m.k.Prefix,
		"--metrics-addr", "", "--log-format", "text"}
	ctx := context.Background()
	switch kind {
	case "recorder":
		m.args = append(m.args, "--database-url", m.db.URL)
		if _, err := m.db.Pool.Exec(ctx, `INSERT INTO partner (id) VALUES ('p1');
			INSERT INTO endpoint (id, partner_id, url) VALUES ('ep1', 'p1', 'https://x.example')`); err != nil {
			t.Fatal(err)
		}
	case "retry":
		m.args = append(m.args, "--database-url", m.db.URL)
		m.watchDeliveries(t)
	case "fanout":
		m.putEndpoint(t, "https://x.example/hook", secretbox.Keyring{})
		m.watchDeliveries(t)
	case "sender":
		raw, key := testenv.SecretKey(t)
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Duration(m.delay.Load()))
			m.saw(r.Header.Get("webhook-id"))
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(rcv.Close)
		u, _ := url.Parse(rcv.URL)
		m.args = append(m.args, "--secret-key", raw, "--allow-http", "--egress-allow-cidrs", "127.0.0.0/8",
			"--egress-allow-ports", u.Port())
		m.putEndpoint(t, rcv.URL+"/hook", key)
	}
	return m
}

func (m *memberEnv) saw(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen[id]++
}

// putEndpoint publishes endpoint ep1 of partner p1, subscribed to every type, as cdc does; with
// a key, it has a secret sealed under it.
func (m *memberEnv) putEndpoint(t *testing.T, u string, key secretbox.Keyring) {
	t.Helper()
	now := time.Now().UTC()
	ep := records.Endpoint{V: records.EndpointVersion, ID: "ep1", PartnerID: "p1", URL: u, Status: "active",
		EventTypes: []string{"*"}, SchemaVersion: 1, MaxInFlight: 8, Version: 1, CreatedAt: now, UpdatedAt: now,
		CreatedLSN: 1, LSN: 1}
	if !key.IsZero() {
		secret, err := webhook.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := key.Seal([]byte(secret), secretbox.AAD("ep1", "sec_1"))
		if err != nil {
			t.Fatal(err)
		}
		ep.Secrets = []records.Secret{{ID: "sec_1", Ciphertext: sealed, CreatedAt: now.Add(-time.Hour)}}
	}
	b, err := json.Marshal(ep)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.producer.ProduceSync(context.Background(), &kgo.Record{Topic: m.names.Endpoints, Key: []byte("ep1"), Value: b}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// watchDeliveries notes the event id of every committed delivery record until the test ends.
func (m *memberEnv) watchDeliveries(t *testing.T) {
	m.k.Follow(t, m.names.Deliveries, func(fs kgo.Fetches) {
		fs.EachRecord(func(r *kgo.Record) {
			if d, err := records.UnmarshalDelivery(r.Value); err == nil {
				m.saw(d.EventID)
			}
		})
	}, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
}

// feed puts one record on every partition the member consumes and returns the ids that show
// each processed.
func (m *memberEnv) feed(t *testing.T) []string {
	t.Helper()
	var recs []*kgo.Record
	var ids []string
	parts := m.k.TopicConfig().Partitions
	now := time.Now().UTC()
	delivery := func(ev string) records.Delivery {
		body := fmt.Sprintf(`{"event_id":%q,"type":"customer.created","occurred_at":%q,"partner_id":"p1","subject":{"type":"customer","id":"cus_1"},"schema_version":1,"data":{}}`,
			ev, now.Format(time.RFC3339Nano))
		return records.Delivery{V: records.DeliveryVersion, DeliveryID: records.DeliveryID(ev, "ep1"), EventID: ev, EndpointID: "ep1",
			PartnerID: "p1", EventType: "customer.created", AttemptNo: 1, Trigger: records.TriggerInitial, Body: []byte(body),
			EventLSN: 2, CreatedAt: now}
	}
	for p := int32(0); p < int32(parts); p++ {
		ev := outbox.NewEventID()
		switch m.kind {
		case "recorder":
			a := records.Attempt{V: records.AttemptVersion, DeliveryID: records.DeliveryID(ev, "ep1"), EventID: ev, EndpointID: "ep1",
				PartnerID: "p1", EventType: "customer.created", AttemptNo: 1, Trigger: records.TriggerInitial, StartedAt: now,
				Status: 200, LatencyMS: 3, Outcome: records.OutcomeDelivered}
			recs = append(recs, &kgo.Record{Topic: m.names.Attempts, Partition: p, Key: []byte(a.DeliveryID), Value: a.AppendJSON(nil)})
			ids = append(ids, a.DeliveryID)
		case "sender":
			recs = append(recs, &kgo.Record{Topic: m.names.Deliveries, Partition: p, Key: []byte("ep1"), Value: delivery(ev).AppendJSON(nil)})
			ids = append(ids, ev)
		case "fanout":
			d := delivery(ev)
			recs = append(recs, &kgo.Record{Topic: m.names.Events, Partition: p, Key: []byte(ev), Value: d.Body, Headers: []kgo.RecordHeader{
				{Key: records.HeaderPartnerID, Value: []byte("p1")}, {Key: records.HeaderType, Value: []byte("customer.created")},
				{Key: records.HeaderSchemaVersion, Value: []byte("1")}, {Key: records.HeaderCommitLSN, Value: []byte(records.LSN(2).String())},
			}})
			ids = append(ids, ev)
		case "retry":
			// Every tier is a group of its own: each one's partitions must come back.
			for _, tier := range topics.RetryTiers {
				if tier != topics.RetryTiers[0] {
					ev = outbox.NewEventID()
				}
				d := delivery(ev)
				d.AttemptNo, d.Trigger, d.DueAt = 2, records.TriggerRetry, now
				recs = append(recs, &kgo.Record{Topic: m.names.Retry[tier], Partition: p, Key: []byte("ep1"), Value: d.AppendJSON(nil)})
				ids = append(ids, ev)
			}
		}
	}
	if err := m.producer.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// waitProcessed waits until every id shows processed.
func (m *memberEnv) waitProcessed(t *testing.T, ids []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		missing := m.missing(t, ids)
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d records (one per partition) not processed within %s", m.kind, missing, len(ids), within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (m *memberEnv) missing(t *testing.T, ids []string) int {
	t.Helper()
	if m.kind == "recorder" {
		var n int
		if err := m.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM delivery_attempt WHERE delivery_id = ANY($1)`, ids).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return len(ids) - n
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, id := range ids {
		if m.seen[id] == 0 {
			n++
		}
	}
	return n
}
