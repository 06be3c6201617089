package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// triggerUsage is the head of trigger's help, with the catalog's types.
func triggerUsage() string {
	return `usage: hookstream trigger <event-type> [flags]

Writes the event catalog's example of <event-type>, its ids made fresh, to the outbox of the
deployment at --database-url (through the catalog-checking writer, as a platform would) and
prints its event id. The deployment delivers it to every endpoint of the partner subscribed to
the type: a way to try a receiver.

` + knownTypes()
}

// knownTypes lists the catalog's types, as a usage error names them.
func knownTypes() string {
	var b strings.Builder
	b.WriteString("event types (GET /v1/event-types):\n")
	for _, et := range eventcatalog.Types() {
		if !slices.Contains(eventcatalog.ReservedTypes(), et.Type) {
			fmt.Fprintf(&b, "  %-26s %s\n", et.Type, et.Category)
		}
	}
	return b.String()
}

func runTrigger(ctx context.Context, args []string, out io.Writer) error {
	fs := flagsOf("trigger")
	fs.usage = triggerUsage()
	partner := fs.String("partner", "", "the partner whose endpoints receive the event; empty: the deployment's only partner")
	s, typ, err := fs.parseWithArgs(args, out, 1)
	if err != nil {
		return err
	}
	if len(typ) == 0 {
		return &usageError{err: errors.New("trigger: want an event type"), help: knownTypes()}
	}
	if slices.Contains(eventcatalog.ReservedTypes(), typ[0]) {
		// hookstream sends these itself; the outbox refuses them (design.md section 4).
		return &usageError{err: fmt.Errorf("trigger: %s is sent by hookstream to one endpoint, not written to the outbox: use `hookstream endpoints test <endpoint-id>`", typ[0])}
	}
	ev, ok := eventcatalog.ExampleEvent(typ[0], *partner)
	if !ok {
		return &usageError{err: fmt.Errorf("trigger: unknown event type %q", typ[0]), help: knownTypes()}
	}

	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL (HOOKSTREAM_DATABASE_URL): %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if ev.PartnerID, err = triggerPartner(ctx, conn, *partner); err != nil {
		return err
	}
	w := outbox.Writer{Catalog: eventcatalog.Published()}
	var id string
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		id, err = w.Append(ctx, tx, ev)
		return err
	}); err != nil {
		return fmt.Errorf("trigger %s: %w", ev.Type, err)
	}
	fmt.Fprintln(out, id)
	return nil
}

// triggerPartner is the partner given, which must exist (an event of an unknown partner reaches
// nobody, so a typo would go unnoticed), or, when none is given, the deployment's only one.
func triggerPartner(ctx context.Context, conn *pgx.Conn, given string) (string, error) {
	if given != "" {
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM partner WHERE id = $1)`, given).Scan(&exists); err != nil {
			return "", fmt.Errorf("trigger: look up partner %s: %w", given, err)
		}
		if !exists {
			return "", fmt.Errorf("trigger: no partner %q in the deployment (POST /v1/partners creates one)", given)
		}
		return given, nil
	}
	rows, _ := conn.Query(ctx, `SELECT id FROM partner WHERE id <> $1 ORDER BY id LIMIT 6`, outbox.OperatorPartnerID)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("trigger: list partners: %w", err)
	}
	id, err := onlyPartner(ids)
	if err != nil {
		return "", fmt.Errorf("trigger: %w", err)
	}
	return id, nil
}
