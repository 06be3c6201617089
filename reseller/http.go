package reseller

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookstream/hookstream/partnerkeys"
)

// maxRequestBytes bounds a request body.
const maxRequestBytes = 64 << 10

// Page limits of the lists and the export.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
)

// Handler serves the platform's HTTP API (docs/reseller.md). Every route but
// /healthz takes a partner API key of hookstream's admin API as its bearer token and acts for
// that key's partner only: another partner's resources are not found.
func (p *Platform) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	route := func(pattern string, status int, fn func(r *http.Request, pid string) (any, error)) {
		mux.Handle(pattern, p.partnerRoute(status, fn))
	}
	route("GET /v1/customers", 200, func(r *http.Request, pid string) (any, error) {
		limit, err := pageLimit(r)
		if err != nil {
			return nil, err
		}
		cs, err := p.Customers(r.Context(), pid, r.URL.Query().Get("cursor"), limit+1)
		if err != nil {
			return nil, err
		}
		page := listPage[Customer]{Data: cs}
		if len(cs) > limit {
			page = listPage[Customer]{Data: cs[:limit], HasMore: true, NextCursor: cs[limit-1].ID}
		}
		return page.nonNil(), nil
	})
	route("POST /v1/customers", 201, func(r *http.Request, pid string) (any, error) {
		var in NewCustomer
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		return p.CreateCustomer(r.Context(), pid, in)
	})
	route("GET /v1/customers/{cid}", 200, byPath("cid", p.Customer))
	route("PATCH /v1/customers/{cid}", 200, withBody("cid", p.UpdateCustomer))
	route("DELETE /v1/customers/{cid}", 200, byPath("cid", p.DeleteCustomer))
	route("GET /v1/customers/{cid}/api-keys", 200, func(r *http.Request, pid string) (any, error) {
		ks, err := p.APIKeys(r.Context(), pid, r.PathValue("cid"))
		return listPage[APIKey]{Data: ks}.nonNil(), err
	})
	route("POST /v1/customers/{cid}/api-keys", 201, func(r *http.Request, pid string) (any, error) {
		var in struct {
			Name string `json:"name"`
		}
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		return p.CreateAPIKey(r.Context(), pid, r.PathValue("cid"), in.Name)
	})
	route("GET /v1/api-keys/{kid}", 200, byPath("kid", p.APIKey))
	route("POST /v1/api-keys/{kid}/status", 200, withBody("kid", p.SetAPIKeyStatus))
	route("GET /v1/customers/{cid}/balance", 200, byPath("cid", p.Balance))
	route("POST /v1/customers/{cid}/credits", 201, withBody("cid", p.CreditBalance))
	route("POST /v1/customers/{cid}/adjustments", 201, withBody("cid", p.AdjustBalance))
	route("GET /v1/customers/{cid}/budgets", 200, func(r *http.Request, pid string) (any, error) {
		bs, err := p.Budgets(r.Context(), pid, r.PathValue("cid"))
		return listPage[Budget]{Data: bs}.nonNil(), err
	})
	route("POST /v1/customers/{cid}/budgets", 201, withBody("cid", p.CreateBudget))
	route("GET /v1/budgets/{bid}", 200, byPath("bid", p.Budget))
	route("POST /v1/customers/{cid}/usage", 201, withBody("cid", p.RecordUsage))
	mux.Handle("GET /v1/export", p.partnerRoute(200, nil)) // served by serveExport
	return mux
}

// byPath adapts a platform method on the resource the path value name identifies.
func byPath[R any](name string, fn func(ctx context.Context, pid, id string) (R, error)) func(*http.Request, string) (any, error) {
	return func(r *http.Request, pid string) (any, error) {
		return fn(r.Context(), pid, r.PathValue(name))
	}
}

// withBody adapts a platform method that changes the resource the path value name identifies
// as the request body, decoded, says.
func withBody[T, R any](name string, fn func(ctx context.Context, pid, id string, in T) (R, error)) func(*http.Request, string) (any, error) {
	return func(r *http.Request, pid string) (any, error) {
		var in T
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		return fn(r.Context(), pid, r.PathValue(name), in)
	}
}

type listPage[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor"`
	HasMore    bool   `json:"has_more"`
}

func (l listPage[T]) nonNil() listPage[T] {
	if l.Data == nil {
		l.Data = []T{}
	}
	return l
}

// partnerRoute authenticates the partner key, runs fn (or the export when fn is nil) and writes
// its result, or the error as {"error":{"code","message"}}.
func (p *Platform) partnerRoute(status int, fn func(r *http.Request, pid string) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
		pid, err := p.authenticate(r)
		if err == nil {
			if fn == nil {
				err = p.serveExport(w, r, pid)
				if err == nil {
					return
				}
			} else {
				var v any
				if v, err = fn(r, pid); err == nil {
					respond(w, status, v)
					return
				}
			}
		}
		e, ok := AsError(err)
		if !ok {
			p.log.Error("reseller request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			e = refuse(http.StatusInternalServerError, CodeInternal, "internal error; it was logged")
		}
		respond(w, e.Status, map[string]any{"error": e})
	})
}

func (p *Platform) authenticate(r *http.Request) (string, error) {
	unauthorized := refuse(http.StatusUnauthorized, CodeUnauthorized, "a partner API key of hookstream's admin API is required (Authorization: Bearer hsk_…)")
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", unauthorized
	}
	k, err := partnerkeys.Verify(r.Context(), p.pool, p.log, strings.TrimSpace(token))
	if errors.Is(err, partnerkeys.ErrUnknown) {
		return "", unauthorized
	}
	if err != nil {
		return "", err
	}
	return k.PartnerID, nil
}

func respond(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// decode reads a JSON object body into v, refusing unknown fields, with a message that says
// what was wrong.
func decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return refuse(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "request body must be application/json (curl: -H 'Content-Type: application/json')")
		}
	}
	body, err := io.ReadAll(r.Body)
	if maxErr, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return refuse(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body over %d bytes", maxErr.Limit)
	}
	if err != nil {
		return refuse(http.StatusBadRequest, CodeInvalidRequest, "reading the body: %v", err)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return refuse(http.StatusBadRequest, CodeInvalidRequest, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return refuse(http.StatusBadRequest, CodeInvalidRequest, "%s: wrong type (amounts are decimal strings like \"12.50\", times RFC 3339)", te.Field)
		case errors.Is(err, ErrDecimal):
			return refuse(http.StatusBadRequest, CodeInvalidRequest, "%v", err)
		}
		return refuse(http.StatusBadRequest, CodeInvalidRequest, "malformed JSON body: %s", cut(err.Error()))
	}
	if dec.More() {
		return refuse(http.StatusBadRequest, CodeInvalidRequest, "request body must hold one JSON object")
	}
	return nil
}

func pageLimit(r *http.Request) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return DefaultPageLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxPageLimit {
		return 0, refuse(http.StatusBadRequest, CodeInvalidRequest, "limit: an integer from 1 to %d", MaxPageLimit)
	}
	return n, nil
}

// serveExport serves GET /v1/export?from=&to=&format=json|csv&limit=&cursor=. JSON is an
// ExportPage; CSV is a header line (ExportColumns) and one line per item, with the next cursor in
// the Export-Next-Cursor header (empty on the last page), the same for both formats.
func (p *Platform) serveExport(w http.ResponseWriter, r *http.Request, pid string) error {
	q := r.URL.Query()
	limit, err := pageLimit(r)
	if err != nil {
		return err
	}
	format := q.Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "csv" {
		return refuse(http.StatusBadRequest, CodeInvalidRequest, "format: json or csv")
	}
	var from, to time.Time
	if q.Get("cursor") == "" {
		for name, at := range map[string]*time.Time{"from": &from, "to": &to} {
			t, err := time.Parse(time.RFC3339Nano, q.Get(name))
			if err != nil {
				return refuse(http.StatusBadRequest, CodeInvalidRequest, "%s: an RFC 3339 time like 2026-03-01T00:00:00Z", name)
			}
			*at = t
		}
	}
	page, err := p.Export(r.Context(), pid, from, to, q.Get("cursor"), limit)
	if err != nil {
		return err
	}
	w.Header().Set("Export-Next-Cursor", page.NextCursor)
	if format == "json" {
		respond(w, http.StatusOK, page)
		return nil
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	cw := csv.NewWriter(w)
	_ = cw.Write(ExportColumns)
	for _, it := range page.Data {
		_ = cw.Write(it.Record())
	}
	cw.Flush()
	return nil
}

// Serve runs the API on addr until ctx ends.
func (p *Platform) Serve(ctx context.Context, addr string) error {
	srv := &http.Server{Addr: addr, Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return fmt.Errorf("reseller: serve %s: %w (HOOKSTREAM_RESELLER_ADDR picks another address)", addr, err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}
