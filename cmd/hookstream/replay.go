package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hookstream/hookstream/adminclient"
)

const replayUsage = `usage: hookstream replay --endpoint <endpoint-id> --since <time|duration> [--until …] [--state S] [flags]

A bulk replay of one endpoint's deliveries, as a replay job of the admin API at --admin-url: it
creates the job, then follows it to its end, with a progress bar on a terminal and a plain
progress line every 2 s (or at each change) otherwise, and prints the job's final counts as the
API reports them. Exit status 0 when the job succeeded, 1 when it failed or was canceled, 2
when it could not run.

--since and --until take an RFC 3339 time or a duration ago (1h: an hour ago); --until defaults
to now. --state failed replays only the deliveries that failed. --source log replays the events
of the event log in the range that the endpoint subscribes to (with --state missing: those it
never had a delivery for).
` + apiUsageTail

// errReplayJobFailed: the replay job ended failed or canceled; the command exits 1 (its counts
// are printed).
var errReplayJobFailed = errors.New("the replay job failed")

// replayPoll is how often the job's progress is read; plain progress lines are printed at each
// change and at least every replayQuietLine.
const (
	replayPoll      = 250 * time.Millisecond
	replayQuietLine = 2 * time.Second
)

func runReplay(ctx context.Context, args []string, out io.Writer) error {
	return runPlainAPICommand(ctx, "replay", replayUsage, replayFlags, args, out)
}

func replayFlags(fs *commandFlags) func(context.Context, *apiSession, []string) error {
	endpoint := fs.String("endpoint", "", "the endpoint whose deliveries to replay")
	since := fs.String("since", "", "from this creation time on (RFC 3339, or a duration ago such as 1h); required")
	until := fs.String("until", "", "before this time (RFC 3339, or a duration ago); empty: now")
	state := fs.String("state", "", "only deliveries in this state (pending, retrying, succeeded, failed, skipped; missing with --source log)")
	source := fs.String("source", "history", "history (the endpoint's deliveries) or log (the events of the event log)")
	var body adminclient.ReplayJobRequest
	fs.check = func() error {
		if *endpoint == "" || *since == "" {
			return errors.New("want --endpoint and --since")
		}
		if *source != "history" && *source != "log" {
			return fmt.Errorf("--source: %q: want history or log", *source)
		}
		now := time.Now()
		body.Source = (*adminclient.ReplayJobRequestSource)(source)
		t, err := parseMoment(*since, now)
		if err != nil {
			return fmt.Errorf("--since: %w", err)
		}
		body.Since = t
		if *until != "" {
			t, err := parseMoment(*until, now)
			if err != nil {
				return fmt.Errorf("--until: %w", err)
			}
			body.Until = &t
		}
		if *state != "" {
			body.State = state
		}
		return nil
	}
	return func(ctx context.Context, a *apiSession, _ []string) error {
		created, err := a.c.CreateReplayJobWithResponse(ctx, a.partner, *endpoint, body)
		if err := adminclient.Check(created, err); err != nil {
			return err
		}
		return a.followReplayJob(ctx, created.JSON202.JobID)
	}
}

// followReplayJob polls the job until it ends, showing its progress, then prints its final
// counts (or, with --output json, the job as the API answered it last).
func (a *apiSession) followReplayJob(ctx context.Context, id string) error {
	p := replayProgress{out: a.out, terminal: isTerminal(a.out), quiet: a.json}
	if !a.json {
		fmt.Fprintf(a.out, "replay job %s queued\n", id)
	}
	tick := time.NewTicker(replayPoll)
	defer tick.Stop()
	for {
		res, err := a.c.GetReplayJobWithResponse(ctx, a.partner, id)
		if err := adminclient.Check(res, err); err != nil {
			return err
		}
		job := res.JSON200
		ended := job.State == adminclient.ReplayJobStateSucceeded || job.State == adminclient.ReplayJobStateFailed ||
			job.State == adminclient.ReplayJobStateCanceled
		p.show(job, ended, time.Now())
		if ended {
			if a.json {
				if err := printJSON(a.out, res.Body); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(a.out, "replay job %s %s: total %d, done %d, failed %d\n", job.ID, job.State, job.Total, job.Done, job.Failed)
				if job.Error != nil && *job.Error != "" {
					fmt.Fprintf(a.out, "last error: %s\n", printable(*job.Error))
				}
			}
			if job.State != adminclient.ReplayJobStateSucceeded {
				return errReplayJobFailed
			}
			return nil
		}
		select {
		case <-ctx.Done():
			p.end()
			return fmt.Errorf("stopped following replay job %s, which goes on (GET …/replay-jobs/%s): %w", id, id, ctx.Err())
		case <-tick.C:
		}
	}
}

// replayProgress draws a job's progress: one line redrawn in place on a terminal, else a line at
// each change and at least every replayQuietLine.
type replayProgress struct {
	out       io.Writer
	terminal  bool
	quiet     bool // --output json: no progress, the final answer alone
	last      string
	lastShown time.Time
	drawn     bool // a terminal line is drawn and not yet ended
}

func (p *replayProgress) show(job *adminclient.ReplayJob, ended bool, now time.Time) {
	if p.quiet {
		return
	}
	pct := 0
	switch {
	case job.Total > 0:
		pct = min(100, (job.Done+job.Failed)*100/job.Total)
	case ended:
		pct = 100
	}
	counts := fmt.Sprintf("%3d %%  %d/%d replayed, %d failed  %s", pct, job.Done, job.Total, job.Failed, job.State)
	if p.terminal {
		const width = 30
		bar := strings.Repeat("█", pct*width/100) + strings.Repeat("░", width-pct*width/100)
		fmt.Fprintf(p.out, "\r%s %s\x1b[K", bar, counts)
		p.drawn = true
		if ended {
			p.end()
		}
		return
	}
	if counts == p.last && now.Sub(p.lastShown) < replayQuietLine {
		return
	}
	fmt.Fprintln(p.out, counts)
	p.last, p.lastShown = counts, now
}

// end ends a drawn terminal line, so what follows starts on its own line.
func (p *replayProgress) end() {
	if p.drawn {
		fmt.Fprintln(p.out)
		p.drawn = false
	}
}

// isTerminal reports whether w is a terminal (a character device), where progress is redrawn.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
