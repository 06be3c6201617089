package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/adminclient"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Prefix is where the console is served; mount Handler there: mux.Handle(console.Prefix, c.Handler()).
const Prefix = "/console/"

// ContentSecurityPolicy is sent with every answer of the console: scripts, styles and fetches
// from the console's own origin only, nothing inline, no frames, forms posting only back here.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Config configures the console. API is required; the rest have defaults (DefaultConfig).
type Config struct {
	// API is the admin API's handler (admin.API.Handler): every page is made of its answers.
	API http.Handler
	// SessionTTL is how long a sign-in lasts (absolute, not extended by use).
	SessionTTL time.Duration
	// MaxSessions bounds the session store; when it is full, the credential holding the most
	// sessions gives up its oldest.
	MaxSessions int
	// MaxSessionsPerCredential bounds the sessions of one credential (a partner key, the operator
	// token): its next sign-in ends its own oldest session, never another credential's.
	MaxSessionsPerCredential int
	// UserAgent is the User-Agent the sender sends (its build's), shown on an attempt's evidence.
	UserAgent  string
	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: metrics are not registered
}

// DefaultConfig returns the defaults: 12-hour sessions, at most 10,000 at once and 20 per
// credential.
func DefaultConfig() Config {
	return Config{SessionTTL: 12 * time.Hour, MaxSessions: 10000, MaxSessionsPerCredential: 20, UserAgent: "hookstream/dev",
		Logger: slog.Default()}
}

// Validate reports what is wrong with c.
func (c Config) Validate() error {
	var errs []error
	if c.API == nil {
		errs = append(errs, errors.New("console: no admin API handler"))
	}
	if c.SessionTTL <= 0 {
		errs = append(errs, fmt.Errorf("console: session ttl %s must be positive", c.SessionTTL))
	}
	if c.MaxSessions < 1 {
		errs = append(errs, fmt.Errorf("console: max sessions %d must be at least 1", c.MaxSessions))
	}
	if c.MaxSessionsPerCredential < 1 {
		errs = append(errs, fmt.Errorf("console: max sessions per credential %d must be at least 1", c.MaxSessionsPerCredential))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("console: no logger"))
	}
	return errors.Join(errs...)
}

// Console is the web console. Build it with New and serve Handler under Prefix.
type Console struct {
	cfg      Config
	log      *slog.Logger
	sessions *sessions
	apiHTTP  *http.Client
	pages    map[string]*template.Template
	metrics  *consoleMetrics
	handler  http.Handler
	now      func() time.Time
}

// apiBase is the base URL of the in-process API calls; the host is never resolved.
const apiBase = "http://admin-api.internal"

// New builds the console over cfg.API.
func New(cfg Config) (*Console, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sessions := newSessions(cfg.MaxSessions, cfg.MaxSessionsPerCredential, cfg.SessionTTL)
	m, err := newMetrics(cfg.Registerer, sessions.len)
	if err != nil {
		return nil, err
	}
	c := &Console{
		cfg:      cfg,
		log:      cfg.Logger.With("component", "console"),
		sessions: sessions,
		apiHTTP:  &http.Client{Transport: handlerTransport{api: cfg.API}},
		metrics:  m,
		now:      time.Now,
	}
	if c.pages, err = parsePages(); err != nil {
		return nil, err
	}
	c.handler = c.routes()
	return c, nil
}

// Handler serves every /console route.
func (c *Console) Handler() http.Handler { return c.handler }

func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	files := http.StripPrefix("/console/static/", http.FileServerFS(static))
	mux.Handle("GET /console/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /console/sign-in", c.signInPage)
	mux.HandleFunc("POST /console/sign-in", c.signIn)

	const (
		partner  = "/console/partners/{pid}"
		endpoint = partner + "/endpoints/{eid}"
		delivery = partner + "/deliveries/{did}"
	)
	pages := map[string]pageFunc{
		"GET /console/{$}":                               c.home,
		"POST /console/sign-out":                         c.signOut,
		"GET /console/event-types":                       c.eventTypes,
		"GET " + partner + "/event-types":                c.partnerEventTypes,
		"GET " + partner + "/endpoints":                  c.endpoints,
		"GET " + partner + "/endpoints/new":              c.newEndpointPage,
		"POST " + partner + "/endpoints":                 c.createEndpoint,
		"GET " + endpoint:                                c.endpoint,
		"GET " + endpoint + "/edit":                      c.editEndpointPage,
		"POST " + endpoint + "/edit":                     c.editEndpoint,
		"POST " + endpoint + "/disable":                  c.disableEndpoint,
		"POST " + endpoint + "/enable":                   c.enableEndpoint,
		"POST " + endpoint + "/rotate":                   c.rotateSecret,
		"POST " + endpoint + "/end-rotation":             c.endRotation,
		"POST " + endpoint + "/test":                     c.sendTest,
		"POST " + endpoint + "/replay":                   c.replayRange,
		"GET " + delivery:                                c.delivery,
		"GET " + delivery + "/status":                    c.deliveryStatus,
		"GET " + delivery + "/attempts/{n}":              c.attempt,
		"POST " + delivery + "/replay":                   c.replayDelivery,
		"GET " + partner + "/replay-jobs/{jid}":          c.replayJob,
		"GET " + partner + "/replay-jobs/{jid}/progress": c.replayJobProgress,
		"GET /console/operator/partners":                 c.operatorPartners,
		"GET /console/operator/failing":                  c.operatorFailing,
		"GET /console/operator/dead-letters":             c.operatorDeadLetters,
	}
	for pattern, fn := range pages {
		mux.Handle(pattern, c.page(fn))
	}
	mux.Handle("/console/", c.page(func(w http.ResponseWriter, r *http.Request, ss *session) error {
		return &pageError{status: http.StatusNotFound, msg: "There is no such page in the console."}
	}))
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.metrics.refused.WithLabelValues("cross_origin").Inc()
		c.renderError(w, r, nil, &pageError{status: http.StatusForbidden, msg: "Cross-origin requests are refused."})
	}))
	secured := cop.Handler(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		secured.ServeHTTP(w, r)
	})
}

// pageFunc serves one page for a signed-in session. It returns a *pageError for answers the
// user caused or the API refused, any other error for faults (logged).
type pageFunc func(w http.ResponseWriter, r *http.Request, ss *session) error

// page adds what every signed-in page shares: the session (a GET without one is sent to the
// sign-in page, a POST refused), the CSRF check of every POST, no caching, and error pages.
func (c *Console) page(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		ss := c.session(r)
		if ss == nil {
			if r.Method == http.MethodGet && !wantsJSON(r) {
				http.Redirect(w, r, "/console/sign-in", http.StatusSeeOther)
				return
			}
			c.metrics.refused.WithLabelValues("no_session").Inc()
			c.renderError(w, r, nil, &pageError{status: http.StatusUnauthorized, msg: "Sign in first."})
			return
		}
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				c.renderError(w, r, ss, &pageError{status: http.StatusBadRequest, msg: "The form could not be read."})
				return
			}
			if !sameToken(r.PostForm.Get("csrf"), ss.csrf) {
				c.metrics.refused.WithLabelValues("csrf").Inc()
				c.renderError(w, r, ss, &pageError{status: http.StatusForbidden,
					msg: "This form has no valid CSRF token; nothing was changed. Reload the page and try again."})
				return
			}
		}
		err := fn(w, r, ss)
		if err == nil {
			return
		}
		var pe *pageError
		if !errors.As(err, &pe) {
			c.log.Error("console page failed", "path", r.URL.Path, "err", err)
			pe = &pageError{status: http.StatusInternalServerError, msg: "The console failed to build this page."}
		}
		if pe.status == http.StatusUnauthorized && ss != nil {
			// The API no longer accepts the credential (a revoked key): the session is over.
			c.sessions.delete(ss.id)
			http.SetCookie(w, cookie(sessionCookie, "", -1))
			if r.Method == http.MethodGet && !wantsJSON(r) {
				http.Redirect(w, r, "/console/sign-in", http.StatusSeeOther)
				return
			}
		}
		c.renderError(w, r, ss, pe)
	})
}

func wantsJSON(r *http.Request) bool {
	return strings.HasSuffix(r.URL.Path, "/progress") || strings.HasSuffix(r.URL.Path, "/status")
}

func (c *Console) session(r *http.Request) *session {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	return c.sessions.get(ck.Value)
}

// api is the admin API as the session's user.
func (c *Console) api(ss *session) *adminclient.ClientWithResponses {
	cl, err := adminclient.New(apiBase, ss.token, adminclient.WithHTTPClient(c.apiHTTP))
	if err != nil {
		panic("console: admin client: " + err.Error()) // only a malformed base URL fails, and apiBase is fixed
	}
	return cl
}

// pageError is an answer the user caused or the API gave: its status and a message for people.
type pageError struct {
	status int
	msg    string
	code   string                   // the API's error code, when it came from the API
	fields []adminclient.FieldError // the API's refusal per field, for a validation failure
}

func (e *pageError) Error() string { return fmt.Sprintf("%d: %s", e.status, e.msg) }

// check turns an API answer into nil (2xx), a *pageError carrying the API's own status and
// message (a refusal), or an error (the call was not made).
func check(res adminclient.Response, err error) error {
	err = adminclient.Check(res, err)
	var ae *adminclient.APIError
	if errors.As(err, &ae) {
		pe := &pageError{status: ae.Status, msg: ae.Problem.Detail, code: string(ae.Problem.Code)}
		if ae.Problem.Errors != nil {
			pe.fields = *ae.Problem.Errors
		}
		return pe
	}
	if err != nil {
		return fmt.Errorf("admin API call: %w", err)
	}
	return nil
}

// view is what every template gets.
type view struct {
	Title   string
	Session *sessionView
	CSRF    string
	Flash   *flash
	PID     string // the partner whose pages are open, for the navigation
	Page    any
}

type sessionView struct {
	Operator  bool
	PartnerID string
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, ss *session, status int, name, title string, page any) error {
	t, ok := c.pages[name]
	if !ok {
		return fmt.Errorf("console: no template %q", name)
	}
	v := view{Title: title, Page: page, PID: r.PathValue("pid")}
	if ss != nil {
		v.Session = &sessionView{Operator: ss.operator, PartnerID: ss.partnerID}
		v.CSRF = ss.csrf
		v.Flash = c.sessions.takeFlash(ss)
		if v.PID == "" && !ss.operator {
			v.PID = ss.partnerID
		}
	}
	var buf strings.Builder
	if err := t.ExecuteTemplate(&buf, "base", v); err != nil {
		return fmt.Errorf("console: render %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(buf.String()))
	return nil
}

func (c *Console) renderError(w http.ResponseWriter, r *http.Request, ss *session, pe *pageError) {
	w.Header().Set("Cache-Control", "no-store")
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(pe.status)
		fmt.Fprintf(w, "{\"error\":%q}\n", pe.msg)
		return
	}
	title := http.StatusText(pe.status)
	page := struct {
		Status int
		Msg    string
	}{pe.status, pe.msg}
	if err := c.render(w, r, ss, pe.status, "error.html", title, page); err != nil {
		c.log.Error("console error page failed", "err", err)
		http.Error(w, pe.msg, pe.status)
	}
}

// redirect answers a POST with a redirect to path (Post/Redirect/Get), optionally with a notice.
func (c *Console) redirect(w http.ResponseWriter, r *http.Request, ss *session, path string, f *flash) error {
	if f != nil {
		c.sessions.setFlash(ss, *f)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
	return nil
}

// pathOf builds a console path from segments, escaping each.
func pathOf(segments ...string) string {
	var b strings.Builder
	b.WriteString("/console")
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}
