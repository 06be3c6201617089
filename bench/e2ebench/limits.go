package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// limits are the physical limits of one run, measured with nothing of hookstream running: what
// the receiver takes from a bare HTTP loop, and what PostgreSQL commits of the same
// transactions. Each workload's figures are divided by them.
type limits struct {
	bareRPS float64         // signed POSTs per second from a bare net/http loop
	pgRate  map[int]float64 // events committed per second, by events per transaction
}

// measureLimits measures the run's limits: the bare loop against rx, and the generator alone
// against a fresh migrated database with no cdc slot, at 1 and 100 events per transaction.
func measureLimits(ctx context.Context, o options, rx *harness.Receiver) (limits, error) {
	lim := limits{pgRate: map[int]float64{}}
	var err error
	if lim.bareRPS, err = bareLoop(ctx, rx, o.bareRequests, o.clients); err != nil {
		return lim, fmt.Errorf("bare loop: %w", err)
	}
	dbName := dbPrefix + scratch.RandomHex(5)
	url, err := scratch.MigratedDatabase(ctx, o.databaseURL, dbName)
	if err != nil {
		return lim, fmt.Errorf("postgres limit: database: %w", err)
	}
	defer scratch.DropDatabase(o.databaseURL, dbName) //nolint:errcheck // a leftover database is harmless
	// The day partitions, as the workloads' environments have them.
	err = harness.RunToEnd(ctx, o.bin, []string{"migrate"}, harness.Environ(map[string]string{"HOOKSTREAM_DATABASE_URL": url}),
		fmt.Sprintf("%s/logs/limits-migrate.log", o.out), 2*time.Minute)
	if err != nil {
		return lim, fmt.Errorf("postgres limit: %w", err)
	}
	pool, err := harness.NewPool(ctx, url, o.clients+4)
	if err != nil {
		return lim, fmt.Errorf("postgres limit: %w", err)
	}
	defer pool.Close()
	// The outbox takes events of existing partners only (migration 0021).
	if _, err := pool.Exec(ctx, `INSERT INTO partner (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, partner); err != nil {
		return lim, fmt.Errorf("postgres limit: partner: %w", err)
	}
	gen, err := newGenerator(pool, partner, o.clients)
	if err != nil {
		return lim, err
	}
	for _, perTx := range []int{1, 100} {
		log, err := gen.Burst(ctx, o.limitEvents, perTx)
		if err != nil {
			return lim, fmt.Errorf("postgres limit, %d per transaction: %w", perTx, err)
		}
		lim.pgRate[perTx] = log.Rate()
	}
	return lim, nil
}

// bareLoop makes requests signed POSTs of an event's envelope to the receiver from clients
// goroutines over keep-alive connections, as fast as it answers, and returns requests per
// second. Every request must arrive verified.
func bareLoop(ctx context.Context, rx *harness.Receiver, requests, clients int) (float64, error) {
	rx.Reset()
	secret, err := webhook.NewSecret()
	if err != nil {
		return 0, err
	}
	signer, err := webhook.NewSigner(secret)
	if err != nil {
		return 0, err
	}
	n, url := rx.AddEndpoint()
	if err := rx.Endpoint(n).SetSecret(secret); err != nil {
		return 0, err
	}
	body, err := sampleBody()
	if err != nil {
		return 0, err
	}
	client := &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	var next atomic.Int64
	eg, ctx := errgroup.WithContext(ctx)
	began := time.Now()
	for range clients {
		eg.Go(func() error {
			for next.Add(1) <= int64(requests) {
				if err := post(ctx, client, signer, url, body); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return 0, err
	}
	elapsed := time.Since(began)
	ep := rx.Endpoint(n)
	if got, bad := ep.Snapshot(); len(got) != requests || bad != 0 {
		return 0, fmt.Errorf("receiver verified %d of %d requests (%d bad signatures)", len(got), requests, bad)
	}
	return float64(requests) / elapsed.Seconds(), nil
}

// post makes one signed request of body with a fresh webhook-id, as the sender would.
func post(ctx context.Context, client *http.Client, signer *webhook.Signer, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hookstream-e2ebench")
	signer.SetHeaders(req.Header, outbox.NewEventID(), time.Now(), body)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	return nil
}

// sampleBody is the envelope of one of the load's events, as cdc serialises it: the same size
// as what the sender posts.
func sampleBody() ([]byte, error) {
	ev := harness.NewEvent("bench", 1_000_000)
	return json.Marshal(outbox.Envelope{EventID: outbox.NewEventID(), Type: ev.Type, OccurredAt: time.Now().UTC(),
		PartnerID: ev.PartnerID, Subject: ev.Subject, SchemaVersion: 1, Data: ev.Data})
}
