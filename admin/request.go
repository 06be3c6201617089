package admin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

var errTrailingData = errors.New("trailing data after the JSON object")

// decodeBody reads the request body as one JSON object into v, refusing unknown fields. An
// empty body is refused when required and leaves v as it is otherwise (routes whose body is
// optional, like rotate or enable).
func decodeBody(r *http.Request, v any, required bool) *apiError {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errorf(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "request body must be application/json")
		}
	}
	body, err := io.ReadAll(r.Body) // bounded by the MaxBytesReader every request gets
	if err != nil {
		return decodeError(err)
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		if required {
			return invalid("request body is required: a JSON object")
		}
		return nil
	}
	if trimmed[0] != '{' {
		return invalid("request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return decodeError(errTrailingData)
	}
	return nil
}

// endpointRequest reads a request about one endpoint: its partner and endpoint ids from the
// path and its body into req (decodeBody). An endpoint id of the wrong form is not found, before
// the body is read.
func endpointRequest(r *http.Request, req any, required bool) (pid, eid string, e *apiError) {
	pid, eid = r.PathValue("pid"), r.PathValue("eid")
	if !validID(endpointIDPrefix, eid) {
		return "", "", notFound("endpoint")
	}
	return pid, eid, decodeBody(r, req, required)
}

// noBody checks the optional body of a request that takes no fields: empty or {}.
func noBody(r *http.Request) *apiError {
	var req struct{}
	return decodeBody(r, &req, false)
}

// problems collects validation failures so a client learns of all of them at once: every
// field's checks run, the egress policy's of the URLs included.
type problems []fieldError

func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, fieldError{Field: field, Code: CodeValidation, Detail: fmt.Sprintf(format, args...)})
}

// refuse adds field's refusal by the egress policy's rule.
func (p *problems) refuse(field, rule, format string, args ...any) {
	*p = append(*p, fieldError{Field: field, Code: CodeURLRefused, Detail: fmt.Sprintf(format, args...), Rule: rule})
}

// has says whether field already failed.
func (p problems) has(field string) bool {
	for _, f := range p {
		if f.Field == field {
			return true
		}
	}
	return false
}

// err is the 422 of the collected failures: the message lists them all ("url: is required;
// …"), and the problem names each field in errors, the first in field. Its code is
// url_refused, with the rule, when the egress policy's refusals are all there is, and
// validation_failed otherwise.
func (p problems) err() *apiError {
	if len(p) == 0 {
		return nil
	}
	msgs := make([]string, len(p))
	code := CodeURLRefused
	for i, f := range p {
		msgs[i] = f.Field + ": " + f.Detail
		if f.Code != CodeURLRefused {
			code = CodeValidation
		}
	}
	e := errorf(http.StatusUnprocessableEntity, code, "%s", strings.Join(msgs, "; "))
	e.Errors, e.Field = p, p[0].Field
	if code == CodeURLRefused {
		e.Rule = p[0].Rule
	}
	return e
}

// text checks a free-text field: valid UTF-8 (encoding/json already replaced invalid bytes),
// no NUL (PostgreSQL text cannot hold it) and at most maxBytes.
func (p *problems) text(field, value string, maxBytes int, required bool) {
	switch {
	case required && strings.TrimSpace(value) == "":
		p.add(field, "is required")
	case len(value) > maxBytes:
		p.add(field, "is longer than %d bytes", maxBytes)
	case !utf8.ValidString(value) || strings.IndexByte(value, 0) >= 0:
		p.add(field, "must be text without NUL characters")
	}
}

// Cursors are opaque to clients: base64url of a small JSON document naming the list it belongs
// to, so a cursor of one list is refused by another.
type cursorDoc struct {
	Kind string          `json:"k"`
	V    json.RawMessage `json:"v"`
}

const maxCursorLength = 512

func encodeCursor(kind string, v any) string {
	inner, _ := json.Marshal(v) // cursor values are plain structs
	doc, _ := json.Marshal(cursorDoc{Kind: kind, V: inner})
	return base64.RawURLEncoding.EncodeToString(doc)
}

// queryCursor decodes the cursor of q, when it has one, into after: a cursor of another list,
// or at a position valid refuses, is a bad cursor.
func queryCursor(q url.Values, kind string, after any, valid func() bool) *apiError {
	s := q.Get("cursor")
	if s == "" {
		return nil
	}
	if e := decodeCursor(s, kind, after); e != nil {
		return e
	}
	if !valid() {
		return badCursor()
	}
	return nil
}

// pageQuery reads the paging parameters of a list: ?limit= (pageLimit) and ?cursor=
// (queryCursor, of kind, into after, checked by valid).
func pageQuery(q url.Values, kind string, after any, valid func() bool) (limit int, e *apiError) {
	if limit, e = pageLimit(q); e != nil {
		return 0, e
	}
	return limit, queryCursor(q, kind, after, valid)
}

func badCursor() *apiError {
	return errorf(http.StatusBadRequest, CodeInvalidCursor, "cursor is not a cursor of this list; pass next_cursor back as it was returned")
}

func decodeCursor(s, kind string, v any) *apiError {
	bad := badCursor()
	if len(s) > maxCursorLength {
		return bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return bad
	}
	var doc cursorDoc
	if json.Unmarshal(raw, &doc) != nil || doc.Kind != kind {
		return bad
	}
	if json.Unmarshal(doc.V, v) != nil {
		return bad
	}
	return nil
}

// pageLimit reads ?limit= (default DefaultPageLimit, at most MaxPageLimit).
func pageLimit(q url.Values) (int, *apiError) {
	s := q.Get("limit")
	if s == "" {
		return DefaultPageLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxPageLimit {
		return 0, invalidField("limit", "limit must be an integer from 1 to %d", MaxPageLimit)
	}
	return n, nil
}

// queryTime reads an RFC 3339 time parameter; absent gives the zero time.
func queryTime(q url.Values, name string) (time.Time, *apiError) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := parseTime(s)
	if err != nil {
		return time.Time{}, invalidField(name, "%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z", name)
	}
	return t, nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	if t.Year() < 1 || t.Year() > 9999 { // PostgreSQL has no year 0
		return time.Time{}, errors.New("out of range")
	}
	return t.UTC(), nil
}

// list is the shape of every paged list: {"data":[…],"next_cursor":"…"}. next_cursor is empty
// when there is no further page (the event feed always returns one).
type list[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor"`
	HasMore    bool   `json:"has_more"`
}

// page makes the list of a page from the limit+1 items its query asked for: an item beyond limit
// means there is a further page, whose cursor next makes from the page's last item.
func page[T any](items []T, limit int, next func(last T) string) list[T] {
	out := list[T]{Data: items}
	if len(items) > limit {
		out.Data, out.HasMore = items[:limit], true
		out.NextCursor = next(items[limit-1])
	}
	return out
}

// queryPage runs a list query asking for limit+1 rows, scans them and makes the page of them
// (page).
func queryPage[T any](ctx context.Context, q querier, limit int, scan func(pgx.Row) (T, error),
	next func(last T) string, sql string, args ...any) (list[T], error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return list[T]{}, err
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) { return scan(row) })
	if err != nil {
		return list[T]{}, err
	}
	return page(items, limit, next), nil
}

// optional is a field of a PATCH body, told apart in its three forms: absent (Set false), null
// (Set and Null) and a value. It must be held by value, not by pointer: encoding/json sets a nil
// pointer for null without asking the field, and null would read as absent. The value is
// decoded as strictly as request bodies are (unknown fields refused): the body's decoder does
// not pass that on to a field that decodes itself.
type optional[T any] struct {
	Set, Null bool
	Value     T
}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(bytes.TrimSpace(b)) == "null" {
		o.Null = true
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(&o.Value)
}
