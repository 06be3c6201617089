package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/topics"
)

const topicsUsage = `usage: hookstream topics create|describe [flags]

  create    create every topic with its cleanup policy and partition count (idempotent)
  describe  print each topic's partitions, cleanup policy and retention
`

func runTopics(ctx context.Context, args []string, out io.Writer) error {
	cf := flagsOf("topics")
	cf.usage = topicsUsage
	if len(args) == 0 || (args[0] != "create" && args[0] != "describe") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			_, err := cf.parse(args[:1], out)
			return err
		}
		err := errors.New("topics: want create or describe")
		if len(args) > 0 {
			err = fmt.Errorf("topics: unknown subcommand %q, want create or describe", args[0])
		}
		return &usageError{err: err, help: topicsUsage}
	}
	s, err := cf.parse(args[1:], out)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(s.base(nil, nil).ConnectionOptions()...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	if args[0] == "create" {
		created, err := topics.Ensure(ctx, cl, s.topicConfig())
		if err != nil {
			return s.kafka.Explain(err)
		}
		for _, spec := range s.topicConfig().Specs() {
			state := "exists"
			if created[spec.Name] {
				state = "created"
			}
			fmt.Fprintf(out, "%-40s %s\n", spec.Name, state)
		}
		return nil
	}
	descs, err := topics.Describe(ctx, cl, s.topicConfig())
	if err != nil {
		return s.kafka.Explain(err)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TOPIC\tPARTITIONS\tCLEANUP.POLICY\tRETENTION.MS")
	for _, d := range descs {
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", d.Name, d.Partitions, d.CleanupPolicy, d.RetentionMS)
	}
	return w.Flush()
}
