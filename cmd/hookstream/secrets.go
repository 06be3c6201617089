package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/admin"
)

const secretsUsage = `usage: hookstream secrets reseal [flags]

  reseal  seal every stored secret again under the active key of the keyring (the endpoints'
          signing secrets, their request options' secrets, the stored idempotent answers), in
          batches, safe while the system runs and idempotent; then wait until cdc has published
          the resealed endpoints to the endpoints topic, after which the old keys can be removed
          (docs/operations.md, Rotating the secret key)
`

func runSecrets(ctx context.Context, args []string, out io.Writer) error {
	cf := flagsOf("secrets")
	cf.usage = secretsUsage
	if len(args) == 0 || args[0] != "reseal" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			_, err := cf.parse(args[:1], out)
			return err
		}
		err := errors.New("secrets: want reseal")
		if len(args) > 0 {
			err = fmt.Errorf("secrets: unknown subcommand %q, want reseal", args[0])
		}
		return &usageError{err: err, help: secretsUsage}
	}
	batch := cf.Int("batch", 500, "rows read and resealed per batch (1 to 10000)")
	wait := cf.Duration("wait", 2*time.Minute, "how long to wait for cdc to publish the resealed endpoints; 0 does not wait")
	cf.check = func() error {
		if *batch < 1 || *batch > 10000 {
			return fmt.Errorf("--batch %d: want 1 to 10000", *batch)
		}
		if *wait < 0 {
			return fmt.Errorf("--wait %s: want 0 or more", *wait)
		}
		return nil
	}
	s, err := cf.parse(args[1:], out)
	if err != nil {
		return err
	}
	keys, err := s.keyring()
	if err != nil {
		return err
	}
	pool, err := s.openPool(ctx, "secrets")
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL (HOOKSTREAM_DATABASE_URL): %w", err)
	}
	defer pool.Close()
	rep, err := admin.Reseal(ctx, pool, keys, *batch, nil)
	for _, c := range []struct {
		what string
		n    admin.ResealCount
	}{{"signing secrets", rep.SigningSecrets}, {"request option secrets", rep.RequestOptions}, {"idempotent answers", rep.IdempotentAnswers}} {
		fmt.Fprintf(out, "%-23s %d resealed, %d already current\n", c.what+":", c.n.Resealed, c.n.Current)
	}
	for _, u := range rep.Unopened {
		fmt.Fprintf(out, "not opened: %s\n", u)
	}
	if err != nil {
		if errors.Is(err, admin.ErrUnopened) {
			return fmt.Errorf("%w: add the keys they name to the keyring and run reseal again; the others are resealed", err)
		}
		return err
	}
	fmt.Fprintf(out, "every stored secret is sealed under key %q\n", keys.Active())
	if *wait == 0 {
		return nil
	}
	lsn, err := waitPublished(ctx, pool, s.CDCSlot, *wait)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "published: cdc confirmed slot %s past %s, so the endpoints topic holds every resealed endpoint\n", s.CDCSlot, lsn)
	return nil
}

// waitPublished waits until cdc has confirmed its slot past the WAL written so far: cdc
// confirms only what it has committed to Kafka (design.md section 4), so every endpoint row
// resealed before the call is then on the endpoints topic, as the senders read it. An idle cdc
// still confirms within its heartbeat interval (10 s).
func waitPublished(ctx context.Context, pool *pgxpool.Pool, slot string, wait time.Duration) (string, error) {
	var lsn string
	if err := pool.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		return "", fmt.Errorf("reseal: current WAL position: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		var past *bool
		err := pool.QueryRow(ctx, `SELECT confirmed_flush_lsn >= $2::pg_lsn FROM pg_replication_slots WHERE slot_name = $1`,
			slot, lsn).Scan(&past)
		switch {
		case err == nil && past != nil && *past:
			return lsn, nil
		case err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded):
			if errors.Is(err, pgx.ErrNoRows) {
				return "", fmt.Errorf("reseal: no replication slot %q on this database (HOOKSTREAM_CDC_SLOT): cdc publishes the endpoints; with --wait 0 the command does not wait for it", slot)
			}
			return "", fmt.Errorf("reseal: read slot %s: %w", slot, err)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("reseal: cdc did not confirm slot %s past %s within %s: is cdc running? Keep the old keys until it has (run reseal again to wait)", slot, lsn, wait)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
