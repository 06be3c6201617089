package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/topics"
)

// hopTimes are the Kafka timestamps (the producer's CreateTime) of each event's record on the
// events topic (written by cdc) and of its first initial record on the deliveries topic
// (written by fanout, or by cdc in the same transaction for an event it fans out itself), by
// event id.
type hopTimes struct {
	events     map[string]time.Time
	deliveries map[string]time.Time
}

// readHopTimes reads the events and deliveries topics of prefix from the start, read_committed,
// until it holds both timestamps of every id in want or timeout passes; what it could not find
// is simply absent from the maps.
func readHopTimes(ctx context.Context, brokers []string, prefix string, want map[string]harness.Commit, timeout time.Duration) (hopTimes, error) {
	names := topics.For(prefix)
	h := hopTimes{events: map[string]time.Time{}, deliveries: map[string]time.Time{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(names.Events, names.Deliveries),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return h, fmt.Errorf("hops: kafka client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for len(h.events) < len(want) || len(h.deliveries) < len(want) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) { h.add(r, names, want) })
	}
	return h, nil
}

// add takes one record's timestamp if it is the first of its kind for a wanted event.
func (h hopTimes) add(r *kgo.Record, names topics.Names, want map[string]harness.Commit) {
	switch r.Topic {
	case names.Events:
		id := string(r.Key)
		if _, ok := want[id]; ok {
			h.events[id] = r.Timestamp
		}
	case names.Deliveries:
		d, err := records.UnmarshalDelivery(r.Value)
		if err != nil || d.Trigger != records.TriggerInitial {
			return
		}
		if _, ok := want[d.EventID]; !ok {
			return
		}
		if t, seen := h.deliveries[d.EventID]; !seen || r.Timestamp.Before(t) {
			h.deliveries[d.EventID] = r.Timestamp
		}
	}
}

// hops splits each delivery's commit→receipt into commit→events (cdc), events→deliveries
// (fanout; about 0 for an event cdc fans out itself, whose deliveries it produces with the
// event) and deliveries→receipt (sender and HTTP, with the commit of the transaction that
// holds the delivery), in milliseconds, for the events whose three times are all known.
func (h hopTimes) hops(commits map[string]harness.Commit, got map[string]harness.Receipt) (cdc, fanout, send []float64) {
	for id, c := range commits {
		ev, ok1 := h.events[id]
		dl, ok2 := h.deliveries[id]
		rc, ok3 := got[id]
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		cdc = append(cdc, ms(ev.Sub(c.End)))
		fanout = append(fanout, ms(dl.Sub(ev)))
		send = append(send, ms(rc.First.Sub(dl)))
	}
	return cdc, fanout, send
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// writeEvents writes one line per event whose three times are known, in commit order: its
// commit (seconds since the first) and its hops in milliseconds. A stall shows as a run of
// lines whose same hop is high, and says which part of the chain stalled. It goes to
// events.csv beside the run's process logs.
func (h hopTimes) writeEvents(path string, commits *harness.CommitLog, got map[string]harness.Receipt) error {
	type line struct {
		at                 time.Duration
		cdc, fanout, sendr float64
	}
	var lines []line
	for id, c := range commits.ByID {
		ev, ok1 := h.events[id]
		dl, ok2 := h.deliveries[id]
		rc, ok3 := got[id]
		if ok1 && ok2 && ok3 {
			lines = append(lines, line{c.End.Sub(commits.First), ms(ev.Sub(c.End)), ms(dl.Sub(ev)), ms(rc.First.Sub(dl))})
		}
	}
	slices.SortFunc(lines, func(a, b line) int { return cmp.Compare(a.at, b.at) })
	var b strings.Builder
	b.WriteString("seconds,cdc_ms,fanout_ms,sender_ms,total_ms\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "%.4f,%.1f,%.1f,%.1f,%.1f\n", l.at.Seconds(), l.cdc, l.fanout, l.sendr, l.cdc+l.fanout+l.sendr)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeTimeline writes, per 250 ms since the first commit, how many of the workload's events
// had been committed, had their record on the events topic, had their delivery record on the
// deliveries topic, and had reached the receiver: where a burst queues, hop by hop. It goes to
// timeline.csv beside the run's process logs.
func (h hopTimes) writeTimeline(path string, commits *harness.CommitLog, got map[string]harness.Receipt) error {
	const step = 250 * time.Millisecond
	bucket := func(t time.Time) int { return int(t.Sub(commits.First) / step) }
	var counts [][4]int
	add := func(col int, t time.Time) {
		b := max(bucket(t), 0)
		for len(counts) <= b {
			counts = append(counts, [4]int{})
		}
		counts[b][col]++
	}
	for id, c := range commits.ByID {
		add(0, c.End)
		if t, ok := h.events[id]; ok {
			add(1, t)
		}
		if t, ok := h.deliveries[id]; ok {
			add(2, t)
		}
		if r, ok := got[id]; ok {
			add(3, r.First)
		}
	}
	var b strings.Builder
	b.WriteString("seconds,committed,events,deliveries,received\n")
	var sum [4]int
	for i, c := range counts {
		for k := range sum {
			sum[k] += c[k]
		}
		fmt.Fprintf(&b, "%.2f,%d,%d,%d,%d\n", (time.Duration(i+1) * step).Seconds(), sum[0], sum[1], sum[2], sum[3])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
