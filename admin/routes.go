package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"runtime/debug"
	"time"

	"github.com/hookstream/hookstream/outbox"
)

// handlerFunc serves one route for an authenticated caller. It returns an *apiError for
// answers the client caused, any other error for faults of ours (logged, 5xx).
type handlerFunc func(w http.ResponseWriter, r *http.Request, c caller) error

// route is one entry of the API. The table below is the only way routes reach the mux, and the
// OpenAPI test compares it, and the mux itself, with openapi.json.
type route struct {
	method string
	path   string
	access access
	handle handlerFunc
}

func (rt route) pattern() string { return rt.method + " " + rt.path }

func (a *API) routeTable() []route {
	const (
		partner  = "/v1/partners/{pid}"
		endpoint = partner + "/endpoints/{eid}"
	)
	return append([]route{
		{"GET", "/v1/openapi.json", public, a.serveOpenAPI},
		{"GET", "/v1/event-types", anyCaller, a.listEventTypes},
		{"GET", "/v1/limits", anyCaller, a.getLimits},

		{"POST", "/v1/partners", operator, a.createPartner},
		{"GET", "/v1/partners", operator, a.listPartners},
		{"GET", partner, partnerOwn, a.getPartner},
		{"POST", partner + "/api-keys", operator, a.createAPIKey},
		{"GET", partner + "/api-keys", operator, a.listAPIKeys},
		{"GET", partner + "/api-keys/{kid}", operator, a.getAPIKey},
		{"DELETE", partner + "/api-keys/{kid}", operator, a.revokeAPIKey},
		{"GET", "/v1/outbox/dead-letters", operator, a.listOutboxDeadLetters},

		{"POST", partner + "/endpoints", partnerOwn, a.createEndpoint},
		{"GET", partner + "/endpoints", partnerOwn, a.listEndpoints},
		{"GET", endpoint, partnerOwn, a.getEndpoint},
		{"PATCH", endpoint, partnerOwn, a.patchEndpoint},
		{"DELETE", endpoint, partnerOwn, a.deleteEndpoint},
		{"POST", endpoint + "/disable", partnerOwn, a.disableEndpoint},
		{"POST", endpoint + "/enable", partnerOwn, a.enableEndpoint},
		{"POST", endpoint + "/secret/rotate", partnerOwn, a.rotateSecret},
		{"POST", endpoint + "/secret/end-rotation", partnerOwn, a.endRotation},
		{"GET", endpoint + "/secret/keys", partnerOwn, a.getSigningKeys},
		{"GET", partner + "/public-keys", partnerOwn, a.listPublicKeys},
		{"POST", endpoint + "/test", partnerOwn, a.sendTestEvent},
		{"GET", endpoint + "/deliveries", partnerOwn, a.listDeliveries},
		{"POST", endpoint + "/replay", partnerOwn, a.createReplayJob},

		{"GET", partner + "/deliveries/{did}", partnerOwn, a.getDelivery},
		{"POST", partner + "/deliveries/{did}/replay", partnerOwn, a.replayDelivery},
		{"GET", partner + "/replay-jobs/{jid}", partnerOwn, a.getReplayJob},
		{"GET", partner + "/deliveries", partnerOwn, a.searchDeliveries},
		{"GET", partner + "/replay-jobs", partnerOwn, a.listReplayJobs},
		{"POST", partner + "/replay-jobs/{jid}/cancel", partnerOwn, a.cancelReplayJob},

		{"GET", partner + "/events", partnerOwn, a.listEvents},
		{"GET", partner + "/events/stream", partnerOwn, a.streamEvents},
		{"GET", partner + "/events/{event_id}", partnerOwn, a.getEvent},
	}, a.operatorRoutes()...)
}

func (a *API) buildRouter() {
	a.routes = a.routeTable()
	a.rated = a.rateQuotas()
	a.mux = http.NewServeMux()
	for _, rt := range a.routes {
		a.mux.Handle(rt.pattern(), a.wrap(rt))
	}
	a.handler = http.HandlerFunc(a.serve)
}

// serve bounds the body and dispatches; requests no route matches get the JSON error shape
// too, with the mux's status (404, or 405 and its Allow header).
func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	rid := newID(requestIDPrefix)
	w.Header().Set(RequestIDHeader, rid)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, rid))
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	h, pattern := a.mux.Handler(r)
	if pattern != "" {
		a.mux.ServeHTTP(w, r)
		return
	}
	probe := &headerRecorder{header: http.Header{}}
	h.ServeHTTP(probe, r)
	switch probe.status {
	case http.StatusNotFound:
		writeError(w, errorf(http.StatusNotFound, CodeNotFound, "no such route: %s %s", r.Method, r.URL.Path))
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", probe.header.Get("Allow"))
		writeError(w, errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "%s is not allowed here; allowed: %s", r.Method, probe.header.Get("Allow")))
	default:
		h.ServeHTTP(w, r) // a redirect to the clean path
	}
	a.metrics.requests.WithLabelValues("unmatched", codeClass(probe.status)).Inc()
}

// requestIDKey holds the request id in a request's context, for the log lines of faults.
type requestIDKey struct{}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// headerRecorder captures the status and headers of the mux's own answers.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header         { return h.header }
func (h *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (h *headerRecorder) WriteHeader(status int)      { h.status = status }

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection's Flush (the event stream).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// wrap adds what every route shares: authentication and authorization, error answers, panic
// recovery, metrics by route pattern and a log line per request (never bodies or tokens).
func (a *API) wrap(rt route) http.Handler {
	pattern := rt.pattern()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				a.log.Error("panic serving request", "route", pattern, "request_id", w.Header().Get(RequestIDHeader),
					"panic", p, "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeError(sw, errorf(http.StatusInternalServerError, CodeInternal, "internal error"))
				}
			}
			if sw.status == 0 {
				sw.status = http.StatusOK
			}
			a.metrics.requests.WithLabelValues(pattern, codeClass(sw.status)).Inc()
			a.metrics.latency.WithLabelValues(pattern).Observe(time.Since(began).Seconds())
			a.log.Debug("request", "route", pattern, "status", sw.status, "duration", time.Since(began),
				"request_id", w.Header().Get(RequestIDHeader))
		}()
		if err := a.serveRoute(sw, r, rt); err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				ae = a.fault(r.Context(), pattern, err)
			}
			a.tellOperatorOfQuota(r, pattern, ae)
			writeError(sw, ae)
		}
	})
}

func (a *API) serveRoute(w http.ResponseWriter, r *http.Request, rt route) error {
	var c caller
	if rt.access != public {
		var e *apiError
		if c, e = a.authenticate(r.Context(), r); e != nil {
			return e
		}
		if e := a.authorize(r.Context(), c, rt.access, r.PathValue("pid")); e != nil {
			return e
		}
	}
	if l := a.rated[rt.pattern()]; l != nil {
		// Before anything can refuse the request, so every answer states the quota.
		pid := r.PathValue("pid")
		if rt.access == operator {
			pid = outbox.OperatorPartnerID // the operator's own routes (operator.go)
		}
		rateHeaders(w.Header(), l, pid)
	}
	// r.URL.Query drops what it cannot decode: ?after=%ZZ would read as no cursor at all.
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		return invalid("the query string is not valid URL encoding (%v)", err)
	}
	if keys, ok := r.Header[IdempotencyKeyHeader]; ok && r.Method == http.MethodPost && rt.access != public {
		return a.idempotent(w, r, c, keys[0], func(w http.ResponseWriter, r *http.Request) error { return rt.handle(w, r, c) })
	}
	return rt.handle(w, r, c)
}
