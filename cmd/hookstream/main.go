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
	"slices"
	"strings"
	"syscall"

	"github.com/hookstream/hookstream/internal/gotune"
)

type command struct {
	name, summary string
	// reads are the settings the command reads: its flags, and what its -h lists.
	reads []string
	// defaults replace built-in defaults of settings, by variable.
	defaults map[string]string
	run      func(ctx context.Context, args []string, out io.Writer) error
}

func commands() []command {
	return []command{
		{"dev", "run everything in one process on embedded Kafka and the local PostgreSQL",
			// every component, on its own embedded Kafka, with the metrics on the admin address; the
			// API commands' admin URL and partner key are not dev's (it serves the API)
			allSettingsBut(slices.Concat([]string{"kafka-brokers", "metrics-addr", "admin-url", "api-key"}, kafkaSecuritySettings)...), devDefaults, runDev},
		{"cdc", "tail the outbox by logical replication into Kafka (one active per slot, others stand by)",
			slices.Concat(componentSettings, cdcSettings), nil, runCDC},
		{"fanout", "fan each event out to its partner's subscribed endpoints (consumer group)",
			slices.Concat(componentSettings, []string{"topic-prefix", "instance-id"}), nil, runFanout},
		{"recorder", "record every delivery attempt in PostgreSQL (consumer group)",
			slices.Concat(componentSettings, []string{"database-url", "topic-prefix", "history-retention", "instance-id"}), nil, runRecorder},
		{"sender", "deliver signed webhooks over HTTP through the egress guard (consumer group; no PostgreSQL)",
			slices.Concat(componentSettings, egressSettings, retrySettings, keyringSettings, []string{"retry-client-errors", "limit-deliveries-in-flight", "limit-deliveries-per-sec"}), nil, runSender},
		{"retry", "hold retries in the tier topics until due, and run the failure window (consumer groups)",
			slices.Concat(componentSettings, retrySettings, []string{"database-url", "failing-warn-after", "failing-disable-after"}), nil, runRetry},
		{"admin", "serve the admin HTTP API (endpoints, secrets, history, replay, cursor feed)",
			adminSettings, adminDefaults, runAdmin},
		{"migrate", "apply the database migrations (idempotent)",
			slices.Concat([]string{"database-url"}, logSettings), nil, runMigrate},
		{"topics", "create or describe the Kafka topics: topics create | topics describe",
			topicSettings, nil, runTopics},
		{"secrets", "seal every stored secret again under the active key: secrets reseal",
			slices.Concat([]string{"database-url", "cdc-slot"}, keyringSettings), nil, runSecrets},
		{"trigger", "write the event catalog's example of an event type, with fresh ids, to the outbox of a running deployment",
			[]string{"database-url"}, nil, runTrigger},
		{"endpoints", "a partner's endpoints over the admin API: list, create, get, disable, enable, rotate, test",
			apiSettings, nil, runEndpoints},
		{"deliveries", "a partner's delivery history over the admin API: list, get, replay",
			apiSettings, nil, runDeliveries},
		{"replay", "replay an endpoint's deliveries of a time range as a replay job, following its progress to the end",
			apiSettings, nil, runReplay},
		{"feed", "read the partner's cursor feed of events, a page or (--follow) as they come",
			apiSettings, nil, runFeed},
		{"listen", "forward the partner's events as they happen to a local URL, signed with a session secret (like stripe listen)",
			apiSettings, nil, runListen},
		{"receive", "receive webhooks on a local port, verify each signature with the endpoint's secret and print one line per event",
			nil, nil, runReceive},
		{"seed", "fill a running dev with a reseller partner and show its verified webhooks of every type arriving at a webhook/inbox receiver",
			[]string{"admin-url", "admin-token", "data-dir", "reseller-addr", "database-url"}, nil, runSeed},
		{"verify-ledger", "check that every committed event reached the endpoints it had to, signed, and that the history agrees",
			[]string{"database-url", "request-timeout"}, nil, runVerifyLedger},
		{"probe", "GET a probe route such as http://127.0.0.1:9464/readyz: exit 0 on 2xx, 1 otherwise (a health check for the shell-less image)",
			nil, nil, runProbe},
		{"version", "print the version, commit and Go version of this build (also --version)",
			nil, nil, runVersion},
	}
}

// usage is the head of a command's help.
func (c command) usage() string {
	flags := " [flags]"
	if len(c.reads) == 0 {
		flags = ""
	}
	return fmt.Sprintf("usage: hookstream %s%s\n\n%s.\n", c.name, flags, strings.ToUpper(c.summary[:1])+c.summary[1:])
}

func main() {
	gotune.Apply() // GOGC and GOMEMLIMIT, where the environment sets neither (docs/operations.md)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	os.Exit(exitStatus(err, os.Stderr))
}

// usageError is a command line hookstream cannot run: exitStatus prints it, then help, and the
// process exits 2.
type usageError struct {
	err  error  // what is wrong; nil when the help says it all (no command given)
	help string // the usage, or where to find it
}

func (e *usageError) Error() string {
	if e.err == nil {
		return "no command given"
	}
	return e.err.Error()
}

func (e *usageError) Unwrap() error { return e.err }

// exitStatus prints what the user needs of err to stderr and returns the exit status of the
// process: 0 without one; 1 when the ledger does not hold (its report says why), a replay job
// failed (its counts are printed) or a probe found its route not answering 2xx; 2 for a command
// line that cannot run, and for every other failure.
func exitStatus(err error, stderr io.Writer) int {
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errLedgerFailed):
		return 1
	case errors.Is(err, errReplayJobFailed), errors.Is(err, errProbeFailed):
		fmt.Fprintln(stderr, "hookstream:", printableText(err.Error()))
		return 1
	case errors.As(err, &usage):
		if usage.err != nil {
			fmt.Fprintln(stderr, "hookstream:", printableText(usage.err.Error()))
		}
		fmt.Fprint(stderr, usage.help)
		return 2
	default:
		// An error may quote the API's problem detail, which quotes what a partner wrote.
		fmt.Fprintln(stderr, "hookstream:", printableText(err.Error()))
		return 2
	}
}

// run runs the command line args. Help asked for (-h, help) is written to out and is no error.
func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return &usageError{help: usage()}
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			fmt.Fprint(out, usage())
			return nil
		}
		if !slices.ContainsFunc(commands(), func(c command) bool { return c.name == args[1] }) {
			return &usageError{err: fmt.Errorf("help: unknown command %q", args[1]), help: usage()}
		}
		args = []string{args[1], "-h"}
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, args[1:], out)
			if errors.Is(err, flag.ErrHelp) {
				return nil // the command printed its help
			}
			return err
		}
	}
	return &usageError{err: fmt.Errorf("unknown command %q", args[0]), help: usage()}
}

func usage() string {
	var b strings.Builder
	b.WriteString("usage: hookstream <command> [flags]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-14s %s\n", c.name, c.summary)
	}
	b.WriteString("\n'hookstream <command> -h' (or 'hookstream help <command>') lists the flags of a command;\n" +
		"each flag can also be set by its HOOKSTREAM_* variable, and a flag given wins.\n")
	return b.String()
}
