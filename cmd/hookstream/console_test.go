package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
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
	shots *screenshots
	pages int // pages whose text was checked
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

// open loads path and checks what the page says (checkText).
func (b *tab) open(path string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base + path))
	b.checkText()
}

// internalReference is what a reader of the console cannot follow: the project's design
// sections, requirement ids and issue numbers. Requirement ids are matched as words, since the
// ids the pages show (base32 ULIDs) hold "R" and digits inside them.
var internalReference = regexp.MustCompile(`design\.md|\bR[0-9]+\b|issue [0-9]`)

// checkText fails the test when the page's text (every element's, shown or folded, secrets and
// what was typed into fields left out: they are random) cites the project's internal documents.
func (b *tab) checkText() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(function () {
		var c = document.documentElement.cloneNode(true);
		c.querySelectorAll(".secret, input, textarea, script, style").forEach(function (e) { e.remove(); });
		return c.textContent;
	})()`))
	if err != nil {
		return // between documents (a page reloading itself): the next open or shot reads it
	}
	if m := internalReference.FindStringIndex(text); m != nil {
		loc, _ := chromedp.Run(b.ctx, chromedp.Location())
		b.t.Errorf("%s cites %q: …%s…", loc, text[m[0]:m[1]], text[max(m[0]-60, 0):min(m[1]+60, len(text))])
	}
	b.pages++
}

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

// fill sets form fields by id, as typing and choosing would (the input and change events fire).
func (b *tab) fill(fields map[string]string) {
	b.t.Helper()
	for id, v := range fields {
		js := fmt.Sprintf(`(function () { var e = document.getElementById(%q); if (!e) { return false; } e.value = %q;
			e.dispatchEvent(new Event("input", { bubbles: true })); e.dispatchEvent(new Event("change", { bubbles: true })); return true; })()`, id, v)
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
		if err != nil || !ok {
			b.t.Fatalf("fill #%s: %v", id, err)
		}
	}
}

// html is the page's markup, for what must not be anywhere in it.
func (b *tab) html() string {
	b.t.Helper()
	h, err := chromedp.Run(b.ctx, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
	if err != nil {
		b.t.Fatal(err)
	}
	return h
}

// confirmAll answers the page's confirm() dialogs with yes.
func (b *tab) confirmAll() {
	b.t.Helper()
	b.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[any]("window.confirm = function () { return true; }")(ctx, t)
		return err
	}))
}

// shot takes a screenshot of the whole page (after checking its text) for the docs.
func (b *tab) shot(name string) {
	b.t.Helper()
	b.checkText()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	b.shots.save(b.t, name, png)
}

// screenshots are the console's pages as the docs show them (docs/console/*.png, in
// docs/console.md). With HOOKSTREAM_UPDATE_SCREENSHOTS=1 (make console-screenshots) the test
// writes them there; otherwise it writes them to the data directory's console/ folder, so a test
// run leaves the tree clean, and checks that the docs have each page it took (and no page it no
// longer takes). The screenshots of a failure ("failed-…") go to the data directory only.
type screenshots struct {
	update bool
	dir    string // where this run writes them
	docs   string // docs/console
	taken  []string
}

func newScreenshots(t *testing.T) *screenshots {
	s := &screenshots{update: os.Getenv("HOOKSTREAM_UPDATE_SCREENSHOTS") == "1", docs: filepath.Join("..", "..", "docs", "console"),
		dir: testenv.ScreenshotDir(t, "console")}
	if s.update {
		if err := os.MkdirAll(s.docs, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *screenshots) save(t *testing.T, name string, png []byte) {
	t.Helper()
	dir := s.dir
	if !strings.HasPrefix(name, "failed-") {
		s.taken = append(s.taken, name)
		if s.update {
			dir = s.docs
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Error(err)
	}
}

// check holds docs/console and docs/console.md to the pages this run took.
func (s *screenshots) check(t *testing.T) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "console.md"))
	if err != nil {
		t.Fatal(err)
	}
	taken := map[string]bool{}
	for _, name := range s.taken {
		taken[name] = true
		if _, err := os.Stat(filepath.Join(s.docs, name+".png")); err != nil {
			t.Errorf("docs/console/%s.png is missing: run make console-screenshots and commit it", name)
		}
		if !strings.Contains(string(doc), "(console/"+name+".png)") {
			t.Errorf("docs/console.md does not show console/%s.png", name)
		}
	}
	old, _ := filepath.Glob(filepath.Join(s.docs, "*.png"))
	for _, p := range old {
		if name := strings.TrimSuffix(filepath.Base(p), ".png"); !taken[name] {
			t.Errorf("docs/console/%s.png is no page the test takes any more: remove it", name)
		}
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
	t.Parallel()
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

	b := &tab{t: t, ctx: testenv.NewBrowser(t), base: dev.adminURL, shots: newScreenshots(t)}

	// Sign in as acme.
	b.open("/console/")
	b.do(chromedp.WaitVisible(chromedp.ID("token")))
	b.shot("sign-in")
	b.signIn(keys["acme"])
	b.waitFor("the endpoints page", `location.pathname === "/console/partners/acme/endpoints"`)

	// Create an endpoint pointing at the receiver: its secret is shown once.
	b.do(chromedp.Click(chromedp.ID("new-endpoint")), chromedp.WaitVisible(chromedp.ID("url")),
		chromedp.SendKeys(chromedp.ID("url"), receiver.URL+"/hooks"),
		chromedp.SendKeys(chromedp.ID("description"), "billing webhooks"))
	b.shot("new-endpoint")
	b.do(chromedp.Click(chromedp.ID("save-endpoint")), chromedp.WaitVisible(chromedp.ID("new-secret")))
	secret := b.text("new-secret")
	eid := b.text("endpoint-id")
	if !strings.HasPrefix(secret, "whsec_") || !strings.HasPrefix(eid, "ep_") {
		t.Fatalf("created endpoint %q with secret %q", eid, secret)
	}
	b.shot("endpoint-created")
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
	b.shot("test-delivery")

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
	b.shot("attempt")

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
	b.shot("replayed")

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
	b.shot("rotated")
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
	b.shot("disabled")
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
	b.shot("replay-job")
	var n int
	fmt.Sscan(total, &n)
	rx.waitFor(t, before+n, time.Minute)

	// The endpoint with its health, and the list with the small charts.
	b.open(endpointPath)
	b.do(chromedp.WaitVisible(chromedp.ID("deliveries")))
	b.shot("endpoint")
	b.open("/console/partners/acme/endpoints")
	b.do(chromedp.WaitVisible(chromedp.ID("endpoints")))
	if got := b.text("endpoints"); !strings.Contains(got, "100.0 %") || !strings.Contains(got, receiver.URL) {
		t.Fatalf("endpoints list: %q", got)
	}
	b.shot("endpoints")

	// An endpoint with everything the API sets on one, from the form: the API's refusal of its
	// filter shown beside the field, then read back through the API; the client secret, typed
	// twice (the form shown again after the refusal does not hold it), never shown.
	const clientSecret = "oauth-client-secret-typed-in-the-console"
	b.open("/console/partners/acme/endpoints/new")
	b.fill(map[string]string{"url": receiver.URL + "/enterprise", "event-types": "customer.*", "description": "enterprise customers",
		"filter": `data.plan ==`, "ordering": "bounded", "max-in-flight": "4", "rate-limit": "20",
		"retry-delays": "5s, 1m", "retry-attempts": "3", "retry-client-errors": "stop",
		"retry-event-types": `{"customer.deleted": {"attempts": 1}}`, "headers": "X-Tenant: acme\nX-Region: eu", "auth-type": "oauth2"})
	b.do(chromedp.WaitVisible(chromedp.ID("auth-client-secret")), // shown once OAuth is chosen
		chromedp.SendKeys(chromedp.ID("auth-token-url"), receiver.URL+"/token"),
		chromedp.SendKeys(chromedp.ID("auth-client-id"), "acme-hooks"),
		chromedp.SendKeys(chromedp.ID("auth-client-secret"), clientSecret),
		chromedp.SendKeys(chromedp.ID("auth-scopes"), "webhooks:write"))
	b.shot("new-endpoint-settings")
	b.do(chromedp.Click(chromedp.ID("save-endpoint")), chromedp.WaitVisible(chromedp.ID("error-filter")))
	if got := b.text("error-filter"); !strings.HasPrefix(got, "filter: position") {
		t.Fatalf("beside the filter: %q", got)
	}
	if strings.Contains(b.html(), clientSecret) {
		t.Fatal("the form shown again holds the client secret")
	}
	b.shot("endpoint-refused")
	b.fill(map[string]string{"filter": `data.plan == "enterprise"`})
	b.do(chromedp.SendKeys(chromedp.ID("auth-client-secret"), clientSecret), chromedp.Click(chromedp.ID("save-endpoint")),
		chromedp.WaitVisible(chromedp.ID("new-secret")))
	full := b.text("endpoint-id")
	if got := b.text("endpoint-auth"); !strings.Contains(got, "acme-hooks") || strings.Contains(b.html(), clientSecret) {
		t.Fatalf("the endpoint page shows the authentication as %q, or the secret", got)
	}
	b.shot("endpoint-settings")
	got, err := dev.api.GetEndpointWithResponse(ctx, "acme", full)
	must(t, "get endpoint", got, err)
	e := got.JSON200
	if e.Filter == nil || *e.Filter != `data.plan == "enterprise"` || e.Ordering != "bounded" || e.MaxInFlight != 4 ||
		e.RateLimitPerSec == nil || *e.RateLimitPerSec != 20 || e.Description != "enterprise customers" {
		t.Fatalf("the API has the endpoint as %+v", e)
	}
	if rp := e.RetryPolicy; rp == nil || fmt.Sprint(*rp.DelaysSeconds) != "[5 60]" || *rp.Attempts != 3 || *rp.ClientErrors != "stop" ||
		*(*rp.EventTypes)["customer.deleted"].Attempts != 1 {
		t.Fatalf("the API has the retry policy as %+v", e.RetryPolicy)
	}
	if e.Headers["X-Tenant"] != "acme" || e.Headers["X-Region"] != "eu" {
		t.Fatalf("the API has the headers as %v", e.Headers)
	}
	if a := e.Auth; a == nil || a.Type != "oauth2" || *a.ClientID != "acme-hooks" || *a.TokenURL != receiver.URL+"/token" ||
		strings.Join(*a.Scopes, " ") != "webhooks:write" {
		t.Fatalf("the API has the authentication as %+v", e.Auth)
	}
	b.do(chromedp.Click(chromedp.ID("edit-endpoint")), chromedp.WaitVisible(chromedp.ID("auth-type")))
	if kept, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.getElementById("auth-type").value`)); kept != "keep" ||
		strings.Contains(b.html(), clientSecret) {
		t.Fatalf("the edit form offers the authentication as %q, or shows its secret", kept)
	}
	b.shot("edit-endpoint")

	// The catalog: every type, its schema and example, and the endpoints subscribed to it.
	catalog, err := dev.api.ListEventTypesWithResponse(ctx)
	must(t, "event types", catalog, err)
	var want []string
	for _, et := range catalog.JSON200.Data {
		want = append(want, et.Type)
	}
	b.do(chromedp.Click(chromedp.ID("nav-event-types")), chromedp.WaitVisible(chromedp.ID("event-types")))
	shown, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("#event-types section.event-type")).map(function (s) { return s.dataset.type; })`))
	if err != nil || strings.Join(shown, " ") != strings.Join(want, " ") {
		t.Fatalf("the catalog page shows %v (%v), the API has %v", shown, err, want)
	}
	subscribed := func(typ string) string {
		s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('section[data-type=%q] .subscribed').textContent`, typ)))
		if err != nil {
			t.Fatalf("subscriptions of %s: %v", typ, err)
		}
		return s
	}
	if got := subscribed("customer.created"); !strings.Contains(got, eid) || !strings.Contains(got, full) {
		t.Fatalf("customer.created reaches %q", got)
	}
	if got := subscribed("balance.credited"); !strings.Contains(got, eid) || strings.Contains(got, full) {
		t.Fatalf("balance.credited reaches %q", got)
	}
	schema, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('section[data-type="customer.created"] pre.schema').textContent`))
	if err != nil || !strings.Contains(schema, `"properties"`) {
		t.Fatalf("the schema of customer.created: %q (%v)", schema, err)
	}
	b.do(chromedp.Click(chromedp.CSS(`section[data-type="customer.created"] summary`)))
	b.shot("event-types")
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
	b.shot("other-partner-404")
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
	b.shot("operator-partners")
	b.waitForReload("the failing endpoint", "/console/operator/failing",
		`document.getElementById("failing") !== null && document.getElementById("failing").textContent.indexOf("`+failing.JSON201.ID+`") >= 0`)
	if got := b.text("failing"); !strings.Contains(got, gone.JSON201.ID) || !strings.Contains(got, "410 Gone") || strings.Contains(got, eid) {
		t.Fatalf("failing endpoints: %q", got)
	}
	b.shot("operator-failing")
	b.confirmAll()
	b.do(chromedp.Click(chromedp.CSS("#failing form button")), chromedp.WaitVisible(chromedp.ID("enable")))
	if got := b.text("endpoint-id"); got != failing.JSON201.ID || b.text("endpoint-status") != "disabled" {
		t.Fatalf("the operator disabled %s, now %s", got, b.text("endpoint-status"))
	}
	b.waitForReload("the dead letter", "/console/operator/dead-letters", `document.getElementById("dead-letters") !== null`)
	if got := b.text("dead-letters"); !strings.Contains(got, "unknown_type") || !strings.Contains(got, "invoice.paid") {
		t.Fatalf("dead letters: %q", got)
	}
	b.shot("operator-dead-letters")
	b.open("/console/partners/globex/endpoints")
	b.do(chromedp.WaitVisible(chromedp.ID("endpoints")))
	b.shot("operator-partner-endpoints")
	// The rest of what the operator opens: the catalog alone and a partner's, a partner's
	// endpoint and its form.
	for _, p := range []string{"/console/partners/acme/event-types", "/console/partners/acme/endpoints/" + full,
		"/console/partners/acme/endpoints/" + full + "/edit", "/console/partners/acme/endpoints/new", deliveryPath} {
		b.open(p)
	}
	b.open("/console/event-types")
	b.shot("operator-event-types")
	b.signOut()
	b.checkText() // the sign-in page
	if b.pages < 40 {
		t.Fatalf("only %d pages were checked for internal references", b.pages)
	}
	b.shots.check(t)
}
