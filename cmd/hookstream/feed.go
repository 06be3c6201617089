package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hookstream/hookstream/adminclient"
)

const feedUsage = `usage: hookstream feed [--after <cursor>] [--types T,…] [--limit N] [--follow] [flags]

The partner's cursor feed (GET …/events on the admin API at --admin-url): its events in log
order, one line each (time, type, event id, subject), then the next cursor to pass as --after.
Without --after it starts at the oldest retained event. --follow keeps paging, waiting for new
events at the end, until interrupted; it then prints the cursor to resume from.
--output json prints each event as one JSON line, exactly as delivered, then
{"next_cursor":…,"has_more":…}.
` + apiUsageTail

// feedWait is how long --follow waits at the end of the feed before asking again.
const feedWait = time.Second

func runFeed(ctx context.Context, args []string, out io.Writer) error {
	return runPlainAPICommand(ctx, "feed", feedUsage, feedFlags, args, out)
}

func feedFlags(fs *commandFlags) func(context.Context, *apiSession, []string) error {
	after := fs.String("after", "", "the cursor to read after (a next cursor printed before); empty: the oldest retained event")
	types := fs.String("types", "", "comma-separated event types or prefix wildcards (usage.*)")
	limit := fs.Int("limit", 100, "most events of one page, 1 to 1000")
	follow := fs.Bool("follow", false, "keep paging, waiting for new events, until interrupted")
	return func(ctx context.Context, a *apiSession, _ []string) error {
		params := &adminclient.ListEventsParams{Limit: limit}
		if *after != "" {
			params.After = after
		}
		if *types != "" {
			params.Types = types
		}
		var page struct {
			Data       []json.RawMessage `json:"data"`
			NextCursor string            `json:"next_cursor"`
			HasMore    bool              `json:"has_more"`
		}
		for {
			res, err := a.c.ListEventsWithResponse(ctx, a.partner, params)
			if ctx.Err() != nil && *follow && page.NextCursor != "" {
				return a.printCursor(page.NextCursor, false) // interrupted: where to resume
			}
			if err := adminclient.Check(res, err); err != nil {
				return err
			}
			if err := json.Unmarshal(res.Body, &page); err != nil {
				return fmt.Errorf("the feed's answer: %w", err)
			}
			for _, raw := range page.Data {
				if err := a.printEvent(raw); err != nil {
					return err
				}
			}
			params.After = &page.NextCursor
			if !*follow {
				return a.printCursor(page.NextCursor, page.HasMore)
			}
			if page.HasMore {
				continue
			}
			select {
			case <-ctx.Done():
				return a.printCursor(page.NextCursor, false)
			case <-time.After(feedWait):
			}
		}
	}
}

func (a *apiSession) printEvent(raw json.RawMessage) error {
	if a.json {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return fmt.Errorf("the feed's answer: %w", err)
		}
		b.WriteByte('\n')
		_, err := a.out.Write(printableJSON(b.Bytes()))
		return err
	}
	var ev adminclient.Envelope
	if err := json.Unmarshal(raw, &ev); err != nil {
		return fmt.Errorf("the feed's answer: %w", err)
	}
	_, err := fmt.Fprintf(a.out, "%s  %-26s %s  %s/%s\n", ev.OccurredAt.UTC().Format(time.RFC3339), printable(ev.Type), printable(ev.EventID),
		printable(ev.Subject.Type), printable(ev.Subject.ID))
	return err
}

func (a *apiSession) printCursor(cursor string, more bool) error {
	if a.json {
		b, _ := json.Marshal(map[string]any{"next_cursor": cursor, "has_more": more})
		_, err := fmt.Fprintf(a.out, "%s\n", b)
		return err
	}
	note := ""
	if more {
		note = "  (more: hookstream feed --after " + cursor + ")"
	}
	_, err := fmt.Fprintf(a.out, "next cursor: %s%s\n", cursor, note)
	return err
}
