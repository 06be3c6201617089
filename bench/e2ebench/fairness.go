package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// partnerB is the second partner of workloads f and g, whose steady load runs beside the first
// partner's (partner) backlog or load.
const partnerB = "bench-b"

// addPartnerB creates partner B of workloads f and g with its one endpoint, and the generator
// of its events.
func (s *session) addPartnerB(ctx context.Context) (*harness.Generator, []int, error) {
	if err := s.env.admin.CreatePartner(ctx, partnerB); err != nil {
		return nil, nil, err
	}
	genB, err := newGenerator(s.env.pool, partnerB, 4)
	if err != nil {
		return nil, nil, err
	}
	epsB, _, err := s.addEndpointsFor(ctx, partnerB, 1, "")
	return genB, epsB, err
}

// steadyB runs partner B's steady load of workloads f and g (-f-rate for -f-duration) and waits
// until its endpoints received it; it returns the commits and their tally.
func (s *session) steadyB(ctx context.Context, genB *harness.Generator, epsB []int) (*harness.CommitLog, tally, error) {
	load, err := genB.Steady(ctx, s.o.fRate, s.o.fDuration)
	if err != nil {
		return nil, tally{}, err
	}
	if err := s.waitReceived(ctx, epsB, load, s.o.tailTimeout); err != nil {
		return nil, tally{}, err
	}
	return load, s.tally(load, epsB), nil
}

// fairness is workload f (design.md section 7, the partners' fair share): partner B's steady
// load alone, then beside partner A's replay of its history, the backlog a partner makes when it
// replays a month. A's events are committed and delivered first (set-up, outside the figures);
// then, while B's second steady load runs, A asks for a replay job from the event log for each
// of its endpoints, so its deliveries reach the sender as fast as the replay engine writes them.
// B's latency beside the replay should stay within the bound design.md section 7 states of its
// latency alone; A's rate is what the replay still gets.
func (s *session) fairness(ctx context.Context) error {
	genB, epsB, err := s.addPartnerB(ctx)
	if err != nil {
		return err
	}
	epsA, idsA, err := s.addEndpointsFor(ctx, partner, s.o.fEndpoints, "")
	if err != nil {
		return err
	}
	history, err := s.gen.Burst(ctx, max(1, s.o.fDeliveries/len(epsA)), 100)
	if err != nil {
		return err
	}
	s.logf("A's history: %d events to %d endpoints committed; waiting for its first deliveries", len(history.ByID), len(epsA))
	if err := s.waitReceived(ctx, epsA, history, s.o.drainTimeout); err != nil {
		return err
	}
	if t := s.tally(history, epsA); t.missing > 0 || t.bad > 0 {
		return fmt.Errorf("A's history was not delivered before its replay: %d of %d missing (e.g. %s), %d bad signatures",
			t.missing, t.expected, t.example, t.bad)
	}

	if err := s.begin(ctx); err != nil {
		return err
	}
	alone, aloneT, err := s.steadyB(ctx, genB, epsB)
	if err != nil {
		return err
	}

	s.logf("B alone: %d events; now A replays its %d deliveries beside B", len(alone.ByID), len(history.ByID)*len(epsA))
	replayStart := time.Now()
	jobs := make([]string, len(idsA))
	for i, id := range idsA {
		var job struct {
			JobID string `json:"job_id"`
		}
		body := map[string]string{"source": "log", "since": history.First.Add(-time.Second).UTC().Format(time.RFC3339Nano)}
		if err := s.env.admin.Call(ctx, "POST", "/v1/partners/"+partner+"/endpoints/"+id+"/replay", body, http.StatusAccepted, &job); err != nil {
			return err
		}
		jobs[i] = job.JobID
	}
	beside, besideT, err := s.steadyB(ctx, genB, epsB)
	if err != nil {
		return err
	}
	s.logf("B beside A's replay: %d events; waiting for A's replay", len(beside.ByID))
	if err := s.waitReplayed(ctx, epsA, history, jobs, s.o.drainTimeout); err != nil {
		return err
	}
	replayT := s.replayTally(history, epsA)
	if err := s.end(ctx, aloneT.received+besideT.received+replayT.received); err != nil {
		return err
	}
	// Each of B's tallies sees the other's events at B's endpoint as unknown: count unknown
	// against both loads together.
	both := &harness.CommitLog{ByID: maps.Clone(alone.ByID)}
	maps.Copy(both.ByID, beside.ByID)
	aloneT.unknown, besideT.unknown = s.tally(both, epsB).unknown, 0
	s.account(aloneT, "B alone", 0)
	s.account(besideT, "B beside A's replay", 0)
	s.account(replayT, "A's replay", 0)
	s.rateAndLatency(besideT, beside.First)
	f := s.res.fig
	f[figRate] = math.NaN()
	if replayT.received > 0 {
		f[figRate] = float64(replayT.received) / replayT.last.Sub(replayStart).Seconds()
	}
	slices.Sort(aloneT.latencies)
	f[figFairAloneP99] = percentile(aloneT.latencies, 99)
	f[figFairBesideP99] = f[figP99]
	f[figFairBacklog] = float64(replayT.expected)
	return s.accountHops(ctx, beside, epsB[0]) // B's hops beside the replay
}

// waitReplayed waits until every event of commits has reached every endpoint of eps a second
// time (its replay) and every replay job has finished, or timeout passes; a job that did not
// succeed is an error.
func (s *session) waitReplayed(ctx context.Context, eps []int, commits *harness.CommitLog, jobs []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	nextNote := time.Now().Add(10 * time.Second)
	for {
		t := s.replayTally(commits, eps)
		states, err := s.jobStates(ctx, jobs)
		if err != nil {
			return err
		}
		finished := 0
		for _, st := range states {
			switch st {
			case "succeeded":
				finished++
			case "failed", "canceled":
				return fmt.Errorf("A's replay: a job ended %s (states %v)", st, states)
			}
		}
		if t.missing == 0 && finished == len(jobs) {
			return nil
		}
		if time.Now().After(deadline) {
			s.logf("gave up waiting after %s: %d of %d deliveries replayed, jobs %v", timeout, t.received, t.expected, states)
			return nil
		}
		if time.Now().After(nextNote) {
			s.logf("%d of %d deliveries replayed, jobs %v", t.received, t.expected, states)
			nextNote = time.Now().Add(10 * time.Second)
		}
		if err := harness.Sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// jobStates reads the state of each replay job of the partner.
func (s *session) jobStates(ctx context.Context, jobs []string) ([]string, error) {
	states := make([]string, len(jobs))
	for i, id := range jobs {
		var job struct{ State string }
		if err := s.env.admin.Call(ctx, "GET", "/v1/partners/"+partner+"/replay-jobs/"+id, nil, http.StatusOK, &job); err != nil {
			return nil, err
		}
		states[i] = job.State
	}
	return states, nil
}

// replayTally is tally for a replay of commits, every event of which eps had received once
// before: an event counts as received once it arrived a second time (when: its last arrival),
// as a duplicate for every arrival beyond two.
func (s *session) replayTally(commits *harness.CommitLog, eps []int) tally {
	var t tally
	for _, n := range eps {
		got, bad := s.rx.Endpoint(n).Snapshot()
		t.bad += bad
		for id, c := range commits.ByID {
			t.expected++
			r := got[id]
			if r.Count < 2 {
				t.missing++
				t.example = fmt.Sprintf("%s at /ep/%d (received %d times)", id, n, r.Count)
				continue
			}
			t.received++
			t.duplicates += r.Count - 2
			t.receipts = append(t.receipts, r.Last)
			if r.Last.After(t.last) {
				t.last = r.Last
			}
			t.latencies = append(t.latencies, ms(r.Last.Sub(c.End)))
		}
	}
	return t
}
