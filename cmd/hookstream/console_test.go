package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/webhook"
)

// tab is a headless Chromium tab on the console of a running `hookstream dev`.
type tab struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
}

// do runs browser steps, each batch bounded so a page that never comes fails the test.
func (b *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(b.ctx, chromedp.Location())
		b.t.Fatalf("browser at %s: %v", loc, err)
	}
}

func (b *tab) open(path string) { b.t.Helper(); b.do(chromedp.Navigate(b.base + path)) }

func (b *tab) text(id string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	for {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
		if err == nil {
			return strings.TrimSpace(s)
		}
		// A page that follows the pipeline live replaces its parts: the node found a moment
		// ago may be gone when its text is read. Read the new one.
		if !strings.Contains(err.Error(), "No node with given id") || ctx.Err() != nil {
			b.t.Fatalf("text of #%s: %v", id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForReload opens path until a JavaScript condition holds on it, for at most a minute: for
// what shows only once the pipeline has recorded it.
func (b *tab) waitForReload(what, path, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b.open(path)
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
			b.t.Fatalf("waited a minute for %s at %s (%v)", what, path, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// waitFor evaluates a JavaScript condition until it holds, across page loads (a page that
// reloads itself is between documents for a moment), for at most a minute.
func (b *tab) waitFor(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			loc, _ := chromedp.Run(b.ctx, chromedp.Location())
			b.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
			b.t.Fatalf("waited a minute for %s at %s (%v)", what, loc, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// confirmAll answers the page's confirm() dialogs with yes.
func (b *tab) confirmAll() {
	b.t.Helper()
	b.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[any]("window.confirm = function () { return true; }")(ctx, t)
		return err
	}))
}

func (b *tab) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Error(err)
	}
}

func (b *tab) signIn(token string) {
	b.t.Helper()
	b.open("/console/")
	b.do(chromedp.WaitVisible(chromedp.ID("token")), chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("sign-in")), chromedp.WaitVisible(chromedp.ID("sign-out")))
}

func (b *tab) signOut() {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("token")))
}

// signatures counts the v1 signatures of a request.
func signatures(m receivedMsg) int { return strings.Count(m.header.Get("webhook-signature"), "v1,") }

func verifies(m receivedMsg, secret string) bool {
	v, err := webhook.NewVerifier([]string{secret})
	return err == nil && v.VerifyHeader(m.header, m.body) == nil
}

// R39, end to end in a real browser: headless Chromium on the console of `hookstream dev`
// (real PostgreSQL, its embedded Kafka, every component) and a local receiver. A partner signs
// in with its API key, creates an endpoint for the receiver (its secret shown once), sends a test
// event and sees the attempt appear; an event the platform commits arrives too, and the partner
// looks at its evidence and replays it (same webhook-id; the API replays no test deliveries), rotates
// the secret and sees both signatures arrive, disables and enables the endpoint, replays a time
// range with live progress; another partner cannot reach the first partner's endpoint by its
// URL, nor an operator page; the operator sees the partners, the failing endpoints across
// partners (and disables one) and the outbox dead letters. Screenshots of each page go to .data/console/.
func TestConsoleInBrowser(t *testing.T) {
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	ctx := context.Background()
	keys := map[string]string{}
	for _, p := range []string{"acme", "globex"} {
		name := strings.ToUpper(p[:1]) + p[1:]
		res, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: p, Name: &name})
		must(t, "create partner", res, err)
		key, err := dev.api.CreateAPIKeyWithResponse(ctx, p, adminclient.APIKeyCreate{})
		must(t, "create key", key, err)
		keys[p] = key.JSON201.Key
	}
	var rx received
	receiver := httptest.NewServer(rx.handler(func(int) int { return http.StatusOK }))
	t.Cleanup(receiver.Close)

	b := &tab{t: t, ctx: testenv.NewBrowser(t), base: dev.adminURL, shots: testenv.ScreenshotDir(t, "console")}

	// Sign in as acme.
	b.open("/console/")
	b.do(chromedp.WaitVisible(chromedp.ID("token")))
	b.shot("01-sign-in")
	b.signIn(keys["acme"])
	b.waitFor("the endpoints page", `location.pathname === "/console/partners/acme/endpoints"`)

	// Create an endpoint pointing at the receiver: its secret is shown once.
	b.do(chromedp.Click(chromedp.ID("new-endpoint")), chromedp.WaitVisible(chromedp.ID("url")),
		chromedp.SendKeys(chromedp.ID("url"), receiver.URL+"/hooks"),
		chromedp.SendKeys(chromedp.ID("description"), "billing webhooks"))
	b.shot("02-new-endpoint")
	b.do(chromedp.Click(chromedp.ID("save-endpoint")), chromedp.WaitVisible(chromedp.ID("new-secret")))
	secret := b.text("new-secret")
	eid := b.text("endpoint-id")
	if !strings.HasPrefix(secret, "whsec_") || !strings.HasPrefix(eid, "ep_") {
		t.Fatalf("created endpoint %q with secret %q", eid, secret)
	}
	b.shot("03-endpoint-created")
	endpointPath := "/console/partners/acme/endpoints/" + eid
	b.open(endpointPath)
	if b.text("endpoint-url") != receiver.URL+"/hooks" {
		t.Fatalf("endpoint url %q", b.text("endpoint-url"))
	}
	b.waitFor("the secret to be gone on reload", `document.getElementById("new-secret") === null`)

	// Send a test event and see the attempt appear (the page follows the delivery live).
	b.do(chromedp.Click(chromedp.ID("send-test")), chromedp.WaitVisible(chromedp.ID("flash-link")),
		chromedp.Click(chromedp.ID("flash-link")))
	b.waitFor("the test attempt", `document.querySelectorAll("#attempts tr.attempt").length === 1`)
	if got := b.text("delivery-state"); got != "succeeded" {
		t.Fatalf("test delivery state %q", got)
	}
	msgs := rx.waitFor(t, 1, time.Minute)
	if !verifies(msgs[0], secret) || signatures(msgs[0]) != 1 {
		t.Fatalf("the test request does not verify with the secret shown once: %v", msgs[0].header)
	}
	eventID := b.text("event-id")
	if msgs[0].header.Get("webhook-id") != eventID {
		t.Fatalf("received webhook-id %s, console shows %s", msgs[0].header.Get("webhook-id"), eventID)
	}
	b.shot("04-test-delivery")

	if got := b.text("no-replay"); !strings.Contains(got, "not replayed") {
		t.Fatalf("a test delivery offers replay: %q", got)
	}

	// An event the platform commits arrives too; its delivery, its evidence, and a replay of it.
	committed := appendEvent(t, db, "acme", "customer.created")
	rx.waitFor(t, 2, time.Minute)
	b.waitForReload("the committed event's delivery", endpointPath+"?type=customer.*",
		`document.querySelectorAll("#deliveries tr.delivery").length === 1`)
	b.do(chromedp.Click(chromedp.CSS("#deliveries a.delivery-link")), chromedp.WaitVisible(chromedp.ID("attempts")))
	if got := b.text("event-id"); got != committed {
		t.Fatalf("delivery page shows event %s, committed %s", got, committed)
	}
	deliveryPath, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string]("location.pathname"))
	b.do(chromedp.Click(chromedp.CSS("#attempts a.attempt-link")), chromedp.WaitVisible(chromedp.ID("attempt-status")))
	if got := b.text("attempt-status"); got != "200" {
		t.Fatalf("attempt status %q", got)
	}
	if h := b.text("request-headers"); !strings.Contains(h, committed) || strings.Contains(h, secret) {
		t.Fatalf("request headers %q", h)
	}
	if body := b.text("request-body"); !strings.Contains(body, committed) || !strings.Contains(body, "customer.created") {
		t.Fatalf("request body %q", body)
	}
	b.shot("05-attempt")

	// Replay it: a new attempt, same event id, with the page following it live.
	b.open(deliveryPath)
	b.do(chromedp.Click(chromedp.ID("replay-delivery")))
	b.waitFor("the replayed attempt", `document.querySelectorAll("#attempts tr.attempt").length === 2`)
	if got := b.text("attempts"); !strings.Contains(got, "replay") {
		t.Fatalf("attempts after replay: %q", got)
	}
	msgs = rx.waitFor(t, 3, time.Minute)
	if msgs[2].header.Get("webhook-id") != committed || !verifies(msgs[2], secret) {
		t.Fatalf("the replay came as %s", msgs[2].header.Get("webhook-id"))
	}
	b.shot("06-replayed")

	// Rotate the secret: a new one, shown once; then both signatures arrive.
	b.open(endpointPath)
	b.confirmAll()
	b.do(chromedp.Click(chromedp.ID("rotate")), chromedp.WaitVisible(chromedp.ID("new-secret")))
	rotated := b.text("new-secret")
	if !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
		t.Fatalf("rotated secret %q", rotated)
	}
	if got := b.text("secrets"); strings.Count(got, "whsk_") != 2 || !strings.Contains(got, "signs until") {
		t.Fatalf("secrets after rotation: %q", got)
	}
	b.shot("07-rotated")
	// The sender learns the new secret through cdc and the endpoints topic; a test event sent
	// before it has may still carry one signature, so send until one carries both (the quota
	// allows 10 a minute; one was sent so far).
	var both *receivedMsg
	for i := 0; both == nil; i++ {
		if i == 6 {
			t.Fatal("six test events after the rotation, none signed with both secrets")
		}
		b.open(endpointPath)
		n := len(rx.all())
		b.do(chromedp.Click(chromedp.ID("send-test")), chromedp.WaitVisible(chromedp.ID("flash-link")))
		m := rx.waitFor(t, n+1, time.Minute)[n]
		if signatures(m) == 2 {
			both = &m
		}
	}
	if !verifies(*both, secret) || !verifies(*both, rotated) {
		t.Fatalf("a request during the overlap does not verify with each secret: %q", both.header.Get("webhook-signature"))
	}

	// Disable, then enable.
	b.open(endpointPath)
	b.confirmAll()
	b.do(chromedp.SendKeys(chromedp.ID("disable-reason"), "receiver maintenance"), chromedp.Click(chromedp.ID("disable")),
		chromedp.WaitVisible(chromedp.ID("enable")))
	if got := b.text("endpoint-status"); got != "disabled" {
		t.Fatalf("status after disable %q", got)
	}
	ep, err := dev.api.GetEndpointWithResponse(ctx, "acme", eid)
	must(t, "get endpoint", ep, err)
	if ep.JSON200.Status != adminclient.EndpointStatusDisabled || *ep.JSON200.DisabledReason != "receiver maintenance" {
		t.Fatalf("the API has the endpoint %s (%v)", ep.JSON200.Status, ep.JSON200.DisabledReason)
	}
	b.do(chromedp.Click(chromedp.ID("send-test")), chromedp.WaitVisible(chromedp.CSS("#flash.error")))
	if got := b.text("flash"); !strings.Contains(got, "disabled") {
		t.Fatalf("a test event to a disabled endpoint: %q", got)
	}
	b.shot("08-disabled")
	b.do(chromedp.Click(chromedp.ID("enable")), chromedp.WaitVisible(chromedp.ID("disable")))
	if got := b.text("endpoint-status"); got != "active" {
		t.Fatalf("status after enable %q", got)
	}

	// Replay the last hour with live progress: the job page follows it to its end.
	before := len(rx.all())
	b.do(chromedp.Click(chromedp.ID("replay-range-submit")), chromedp.WaitVisible(chromedp.ID("job")))
	b.waitFor("the replay job to finish", `document.getElementById("job-state").textContent === "succeeded"`)
	total := b.text("job-total")
	if total == "0" || b.text("job-done") != total {
		t.Fatalf("replay job: %s done of %s", b.text("job-done"), total)
	}
	b.shot("09-replay-job")
	var n int
	fmt.Sscan(total, &n)
	rx.waitFor(t, before+n, time.Minute)

	// The endpoint with its health, and the list with the small charts.
	b.open(endpointPath)
	b.do(chromedp.WaitVisible(chromedp.ID("deliveries")))
	b.shot("10-endpoint")
	b.open("/console/partners/acme/endpoints")
	b.do(chromedp.WaitVisible(chromedp.ID("endpoints")))
	if got := b.text("endpoints"); !strings.Contains(got, "100.0 %") || !strings.Contains(got, receiver.URL) {
		t.Fatalf("endpoints list: %q", got)
	}
	b.shot("11-endpoints")
	b.open("/console/event-types")
	b.do(chromedp.WaitVisible(chromedp.ID("event-types")), chromedp.Click(chromedp.CSS("details.event-type summary")))
	b.shot("12-event-types")
	b.signOut()
	b.open(endpointPath)
	b.do(chromedp.WaitVisible(chromedp.ID("token"))) // signed out: back to the sign-in page

	// Another partner reaches neither acme's endpoint by its URL nor an operator page.
	b.signIn(keys["globex"])
	seen := len(rx.all())
	b.open(endpointPath)
	b.do(chromedp.WaitVisible(chromedp.ID("error-status")))
	if got := b.text("error-status"); !strings.HasPrefix(got, "404") {
		t.Fatalf("globex on acme's endpoint: %q", got)
	}
	b.shot("13-other-partner-404")
	b.open("/console/operator/failing")
	if got := b.text("error-status"); !strings.HasPrefix(got, "403") {
		t.Fatalf("globex on an operator page: %q", got)
	}
	b.open(deliveryPath)
	if got := b.text("error-status"); !strings.HasPrefix(got, "404") {
		t.Fatalf("globex on acme's delivery: %q", got)
	}
	b.signOut()
	if len(rx.all()) != seen {
		t.Fatal("the other partner's session caused a delivery")
	}

	// The operator: partners, failing endpoints across partners (and disabling one), outbox dead
	// letters. globex has an endpoint whose receiver answers 503 and one disabled after a 410;
	// the platform committed a row of a type the catalog does not know.
	var down received
	downSrv := httptest.NewServer(down.handler(func(int) int { return http.StatusServiceUnavailable }))
	t.Cleanup(downSrv.Close)
	failing, err := dev.api.CreateEndpointWithResponse(ctx, "globex", adminclient.EndpointCreate{URL: downSrv.URL + "/hooks", EventTypes: []string{"*"}})
	must(t, "create endpoint", failing, err)
	gone, err := dev.api.CreateEndpointWithResponse(ctx, "globex", adminclient.EndpointCreate{URL: downSrv.URL + "/gone", EventTypes: []string{"*"}})
	must(t, "create endpoint", gone, err)
	dis, err := dev.api.DisableEndpointWithResponse(ctx, "globex", gone.JSON201.ID, adminclient.Disable{Reason: "410 Gone"})
	must(t, "disable", dis, err)
	test, err := dev.api.SendTestEventWithResponse(ctx, "globex", failing.JSON201.ID, adminclient.Empty{})
	must(t, "test event", test, err)
	down.waitFor(t, 1, time.Minute)
	if _, err := db.Pool.Exec(ctx, `INSERT INTO outbox_event (event_id, partner_id, type, subject_type, subject_id, occurred_at, payload)
		VALUES ($1, 'globex', 'invoice.paid', 'invoice', 'inv_1', now(), '{"invoice_id":"inv_1"}')`, outbox.NewEventID()); err != nil {
		t.Fatal(err)
	}

	b.signIn(dev.token)
	b.waitFor("the partners page", `location.pathname === "/console/operator/partners"`)
	if got := b.text("partners"); !strings.Contains(got, "acme") || !strings.Contains(got, "globex") {
		t.Fatalf("partners page: %q", got)
	}
	b.shot("14-operator-partners")
	b.waitForReload("the failing endpoint", "/console/operator/failing",
		`document.getElementById("failing") !== null && document.getElementById("failing").textContent.indexOf("`+failing.JSON201.ID+`") >= 0`)
	if got := b.text("failing"); !strings.Contains(got, gone.JSON201.ID) || !strings.Contains(got, "410 Gone") || strings.Contains(got, eid) {
		t.Fatalf("failing endpoints: %q", got)
	}
	b.shot("15-operator-failing")
	b.confirmAll()
	b.do(chromedp.Click(chromedp.CSS("#failing form button")), chromedp.WaitVisible(chromedp.ID("enable")))
	if got := b.text("endpoint-id"); got != failing.JSON201.ID || b.text("endpoint-status") != "disabled" {
		t.Fatalf("the operator disabled %s, now %s", got, b.text("endpoint-status"))
	}
	b.waitForReload("the dead letter", "/console/operator/dead-letters", `document.getElementById("dead-letters") !== null`)
	if got := b.text("dead-letters"); !strings.Contains(got, "unknown_type") || !strings.Contains(got, "invoice.paid") {
		t.Fatalf("dead letters: %q", got)
	}
	b.shot("16-operator-dead-letters")
	b.open("/console/partners/globex/endpoints")
	b.do(chromedp.WaitVisible(chromedp.ID("endpoints")))
	b.shot("17-operator-partner-endpoints")
	b.signOut()
}
