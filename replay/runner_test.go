package replay

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// TestBulkReplayFromHistory replays 10,000 failed deliveries: progress is visible while the
// job runs, and every delivery gets one record with its event id and next attempt number.
func TestBulkReplayFromHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	ep := e.endpoint("acme", "customer.*")
	const n = 10000
	dids, events, base := e.seedHistory("acme", ep, n, 3)
	// Outside the filter: succeeded deliveries.
	others := e.seedOutbox("acme", "customer.created", 50)
	created := make([]time.Time, len(others))
	for i := range created {
		created[i] = base.Add(time.Duration(i) * time.Millisecond)
	}
	e.seedDeliveries("acme", ep, "customer.created", "succeeded", 1, others, created)

	var (
		mu      sync.Mutex
		steps   int
		reached = make(chan struct{})
		resume  = make(chan struct{})
	)
	e.eng.afterBatch = func(string) {
		mu.Lock()
		steps++
		s := steps
		mu.Unlock()
		if s == 2 { // the count, then the first batch
			close(reached)
			<-resume
		}
	}
	run(t, e.eng)
	id := e.queue("acme", ep, SourceHistory, Filter{Since: base.Add(-time.Second), Until: time.Now(), State: "failed"})

	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the job made no progress within 30s")
	}
	if mid := e.job("acme", id); mid.State != JobRunning || mid.Total != n || mid.Done <= 0 || mid.Done >= n {
		t.Errorf("progress mid-job: %+v", mid)
	}
	close(resume)
	last := -1
	final := e.waitJob("acme", id, 2*time.Minute, func(j Job) {
		if j.Done < last {
			t.Errorf("done went back from %d to %d", last, j.Done)
		}
		last = j.Done
	})
	if final.State != JobSucceeded || final.Total != n || final.Done != n || final.Failed != 0 {
		t.Fatalf("final job: %+v", final)
	}

	got := e.deliveries(n, 2*time.Minute)
	want := map[string]string{}
	for i, id := range dids {
		want[id] = events[i]
	}
	seen := map[string]bool{}
	for _, d := range got {
		ev, ok := want[d.DeliveryID]
		switch {
		case !ok:
			t.Fatalf("record for delivery %s outside the filter", d.DeliveryID)
		case seen[d.DeliveryID]:
			t.Fatalf("delivery %s replayed twice", d.DeliveryID)
		case d.EventID != ev || d.AttemptNo != 4 || d.Trigger != records.TriggerReplay || d.EndpointID != ep:
			t.Fatalf("record %+v: want event %s, attempt 4, trigger replay", d, ev)
		}
		var head outbox.Envelope
		if err := json.Unmarshal(d.Body, &head); err != nil || head.EventID != ev || head.PartnerID != "acme" {
			t.Fatalf("record body of %s: %v %s", d.DeliveryID, err, d.Body)
		}
		seen[d.DeliveryID] = true
	}
	if len(seen) != n {
		t.Fatalf("%d deliveries replayed, want %d", len(seen), n)
	}
}

// TestReplayJobSurvivesRestart stops the engine in the middle of a job, and leaves another job
// leased by a process that died: a new engine resumes both from their recorded positions.
func TestReplayJobSurvivesRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Batch = 100; c.JobLease = 2 * time.Second })
	e.partner("acme")
	ep := e.endpoint("acme")
	const n = 1000
	dids, _, base := e.seedHistory("acme", ep, n, 2)
	f := Filter{Since: base.Add(-time.Second), Until: time.Now()}

	first := e.eng
	stopFirst := func() {}
	var once sync.Once
	stopped := make(chan struct{})
	calls := 0
	first.afterBatch = func(string) {
		if calls++; calls == 2 { // after the count and one batch of replays
			once.Do(func() { go func() { stopFirst(); close(stopped) }() })
		}
	}
	stopFirst = run(t, first)
	id := e.queue("acme", ep, SourceHistory, f)
	<-stopped

	if mid := e.job("acme", id); mid.State != JobRunning || mid.Done == 0 || mid.Done >= n {
		t.Fatalf("after the stop: %+v", mid)
	}
	// A second job, claimed by a process that died: its lease runs out.
	orphan := e.queue("acme", ep, SourceHistory, f)
	e.exec(`UPDATE replay_job SET state = 'running', lease_owner = 'admin-dead',
		lease_until = now() + interval '1 second' WHERE id = $1`, orphan)

	second := e.newEngine()
	run(t, second)
	for _, id := range []string{id, orphan} {
		j := e.waitJob("acme", id, time.Minute, nil)
		if j.State != JobSucceeded || j.Done != n || j.Total != n {
			t.Errorf("job %s after the restart: %+v", id, j)
		}
	}
	got := e.deliveries(2*n, time.Minute)
	count := map[string]int{}
	for _, d := range got {
		count[d.DeliveryID]++
	}
	for _, id := range dids {
		if count[id] < 2 {
			t.Fatalf("delivery %s replayed %d times by the two jobs, want at least 2", id, count[id])
		}
	}
}

// TestReplayJobStopsWhenEndpointDisabled disables the endpoint in the middle of a bulk replay:
// the job fails with a reason instead of producing replays the sender would refuse.
func TestReplayJobStopsWhenEndpointDisabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Batch = 100 })
	e.partner("acme")
	ep := e.endpoint("acme")
	_, _, base := e.seedHistory("acme", ep, 300, 1)
	calls := 0
	e.eng.afterBatch = func(string) {
		if calls++; calls == 2 { // runs on the runner's goroutine: no Fatal here
			err := pgx.BeginFunc(context.Background(), e.DB.Pool, func(tx pgx.Tx) error {
				_, err := endpoints.Disable(context.Background(), tx, endpoints.Disabling{PartnerID: "acme", EndpointID: ep,
					Reason: "stop", By: endpoints.ByPartner})
				return err
			})
			if err != nil {
				t.Errorf("disable: %v", err)
			}
		}
	}
	run(t, e.eng)
	id := e.queue("acme", ep, SourceHistory, Filter{Since: base.Add(-time.Second), Until: time.Now()})
	j := e.waitJob("acme", id, time.Minute, nil)
	if j.State != JobFailed || j.Done != 100 || j.Total != 300 || j.Error == "" || j.FinishedAt == nil {
		t.Fatalf("job after the endpoint was disabled: %+v", j)
	}
}

// TestReplayJobFailsWhenEndpointDeleted: a job whose endpoint is gone fails with the reason.
func TestReplayJobFailsWhenEndpointDeleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	ep := e.endpoint("acme")
	_, _, base := e.seedHistory("acme", ep, 10, 1)
	id := e.queue("acme", ep, SourceHistory, Filter{Since: base.Add(-time.Second), Until: time.Now()})
	e.exec(`DELETE FROM endpoint WHERE id = $1`, ep)
	if _, err := e.eng.Endpoint(context.Background(), "acme", ep); err != ErrEndpointGone {
		t.Fatalf("Endpoint of a deleted endpoint: %v, want ErrEndpointGone", err)
	}
	run(t, e.eng)
	if j := e.waitJob("acme", id, time.Minute, nil); j.State != JobFailed || j.Error != "the endpoint was deleted" || j.Done != 0 {
		t.Fatalf("job of a deleted endpoint: %+v", j)
	}
}

// TestCancelStopsTheRunner: a canceled job stays canceled, and the runner holding it finds so
// at its next progress save and stops; a finished job cannot be canceled, nor a job of another
// partner.
func TestCancelStopsTheRunner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	e.partner("globex")
	ep := e.endpoint("acme")
	f := Filter{Since: time.Now().Add(-time.Hour), Until: time.Now()}
	running, finished := e.queue("acme", ep, SourceHistory, f), e.queue("acme", ep, SourceHistory, f)
	ctx := context.Background()
	j, err := e.eng.claimJob(ctx)
	if err != nil || j == nil || j.ID != running {
		t.Fatalf("claim: %v %v, want %s", j, err, running)
	}
	if _, err := e.eng.Cancel(ctx, "globex", running, "operator"); err != ErrJobNotFound {
		t.Fatalf("another partner cancels: %v, want ErrJobNotFound", err)
	}
	c, err := e.eng.Cancel(ctx, "acme", running, "operator")
	if err != nil || c.State != JobCanceled || c.FinishedAt == nil || c.Error != "canceled by operator" {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	if err := e.eng.saveProgress(ctx, j); err != errLeaseLost {
		t.Fatalf("the runner's next save: %v, want it to stop", err)
	}
	if again, err := e.eng.Cancel(ctx, "acme", running, "operator"); err != nil || again.State != JobCanceled {
		t.Fatalf("canceled twice: %+v %v", again, err)
	}
	e.exec(`UPDATE replay_job SET state = 'succeeded' WHERE id = $1`, finished)
	if cur, err := e.eng.Cancel(ctx, "acme", finished, "operator"); err != ErrJobFinished || cur.State != JobSucceeded {
		t.Fatalf("canceling a succeeded job: %+v %v, want ErrJobFinished", cur, err)
	}
}

// TestLogJobWithBadFilterFreesItsReader: a log job whose endpoint's stored filter no longer
// parses fails, and gives back the events-topic reader it took, so later reads still get one.
func TestLogJobWithBadFilterFreesItsReader(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.readers = 1
	e.eng = e.newEngine()
	e.partner("acme")
	ep := e.endpoint("acme")
	e.exec(`UPDATE endpoint SET filter = '(((' WHERE id = $1`, ep)
	since := time.Now().Add(-time.Second)
	e.produceEvents("acme", 3)
	run(t, e.eng)
	f := Filter{Since: since, Until: time.Now()}
	bad := e.waitJob("acme", e.queue("acme", ep, SourceLog, f), time.Minute, nil)
	if bad.State != JobFailed || !strings.Contains(bad.Error, "filter does not parse") {
		t.Fatalf("job with a filter that does not parse: %+v", bad)
	}
	e.exec(`UPDATE endpoint SET filter = NULL WHERE id = $1`, ep)
	if j := e.waitJob("acme", e.queue("acme", ep, SourceLog, f), 30*time.Second, nil); j.State != JobSucceeded || j.Done != 3 {
		t.Fatalf("the next log job: %+v", j)
	}
}
