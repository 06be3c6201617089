package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// The quick start's seeding against hookstream dev: the receiver built on webhook/inbox stores
// and prints at least one verified event of every reseller type, the budget crossing twice (its
// re-arm) and balance.low twice among them, and seed.env names the partner's key and ids.
func TestSeedShowsEveryResellerType(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	out := seed(t, dev, db)
	t.Log(out)
	for _, typ := range seedTypes() {
		if !strings.Contains(out, "verified  "+typ+" ") {
			t.Errorf("no verified %s in the seed's output:\n%s", typ, out)
		}
	}
	if n := strings.Count(out, "verified  budget.threshold_crossed "); n < 2 {
		t.Errorf("%d budget crossings shown, want the crossing and the one after its re-arm:\n%s", n, out)
	}
	if n := strings.Count(out, "verified  balance.low "); n < 2 {
		t.Errorf("%d balance.low shown, want two (a re-arm by the correction):\n%s", n, out)
	}
	env, err := os.ReadFile(filepath.Join(dev.dataDir, "seed.env"))
	if err != nil || !strings.Contains(string(env), "API_KEY=hsk_") || !strings.Contains(string(env), "CUSTOMER=cus_") {
		t.Errorf("seed.env: %v\n%s", err, env)
	}
	var stored int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM seed_inbox WHERE state = 'processed'`).Scan(&stored); err != nil || stored < len(seedTypes()) {
		t.Errorf("the inbox holds %d processed events (%v)", stored, err)
	}

	// Again, with --follow: the partner is reused, the earlier seed endpoint replaced, and the
	// receiver stays up after every type arrived: a test event sent then is shown verified.
	ctx, cancel := context.WithCancel(context.Background())
	var follow testenv.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"seed", "--follow", "--admin-url", dev.adminURL, "--data-dir", dev.dataDir,
			"--reseller-addr", dev.resellerAddr, "--database-url", db.URL}, &follow)
	}()
	waitOutput(t, &follow, "Receiving until interrupted", cancel)
	env, _ = os.ReadFile(filepath.Join(dev.dataDir, "seed.env"))
	endpoint := regexp.MustCompile(`ENDPOINT=(\S+)`).FindStringSubmatch(string(env))
	if endpoint == nil {
		t.Fatalf("seed.env: %s", env)
	}
	res, err := dev.api.SendTestEventWithResponse(context.Background(), "demo", endpoint[1], adminclient.Empty{})
	if err != nil || res.StatusCode() >= 300 {
		t.Fatalf("test event: %v %s", err, res.Body)
	}
	waitOutput(t, &follow, "verified  webhook.test ", cancel)
	var endpoints int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM endpoint WHERE partner_id = 'demo'`).Scan(&endpoints); err != nil || endpoints != 1 {
		t.Errorf("the partner has %d endpoints (%v), want the last seed's alone", endpoints, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("seed --follow, interrupted: %v", err)
	}
}

// seed runs hookstream seed against dev and returns what it printed.
func seed(t *testing.T, dev *devInstance, db *testenv.Database) string {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), []string{"seed", "--admin-url", dev.adminURL, "--data-dir", dev.dataDir,
		"--reseller-addr", dev.resellerAddr, "--database-url", db.URL}, &out)
	if err != nil {
		t.Fatalf("seed: %v\n%s", err, out.String())
	}
	return out.String()
}

// The reseller block of docs/reseller.md, as a user types it with make dev running: the seed,
// then every curl (state reads, deliveries, a replay, a rotation, the cursor feed, the CSV
// export) runs against hookstream dev and succeeds (curl -f: a 4xx or 5xx fails the block).
func TestDocsResellerCommands(t *testing.T) {
	t.Parallel()
	script, curl := docsShellBlock(t, "docs/reseller.md", "hookstream seed")
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	out := runDocsScript(t, "docs/reseller.md", script, map[string]string{
		"localhost:8080":          strings.TrimPrefix(dev.adminURL, "http://"),
		"localhost:8081":          dev.resellerAddr,
		".data/":                  dev.dataDir + "/",
		"go run ./cmd/hookstream": testenv.Binary(t),
		"curl ":                   curl + " ",
	}, "HOOKSTREAM_DATABASE_URL="+db.URL, "HOOKSTREAM_ADMIN_URL="+dev.adminURL,
		"HOOKSTREAM_RESELLER_ADDR="+dev.resellerAddr, "HOOKSTREAM_DATA_DIR="+dev.dataDir)
	for _, want := range []string{
		"verified  budget.threshold_crossed", // the seed
		`"version":`,                         // state reads
		`"percent": "85.00"`,                 // the budget after the seed
		`"delivery_id"`,                      // deliveries
		`"secret":"whsec_`,                   // the rotation
		`"next_cursor"`,                      // the feed
		"kind,id,customer_id,",               // the CSV export's header
		"usage,use_",                         // and its rows
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the commands' output lacks %q:\n%s", want, out)
		}
	}
}
