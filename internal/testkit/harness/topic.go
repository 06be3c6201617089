package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ReadTopic reads topic from its start as a read_committed consumer until it has at least want
// records and then for extra longer, with the same reader, so that a duplicate arriving late is
// seen too. It fails when want records have not come within timeout.
func ReadTopic(ctx context.Context, brokers []string, topic string, want int, extra, timeout time.Duration) ([]*kgo.Record, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return nil, fmt.Errorf("read %s: kafka client: %w", topic, err)
	}
	defer cl.Close()
	var out []*kgo.Record
	deadline := time.Now().Add(timeout)
	var until time.Time // set once want records are in
	for {
		now := time.Now()
		if until.IsZero() && len(out) >= want {
			until = now.Add(extra)
		}
		switch {
		case !until.IsZero() && !now.Before(until):
			return out, nil
		case until.IsZero() && now.After(deadline):
			return out, fmt.Errorf("read %s: %d records after %s, want %d", topic, len(out), timeout, want)
		case ctx.Err() != nil:
			return out, ctx.Err()
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { out = append(out, r) })
		cancel()
	}
}

// KeyCount is what a topic holds of a set of keys (event ids, delivery ids): each wanted key
// must be there exactly once and nothing else.
type KeyCount struct {
	Records    int
	Missing    int // wanted keys not in the topic
	Duplicated int // keys in the topic more than once
	Unknown    int // keys in the topic that were not wanted
	examples   []string
}

// CountKeys compares the keys of records with want.
func CountKeys(records []*kgo.Record, want []string) KeyCount {
	c := KeyCount{Records: len(records)}
	seen := make(map[string]int, len(records))
	for _, r := range records {
		seen[string(r.Key)]++
	}
	wanted := make(map[string]bool, len(want))
	for _, k := range want {
		wanted[k] = true
		if seen[k] == 0 {
			c.Missing++
			c.example("missing %s", k)
		}
	}
	for k, n := range seen {
		if n > 1 {
			c.Duplicated++
			c.example("%s %d times", k, n)
		}
		if !wanted[k] {
			c.Unknown++
			c.example("unknown %s", k)
		}
	}
	return c
}

func (c *KeyCount) example(format string, args ...any) {
	if len(c.examples) < 5 {
		c.examples = append(c.examples, fmt.Sprintf(format, args...))
	}
}

// Exact says whether every wanted key is there exactly once and nothing else is.
func (c KeyCount) Exact() bool { return c.Missing == 0 && c.Duplicated == 0 && c.Unknown == 0 }

func (c KeyCount) String() string {
	s := fmt.Sprintf("%d records: %d missing, %d duplicated, %d unknown", c.Records, c.Missing, c.Duplicated, c.Unknown)
	if len(c.examples) > 0 {
		s += " (" + strings.Join(c.examples, "; ") + ")"
	}
	return s
}
