package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
)

// repartition is an events topic whose partition count is doubled under a partner's feed, with
// cdc's checkpoints written by hand: cdc names the count it publishes with in each checkpoint,
// and its sessions change it only at their start (design.md section 5).
type repartition struct {
	e            *env
	before, now  int32 // partition counts
	moved, stays string
	lsn          records.LSN
}

func newRepartition(t *testing.T, e *env) *repartition {
	r := &repartition{e: e, before: int32(e.Kafka.TopicConfig().Partitions)}
	r.now = 2 * r.before
	for i := 0; r.moved == "" || r.stays == ""; i++ {
		id := fmt.Sprintf("move-%d", i)
		if records.EventPartition(id, r.before) == records.EventPartition(id, r.now) {
			if r.stays == "" {
				r.stays = id
			}
		} else if r.moved == "" {
			r.moved = id
		}
	}
	r.checkpoint(r.before, 0)
	return r
}

// checkpoint commits a checkpoint of cdc publishing with count partitions, and with before
// until its last change.
func (r *repartition) checkpoint(count, before int32) {
	r.e.t.Helper()
	r.lsn++
	b, _ := json.Marshal(records.Checkpoint{V: records.CheckpointVersion, Slot: "hookstream", CommitLSN: r.lsn, EndLSN: r.lsn,
		EventsPartitions: count, EventsPartitionsBefore: before, At: time.Now().UTC()})
	r.e.produceEvents([]*kgo.Record{{Topic: r.e.Names.Checkpoints, Partition: 0, Key: []byte("hookstream"), Value: b}})
}

// addPartitions raises the events topic to count partitions and waits until a metadata request
// sent now shows each of them with a leader: the broker serves new partitions a moment after
// the change is accepted, and a record for one of them produced in between is refused.
func (r *repartition) addPartitions(count int32) {
	t := r.e.t
	t.Helper()
	cl := r.e.Kafka.Client(t)
	if _, err := kadm.NewClient(cl).UpdatePartitions(context.Background(), int(count), r.e.Names.Events); err != nil {
		t.Fatalf("add partitions: %v", err)
	}
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%d partitions of %s with a leader", count, r.e.Names.Events), func() bool {
		req := kmsg.NewPtrMetadataRequest()
		topic := kmsg.NewMetadataRequestTopic()
		topic.Topic = kmsg.StringPtr(r.e.Names.Events)
		req.Topics = append(req.Topics, topic)
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != int(count) {
			return false
		}
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return false
			}
		}
		return true
	})
}

// publish writes n events of each partner as cdc publishing with count partitions would, and
// returns their ids by partner.
func (r *repartition) publish(count int32, from, n int) map[string][]string {
	ids := map[string][]string{}
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		for _, pid := range []string{r.moved, r.stays} {
			env := testEnvelope(pid, "customer.created", i)
			r.lsn++
			recs = append(recs, envelopeRecord(r.e.Names.Events, count, env, r.lsn, time.Now()))
			ids[pid] = append(ids[pid], env.EventID)
		}
	}
	r.e.produceEvents(recs)
	return ids
}

// readAll pages through pid's feed from cursor to its end and returns the event ids and the
// last cursor.
func (r *repartition) readAll(a *API, key, pid, cursor string) ([]string, string) {
	r.e.t.Helper()
	saved := r.e.api
	r.e.api = a
	defer func() { r.e.api = saved }()
	var got []string
	for pages := 0; ; pages++ {
		p := r.e.page(key, pid, cursor, 7, "")
		for _, raw := range p.Data {
			var env outbox.Envelope
			if err := json.Unmarshal(raw, &env); err != nil {
				r.e.t.Fatal(err)
			}
			if env.PartnerID != pid {
				r.e.t.Fatalf("event of %s in %s's feed", env.PartnerID, pid)
			}
			got = append(got, env.EventID)
		}
		cursor = p.NextCursor
		if !p.HasMore && len(p.Data) == 0 {
			return got, cursor
		}
		if pages > 100 {
			r.e.t.Fatal("the feed does not end")
		}
	}
}

func sameIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d (each once, in commit order)\ngot  %v\nwant %v", what, len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: event %d is %s, want %s (each once, in commit order)", what, i, got[i], want[i])
		}
	}
}

// TestFeedCursorSurvivesAddedPartitions: partitions are added to the events topic while a
// partner reads its feed. A cursor issued before goes on with no gap and no duplicate: while cdc
// still publishes with the old count the feed stays on the old partition, events published there
// after the change included; once cdc's checkpoint names the new count, the feed reads the rest
// of the old partition, then the partner's new one. A partner whose partition did not change
// keeps its cursor as it is, and a cursor of the new count is read as it is by a process that
// has not seen the new count yet (R32, design.md section 5).
func TestFeedCursorSurvivesAddedPartitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := newRepartition(t, e)
	keys := map[string]string{r.moved: e.partner(r.moved), r.stays: e.partner(r.stays)}
	want := r.publish(r.before, 0, 20)

	cursors := map[string]string{}
	for pid, key := range keys {
		first := e.page(key, pid, "", 5, "")
		cursors[pid] = first.NextCursor
		want[pid] = want[pid][5:]
	}

	// Partitions are added; cdc goes on with the count of its session.
	r.addPartitions(r.now)
	for pid, ids := range r.publish(r.before, 20, 5) {
		want[pid] = append(want[pid], ids...)
	}
	early := e.newAPI() // a process that reads the count before cdc's next session
	for pid, key := range keys {
		got, _ := r.readAll(early, key, pid, cursors[pid])
		sameIDs(t, pid+" before cdc's new count", got, want[pid])
	}

	// cdc's next session publishes with the new count.
	r.checkpoint(r.now, r.before)
	for pid, ids := range r.publish(r.now, 25, 5) {
		want[pid] = append(want[pid], ids...)
	}
	late := e.newAPI()
	var last string
	for pid, key := range keys {
		got, end := r.readAll(late, key, pid, cursors[pid])
		sameIDs(t, pid+" after cdc's new count", got, want[pid])
		if pid == r.moved {
			last = end
		}
	}
	var cur feedCursor
	if e := decodeCursor(last, "events", &cur); e != nil {
		t.Fatal(e)
	}
	if cur.Partitions != r.now || cur.Partition != records.EventPartition(r.moved, r.now) {
		t.Fatalf("the moved partner's cursor names partition %d of %d, want %d of %d", cur.Partition, cur.Partitions,
			records.EventPartition(r.moved, r.now), r.now)
	}

	// The process with the old count cached reads a cursor of the new count as it is.
	more := r.publish(r.now, 30, 3)
	got, _ := r.readAll(early, keys[r.moved], r.moved, last)
	sameIDs(t, "a new cursor read by a process with the old count", got, more[r.moved])

	// Partitions added once more: a cursor of the first count no longer says where the
	// partner's events went in between, and is refused; one of the second count goes on.
	r.addPartitions(2 * r.now)
	r.checkpoint(2*r.now, r.now)
	again := e.newAPI()
	e.api = again
	resp := e.do(keys[r.moved], "GET", "/v1/partners/"+r.moved+"/events?after="+url.QueryEscape(cursors[r.moved]), nil)
	var eb errorBody
	resp.json(t, &eb)
	if resp.Status != 410 || eb.Code != CodeGone || !strings.Contains(eb.Detail, "more than once") {
		t.Fatalf("a cursor from before two changes: %s", resp)
	}
	if got, _ := r.readAll(again, keys[r.moved], r.moved, last); len(got) != 3 {
		t.Fatalf("a cursor of the count before the last change: %d events, want the 3 after it", len(got))
	}
}

// TestEventStreamFollowsAddedPartitions: an open stream of a partner whose partition changes
// sends the events cdc still published in the old partition, then those of the new one, with no
// gap and no duplicate, and its ids from then on name the new partition (R32, design.md
// section 5).
func TestEventStreamFollowsAddedPartitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) {
		c.StreamPoll, c.StreamHeartbeat, c.PartitionCountTTL = 20*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
	})
	r := newRepartition(t, e)
	srv := httptest.NewServer(e.api.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(e.api.EndStreams)
	live := openStream(t, srv, e.partner(r.moved), r.moved, "", "")

	want := r.publish(r.before, 0, 3)[r.moved]
	r.addPartitions(r.now)
	time.Sleep(200 * time.Millisecond) // the stream has looked at the count again: still cdc's old one
	want = append(want, r.publish(r.before, 3, 3)[r.moved]...)
	r.checkpoint(r.now, r.before)
	want = append(want, r.publish(r.now, 6, 3)[r.moved]...)

	var got []string
	var m adminclient.StreamMessage
	for range want {
		var env outbox.Envelope
		m, env = nextEvent(t, live, 10*time.Second)
		got = append(got, env.EventID)
	}
	sameIDs(t, "the stream", got, want)
	var cur feedCursor
	if e := decodeCursor(m.ID, "events", &cur); e != nil {
		t.Fatal(e)
	}
	if cur.Partitions != r.now || cur.Partition != records.EventPartition(r.moved, r.now) {
		t.Fatalf("the stream's last id names partition %d of %d, want %d of %d", cur.Partition, cur.Partitions,
			records.EventPartition(r.moved, r.now), r.now)
	}
}
