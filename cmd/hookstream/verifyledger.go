package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/ledger"
)

// errLedgerFailed is returned when a must-be-zero count of the ledger is not zero: the command
// then exits with status 1, not 2 as for a usage or connection error.
var errLedgerFailed = errors.New("the ledger does not hold")

const verifyLedgerHelp = `usage: hookstream verify-ledger [flags]

Checks an installation's delivery promises from the outside. From the committed outbox rows and
the endpoints' subscriptions it computes which (event, endpoint) pairs had to be delivered (the
endpoint belongs to the event's partner, is subscribed to its type, and was active when the event
occurred; rows cdc refused, listed by GET /v1/outbox/dead-letters, are owed to nobody), and
compares them with the delivery history and, with -receipts, with what the
receivers recorded of every request. It prints the counts and exits 1 when any must-be-zero count
is not zero: missing, foreign partner, bad signatures, webhook-id not the event id, unknown
events, delivered without a subscription, received but absent from the history, contradicting
final states. The rules are in docs/ledger.md and ` + "`go doc ./internal/ledger`" + `.

A receipts file has one JSON object per request and line:
  {"event_id","endpoint_id","partner_id" (of the endpoint the path belongs to),"webhook_id",
   "received_at" (RFC 3339),"verified" (the signature),"status" (the answer; 0 for none),"type"}
`

func runVerifyLedger(ctx context.Context, args []string, out io.Writer) error {
	fs := flagsOf("verify-ledger")
	fs.usage = verifyLedgerHelp
	receipts := fs.String("receipts", "", "file of the receivers' records (JSON lines); empty: check the history alone")
	complete := fs.Bool("receipts-complete", false, "the receipts hold every request of every endpoint, also of endpoints that got none")
	since := fs.String("since", "", "check events that occurred at or after this time (RFC 3339, or a duration ago such as 24h); empty: all")
	until := fs.String("until", "", "check events that occurred before this time (RFC 3339, or a duration ago such as 10m: leave out what may still be on its way); empty: all")
	o := ledger.Options{Boundary: 2 * time.Second, ClockSkew: 2 * time.Second, MaxUnrecorded: -1}
	fs.Var((*durationValue)(&o.Boundary), "boundary", "events this close to an endpoint's creation or disable are required neither way")
	fs.Var((*durationValue)(&o.ClockSkew), "clock-skew", "how far the receivers' clocks may be from the senders' when requests are matched to attempts")
	fs.Var((*intValue)(&o.MaxUnrecorded), "max-unrecorded", "fail when more requests than this match no recorded attempt; negative: no bound")
	s, err := fs.parse(args, out)
	if err != nil {
		return err
	}
	o.CoverAll = *complete
	o.RequestTimeout = s.RequestTimeout // the senders' deadline: a request held past it may be unrecorded
	if o.Since, err = parseMoment(*since, time.Now()); err != nil {
		return fs.usageError(fmt.Errorf("invalid value for flag -since: %w", err))
	}
	if o.Until, err = parseMoment(*until, time.Now()); err != nil {
		return fs.usageError(fmt.Errorf("invalid value for flag -until: %w", err))
	}
	if *receipts != "" {
		if o.Receipts, err = readReceiptsFile(*receipts); err != nil {
			return err
		}
	}
	return verifyLedger(ctx, s.DatabaseURL, o, out)
}

// verifyLedger runs the check against the database at url and prints its report.
func verifyLedger(ctx context.Context, url string, o ledger.Options, out io.Writer) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL (HOOKSTREAM_DATABASE_URL): %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rep, err := ledger.Check(ctx, conn, o)
	if err != nil {
		return err
	}
	rep.Print(out)
	if fails := rep.Failures(); len(fails) > 0 {
		fmt.Fprintf(out, "FAILED: %s\n", strings.Join(fails, "\n        "))
		return errLedgerFailed
	}
	fmt.Fprintln(out, "the ledger holds")
	return nil
}

// parseMoment reads an RFC 3339 time or a duration before now; empty is the zero time.
func parseMoment(v string, now time.Time) (time.Time, error) {
	if v = strings.TrimSpace(v); v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a duration", v)
	}
	return t, nil
}

func readReceiptsFile(path string) ([]ledger.Receipt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-receipts: %w", err)
	}
	defer f.Close()
	rs, err := ledger.ReadReceipts(f)
	if err != nil {
		return nil, fmt.Errorf("-receipts %s: %w", path, err)
	}
	return rs, nil
}
