// Command hookstream is the single binary of hookstream: `hookstream dev` runs everything in one
// process for local use, and one subcommand per component runs the parts separately.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, out io.Writer) error
}

func commands() []command {
	return []command{
		{"dev", "run everything in one process on embedded Kafka and the local PostgreSQL", runDev},
		{"cdc", "tail the outbox by logical replication into Kafka (one active per slot, others stand by)", runCDC},
		{"fanout", "fan each event out to its partner's subscribed endpoints (consumer group)", runFanout},
		{"recorder", "record every delivery attempt in PostgreSQL (consumer group)", runRecorder},
		{"sender", "deliver signed webhooks over HTTP through the egress guard (consumer group; no PostgreSQL)", runSender},
		{"retry", "hold retries in the tier topics until due, and run the failure window (consumer groups)", runRetry},
		{"admin", "serve the admin HTTP API (endpoints, secrets, history, replay, cursor feed)", runAdmin},
		{"migrate", "apply the database migrations (idempotent)", runMigrate},
		{"topics", "create or describe the Kafka topics: topics create | topics describe", runTopics},
		{"verify-ledger", "check that every committed event reached the endpoints it had to, signed, and that the history agrees", runVerifyLedger},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, errLedgerFailed) {
			os.Exit(1) // the report says why
		}
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "hookstream:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage()
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], out)
		}
	}
	usage()
	return fmt.Errorf("unknown command %q", args[0])
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: hookstream <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(os.Stderr, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(os.Stderr, "\nEvery flag can also be set by its HOOKSTREAM_* variable; `hookstream <command> -h` lists them.")
}

func runVersion(_ context.Context, _ []string, out io.Writer) error {
	fmt.Fprintf(out, "hookstream %s (%s)\n", version, runtime.Version())
	return nil
}
