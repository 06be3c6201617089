package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/webhook"
	"github.com/hookstream/hookstream/webhook/inbox"
)

// customersTable is the application's own state, updated from customer.updated events.
const customersTable = `CREATE TABLE IF NOT EXISTS customers (
    id       text   PRIMARY KEY,
    version  bigint NOT NULL,
    changed  text[] NOT NULL,
    event_id text   NOT NULL
)`

// applyCustomerEvent is the application's ProcessFunc. The inbox has already dropped copies of
// an event it processed (same webhook-id); what remains is ordering (R30): an older change to
// the same customer, under another event id, may arrive after a newer one. So the upsert
// compares the customer's resource version and writes only a newer one. A stale event is
// processed successfully and changes nothing.
func applyCustomerEvent(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
	if ev.Type != "customer.updated" {
		return nil // other types (and webhook.test) need nothing here
	}
	env, err := ev.Envelope()
	if err != nil {
		return err
	}
	var data struct {
		CustomerID string   `json:"customer_id"`
		Changed    []string `json:"changed"`
		Version    int64    `json:"version"`
	}
	if err := json.Unmarshal(env.Data, &data); err != nil {
		return fmt.Errorf("customer.updated %s: %w", ev.ID, err)
	}
	tag, err := tx.Exec(ctx, `
		INSERT INTO customers (id, version, changed, event_id) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE
		   SET version = EXCLUDED.version, changed = EXCLUDED.changed, event_id = EXCLUDED.event_id
		 WHERE customers.version < EXCLUDED.version`,
		data.CustomerID, data.Version, data.Changed, ev.ID)
	if err != nil {
		return fmt.Errorf("customer.updated %s: %w", ev.ID, err)
	}
	if tag.RowsAffected() == 0 {
		log.Printf("customer %s: version %d is not newer than the stored one; skipped", data.CustomerID, data.Version)
	}
	// customer.updated says which fields changed, not their values: a real application would
	// now fetch the customer from the platform's API, or mark it for a refresh.
	return nil
}

// requireCustomerVersion is a PayloadValidator: a customer.updated without a usable version
// is refused with 400 before it is stored, instead of failing in processing twenty times.
func requireCustomerVersion(eventType string, body []byte) error {
	if eventType != "customer.updated" {
		return nil
	}
	var env struct {
		Data struct {
			CustomerID string `json:"customer_id"`
			Version    int64  `json:"version"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return err
	}
	if env.Data.CustomerID == "" || env.Data.Version < 1 {
		return errors.New("customer.updated needs data.customer_id and a positive data.version")
	}
	return nil
}

// A partner's service receives hookstream webhooks on /webhooks/hookstream and keeps its
// customers table current, whatever the order and however often the events arrive.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	pool, err := pgxpool.New(ctx, "postgres://app@127.0.0.1:5432/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	if err := inbox.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}
	if _, err := pool.Exec(ctx, customersTable); err != nil {
		log.Fatal(err)
	}

	// The endpoint's secret from hookstream; during a rotation, the new and the old one.
	verifier, err := webhook.NewVerifier([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
	if err != nil {
		log.Fatal(err)
	}
	cfg := inbox.DefaultConfig()
	cfg.ValidatePayload = requireCustomerVersion
	receiver, err := inbox.New(pool, verifier, applyCustomerEvent, cfg)
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/hookstream", receiver)
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return receiver.Run(ctx) })
	g.Go(func() error {
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		// Stop intake first; Run stops with ctx, rolling back an event it was processing.
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	})
	if err := g.Wait(); err != nil {
		log.Fatal(err)
	}
}

// Event.Envelope decodes the stored body into the envelope hookstream sends.
func ExampleEvent_Envelope() {
	ev := inbox.Event{
		ID:   "evt_01JNQ3ZV6W4M0YB8D6QK8S3T2H",
		Type: "customer.updated",
		Body: []byte(`{"event_id":"evt_01JNQ3ZV6W4M0YB8D6QK8S3T2H","type":"customer.updated",` +
			`"occurred_at":"2026-03-01T09:30:00Z","partner_id":"partner_a",` +
			`"subject":{"type":"customer","id":"cus_8f2k1"},"schema_version":1,` +
			`"data":{"customer_id":"cus_8f2k1","changed":["status"],"version":7}}`),
		Attempt: 1,
	}
	env, err := ev.Envelope()
	if err != nil {
		panic(err)
	}
	fmt.Println(env.Subject.Type, env.Subject.ID, env.OccurredAt.Format(time.RFC3339))
	fmt.Println(string(env.Data))
	// Output:
	// customer cus_8f2k1 2026-03-01T09:30:00Z
	// {"customer_id":"cus_8f2k1","changed":["status"],"version":7}
}

// Config starts from the defaults; Validate names every field that cannot work.
func ExampleConfig_Validate() {
	cfg := inbox.DefaultConfig()
	cfg.Table = "partner-inbox"
	cfg.BatchSize = 0
	fmt.Println(cfg.Validate())
	// Output:
	// inbox: config: table "partner-inbox" must be lowercase letters, digits and underscores, at most 48 bytes
	// inbox: config: batch size 0 must be between 1 and 1000
}

// An AuthorizeFunc checks, just before the effect, that the customer an event names may still
// do what it asks, reading the permission in the processing transaction and locking it until
// the effect commits. A refusal is final; an error of the permission lookup itself is retried.
func ExampleAuthorizeFunc() {
	authorize := func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		env, err := ev.Envelope()
		if err != nil {
			return fmt.Errorf("%w: %v", inbox.ErrRefused, err) // not an event we can act on
		}
		var active bool
		err = tx.QueryRow(ctx, `SELECT active FROM customers_of_partner WHERE id = $1 FOR SHARE`, env.Subject.ID).Scan(&active)
		switch {
		case errors.Is(err, pgx.ErrNoRows) || (err == nil && !active):
			return fmt.Errorf("customer %s is not active: %w", env.Subject.ID, inbox.ErrRefused)
		case err != nil:
			return err // could not decide: retried
		}
		return nil
	}
	cfg := inbox.DefaultConfig()
	cfg.Authorize = authorize
	_ = cfg // pass to inbox.New
}

// One inbox receives hookstream's webhooks and GitHub's on their own paths; Run processes both,
// and the ProcessFunc tells them apart by Event.Source. A duplicate of a processed GitHub
// delivery gets the result the first one recorded.
func ExampleInbox_Handler() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@127.0.0.1:5432/app")
	if err != nil {
		log.Fatal(err)
	}
	hookstreamVerifier, err := webhook.NewVerifier([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
	if err != nil {
		log.Fatal(err)
	}
	githubVerifier, err := webhook.NewGitHubVerifier([]string{"the GitHub webhook secret"})
	if err != nil {
		log.Fatal(err)
	}
	process := func(ctx context.Context, tx pgx.Tx, ev inbox.Event) error {
		switch ev.Source {
		case "github":
			// ... start a build for the pushed commit, idempotently by ev.ID ...
			return ev.SetResult(json.RawMessage(`{"build":"queued"}`))
		case inbox.HookstreamSource:
			return applyCustomerEvent(ctx, tx, ev)
		}
		return nil
	}
	receiver, err := inbox.New(pool, hookstreamVerifier, process, inbox.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	github, err := receiver.Handler(inbox.Source{Name: "github", Verifier: githubVerifier})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/hookstream", receiver)
	mux.Handle("POST /webhooks/github", github)
	mux.Handle("/webhooks/", receiver.UnknownSource()) // any other source: 404, counted
	go func() { _ = receiver.Run(ctx) }()
	log.Fatal(http.ListenAndServe(":8080", mux))
}
