package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/topics"
)

func runTopics(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "describe") {
		return fmt.Errorf("usage: hookstream topics create|describe [flags]")
	}
	fs := flag.NewFlagSet("topics "+args[0], flag.ContinueOnError)
	load := registerFlags(fs, nil)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	s, err := load()
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.KafkaBrokers...))
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	if args[0] == "create" {
		created, err := topics.Ensure(ctx, adm, s.topicConfig())
		if err != nil {
			return err
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
	descs, err := topics.Describe(ctx, adm, s.topicConfig())
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TOPIC\tPARTITIONS\tCLEANUP.POLICY\tRETENTION.MS")
	for _, d := range descs {
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", d.Name, d.Partitions, d.CleanupPolicy, d.RetentionMS)
	}
	return w.Flush()
}
