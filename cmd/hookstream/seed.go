package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/webhook"
	"github.com/hookstream/hookstream/webhook/inbox"
)

const seedUsage = `usage: hookstream seed [flags]

Fills a running hookstream dev with a partner of the reseller reference platform and shows its
webhooks arriving. It creates the partner (--partner, default demo) if it is missing and a fresh
partner API key, starts a receiver built on webhook/inbox (on --receiver-addr, its inbox table
seed_inbox in the dev database), creates an endpoint to it for every reseller event type (the
partner's earlier seed endpoints are deleted), and drives the reference platform's API on
--reseller-addr as a partner's automation would: customers, an API key, credit, a budget,
usage that crosses 80 % and drops the balance below its floor, a usage correction that re-arms
both, usage that crosses again, a suspended key and a deleted customer.

Each verified webhook is printed as it is stored: the time, the type, the event id and the
latency from its occurred_at. seed ends when an event of every reseller type has arrived (both
budget crossings and both balance.low among them), or
fails after --wait naming those that did not; with --follow the receiver stays up, printing
what else arrives (a replay, a test event), until interrupted. The partner's key and ids are written to
--data-dir as seed.env (shell variables: PARTNER, API_KEY, ENDPOINT, CUSTOMER, BUDGET), for the
next commands of docs/reseller.md.
`

// seedTypes are the reseller's event types: every business type of the catalog.
func seedTypes() []string {
	var out []string
	for _, et := range eventcatalog.Types() {
		if et.Category == "business" {
			out = append(out, et.Type)
		}
	}
	return out
}

func runSeed(ctx context.Context, args []string, out io.Writer) error {
	fs := flagsOf("seed")
	fs.usage = seedUsage
	partner := fs.String("partner", "demo", "the partner to seed; created if missing")
	receiverAddr := fs.String("receiver-addr", "127.0.0.1:0", "listen address of the receiver (port 0: any free port)")
	wait := fs.Duration("wait", time.Minute, "how long to wait for an event of every reseller type")
	follow := fs.Bool("follow", false, "keep the receiver running after every type arrived, printing what comes (replays, tests), until interrupted")
	s, err := fs.parse(args, out)
	if err != nil {
		return err
	}
	token := s.AdminToken
	if token == "" {
		b, err := os.ReadFile(filepath.Join(s.DataDir, "dev-admin-token"))
		if err != nil {
			return errors.New("seed: no operator token: set HOOKSTREAM_ADMIN_TOKEN, or run in the directory of hookstream dev")
		}
		token = strings.TrimSpace(string(b))
	}
	adminURL := strings.TrimSuffix(s.AdminURL, "/")
	operator := &jsonClient{base: adminURL, token: token}

	// The partner and its key.
	if err := operator.call(ctx, "POST", "/v1/partners", map[string]string{"id": *partner, "name": "Demo reseller partner"}, nil, http.StatusCreated, http.StatusConflict); err != nil {
		return fmt.Errorf("seed: partner: %w (is hookstream dev running? HOOKSTREAM_ADMIN_URL names the admin API)", err)
	}
	var key struct{ Key string }
	if err := operator.call(ctx, "POST", "/v1/partners/"+*partner+"/api-keys", nil, &key, http.StatusCreated); err != nil {
		return fmt.Errorf("seed: partner api key: %w", err)
	}
	admin := &jsonClient{base: adminURL, token: key.Key}
	platform := &jsonClient{base: "http://" + s.ResellerAddr, token: key.Key}

	// The receiver: the webhook/inbox handler, on a port of its own, storing into the dev
	// database and printing each event as its Run loop processes it.
	pool, err := s.openPool(ctx, "seed")
	if err != nil {
		return fmt.Errorf("seed: postgres: %w", err)
	}
	defer pool.Close()
	const table = "seed_inbox"
	if err := inbox.MigrateTable(ctx, pool, table); err != nil {
		return fmt.Errorf("seed: inbox table: %w", err)
	}
	ln, err := net.Listen("tcp", *receiverAddr)
	if err != nil {
		return fmt.Errorf("seed: receiver: %w", err)
	}
	defer ln.Close()
	hookURL := "http://" + ln.Addr().String() + "/hooks"

	var old struct {
		Data []struct{ ID, URL string }
	}
	if err := admin.call(ctx, "GET", "/v1/partners/"+*partner+"/endpoints?limit=100", nil, &old, http.StatusOK); err != nil {
		return fmt.Errorf("seed: endpoints: %w", err)
	}
	for _, ep := range old.Data {
		if strings.HasSuffix(ep.URL, "/hooks") && strings.HasPrefix(ep.URL, "http://127.0.0.1:") {
			if err := admin.call(ctx, "DELETE", "/v1/partners/"+*partner+"/endpoints/"+ep.ID, nil, nil, http.StatusNoContent, http.StatusOK); err != nil {
				return fmt.Errorf("seed: delete an earlier seed endpoint: %w", err)
			}
		}
	}
	types := seedTypes()
	var ep struct{ ID, Secret string }
	if err := admin.call(ctx, "POST", "/v1/partners/"+*partner+"/endpoints", map[string]any{"url": hookURL, "event_types": types}, &ep, http.StatusCreated); err != nil {
		return fmt.Errorf("seed: endpoint: %w", err)
	}
	verifier, err := webhook.NewVerifier([]string{ep.Secret})
	if err != nil {
		return fmt.Errorf("seed: verifier: %w", err)
	}
	seen := newSeenTypes(types)
	cfg := inbox.DefaultConfig()
	cfg.Table = table
	cfg.PollInterval = 200 * time.Millisecond
	cfg.Logger = slog.New(slog.DiscardHandler)
	in, err := inbox.New(pool, verifier, func(_ context.Context, _ pgx.Tx, ev inbox.Event) error {
		env, err := ev.Envelope()
		if err != nil {
			return err
		}
		seen.add(out, env.Type, env.EventID, time.Since(env.OccurredAt))
		return nil
	}, cfg)
	if err != nil {
		return fmt.Errorf("seed: inbox: %w", err)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	mux := http.NewServeMux()
	mux.Handle("POST /hooks", in)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ln) })
	wg.Go(func() { _ = in.Run(rctx) })
	defer func() {
		stop()
		_ = srv.Close()
		wg.Wait()
	}()
	fmt.Fprintf(out, "Partner %s, endpoint %s -> %s (a webhook/inbox receiver)\n", *partner, ep.ID, hookURL)

	ids, err := simulate(ctx, platform)
	if err != nil {
		return fmt.Errorf("seed: the reseller platform at %s: %w (is hookstream dev running? HOOKSTREAM_RESELLER_ADDR names its address)", platform.base, err)
	}
	env := fmt.Sprintf("PARTNER=%s\nAPI_KEY=%s\nENDPOINT=%s\nCUSTOMER=%s\nBUDGET=%s\n", *partner, key.Key, ep.ID, ids.customer, ids.budget)
	if err := os.MkdirAll(s.DataDir, 0o700); err == nil {
		err = os.WriteFile(filepath.Join(s.DataDir, "seed.env"), []byte(env), 0o600)
		if err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	select {
	case <-seen.all:
		fmt.Fprintf(out, "Every reseller event type arrived, verified (%d events). Ids and the partner key: %s\n",
			seen.count(), filepath.Join(s.DataDir, "seed.env"))
		if *follow {
			fmt.Fprintln(out, "Receiving until interrupted (Ctrl-C).")
			<-ctx.Done()
		}
		return nil
	case <-time.After(*wait):
		return fmt.Errorf("seed: after %s no verified event of %s arrived", *wait, strings.Join(seen.missing(), ", "))
	case <-ctx.Done():
		return ctx.Err()
	}
}

type seedIDs struct{ customer, budget string }

// simulate drives the reference platform as a partner's automation would, so that every
// reseller event type is emitted, a budget crossing and its re-arm included.
func simulate(ctx context.Context, p *jsonClient) (seedIDs, error) {
	var ids seedIDs
	var cus, old struct{ ID string }
	if err := p.call(ctx, "POST", "/v1/customers", map[string]any{"name": "Acme AI", "currency": "USD", "low_balance_threshold": "20.00"}, &cus, http.StatusCreated); err != nil {
		return ids, err
	}
	ids.customer = cus.ID
	c := "/v1/customers/" + cus.ID
	var key struct{ ID string }
	var bud struct{ ID string }
	now := time.Now().UTC()
	usage := func(cost string) error {
		return p.call(ctx, "POST", c+"/usage", map[string]any{"api_key_id": key.ID, "period_start": now.Add(-time.Minute), "period_end": now,
			"requests": 120, "input_tokens": 88000, "output_tokens": 12000, "cost": cost}, nil, http.StatusCreated)
	}
	steps := []func() error{
		func() error {
			return p.call(ctx, "PATCH", c, map[string]any{"name": "Acme AI Ltd"}, nil, http.StatusOK)
		},
		func() error {
			return p.call(ctx, "POST", c+"/api-keys", map[string]any{"name": "production"}, &key, http.StatusCreated)
		},
		func() error {
			return p.call(ctx, "POST", c+"/credits", map[string]any{"amount": "100.00", "source": "purchase"}, nil, http.StatusCreated)
		},
		func() error {
			return p.call(ctx, "POST", c+"/budgets", map[string]any{"limit": "100.00", "period_start": now.Add(-time.Hour),
				"period_end": now.Add(30 * 24 * time.Hour)}, &bud, http.StatusCreated)
		},
		func() error { return usage("50.00") }, // 50 %
		func() error { return usage("35.00") }, // 85 %: 80 crossed; balance 15.00 < 20.00: low
		func() error { // a usage correction: 75 %, balance 25.00: both re-armed
			return p.call(ctx, "POST", c+"/adjustments", map[string]any{"amount": "10.00", "reason": "usage_correction", "budget_id": bud.ID}, nil, http.StatusCreated)
		},
		func() error { return usage("10.00") }, // 85 %: 80 crossed again; balance 15.00: low again
		func() error {
			return p.call(ctx, "POST", "/v1/api-keys/"+key.ID+"/status", map[string]any{"status": "suspended", "reason": "balance_depleted"}, nil, http.StatusOK)
		},
		func() error {
			return p.call(ctx, "POST", "/v1/customers", map[string]any{"name": "Old Corp", "currency": "USD"}, &old, http.StatusCreated)
		},
		func() error { return p.call(ctx, "DELETE", "/v1/customers/"+old.ID, nil, nil, http.StatusOK) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return ids, err
		}
	}
	ids.budget = bud.ID
	return ids, nil
}

// seenTypes counts the verified events by type and closes all once every type arrived (the
// types of simulatedTwice twice).
type seenTypes struct {
	mu    sync.Mutex
	want  []string
	got   map[string]int
	n     int
	all   chan struct{}
	shown bool
}

func newSeenTypes(types []string) *seenTypes {
	return &seenTypes{want: types, got: map[string]int{}, all: make(chan struct{})}
}

// simulatedTwice are the types simulate emits twice (a crossing, and the one after its re-arm):
// seed waits for both, so that what it prints shows the re-arm.
var simulatedTwice = map[string]bool{"budget.threshold_crossed": true, "balance.low": true}

func (s *seenTypes) add(out io.Writer, typ, id string, latency time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[typ]++
	s.n++
	fmt.Fprintf(out, "%s  verified  %-26s %s  %s\n", time.Now().Format("15:04:05"), typ, id, latency.Round(time.Millisecond))
	if !s.shown && len(s.missingLocked()) == 0 {
		s.shown = true
		close(s.all)
	}
}

func (s *seenTypes) missing() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.missingLocked()
}

func (s *seenTypes) missingLocked() []string {
	var out []string
	for _, t := range s.want {
		if need := 1 + btoi(simulatedTwice[t]); s.got[t] < need {
			out = append(out, t)
		}
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *seenTypes) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// seedClient bounds every call of seed to the local APIs.
var seedClient = &http.Client{Timeout: 30 * time.Second}

// jsonClient calls a JSON HTTP API with a bearer token.
type jsonClient struct {
	base, token string
}

// call sends body (when not nil) as JSON and decodes the answer into out (when not nil); a
// status outside ok is an error carrying the answer.
func (c *jsonClient) call(ctx context.Context, method, path string, body, out any, ok ...int) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := seedClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if !slices.Contains(ok, res.StatusCode) {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, bytes.TrimSpace(b))
	}
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}
