package admin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/internal/eventtype"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
)

// Limits of endpoint fields; the integer bounds are the endpoint table's CHECK constraints.
const (
	maxURLBytes         = 2048
	maxDescriptionBytes = 1024
	maxEventTypes       = 100
	maxReasonBytes      = 500
	maxRateLimitPerSec  = 10000
	defaultMaxInFlight  = 64 // the ceiling of the sender's adaptive concurrency (design.md section 7)
	maxMaxInFlight      = 1000
)

// schemaVersions are the schema versions an endpoint may be pinned to (R14): the event
// catalog's, 1 through its newest; an endpoint receives each type in its newest version at or
// below the pin (eventcatalog.PinnedVersion).
var schemaVersions = eventcatalog.PinVersions()

// endpointView is an endpoint as the API shows it: configuration and secret metadata, never a
// secret.
type endpointView struct {
	ID              string   `json:"id"`
	PartnerID       string   `json:"partner_id"`
	URL             string   `json:"url"`
	Description     string   `json:"description"`
	Status          string   `json:"status"`
	EventTypes      []string `json:"event_types"`
	SchemaVersion   int      `json:"schema_version"`
	MaxInFlight     int      `json:"max_in_flight"`
	RateLimitPerSec *float64 `json:"rate_limit_per_sec"`
	Ordered         bool     `json:"ordered"`
	// Ordering is none, bounded or strict (ordering.go); ordered is true for the last two.
	Ordering       string       `json:"ordering"`
	FailingSince   *timestamp   `json:"failing_since"`
	DisabledReason *string      `json:"disabled_reason"`
	Version        int64        `json:"version"`
	CreatedAt      timestamp    `json:"created_at"`
	UpdatedAt      timestamp    `json:"updated_at"`
	Secrets        []secretInfo `json:"secrets"`
	// SignatureScheme is v1 (HMAC) or v1a (ed25519): the scheme of the keys it gets (signing.go).
	SignatureScheme string `json:"signature_scheme"`
	endpointPolicies
	requestOptionsView
	// Health: the circuit, the next probe, the last success and failing_since (health.go).
	Health endpointHealth `json:"health"`
}

// secretInfo describes a signing secret without its value (R16); a v1a key shows its public key.
type secretInfo struct {
	ID        string     `json:"id"`
	CreatedAt timestamp  `json:"created_at"`
	ExpiresAt *timestamp `json:"expires_at"`
	PublicKey *string    `json:"public_key"`
}

// createdEndpoint is the creation response, the one place the first v1 secret appears; a v1a
// endpoint's public key is in its secrets, its signing key never shown.
type createdEndpoint struct {
	endpointView
	Secret string `json:"secret,omitempty"`
}

const endpointColumns = `id, partner_id, url, description, status, event_types, schema_version, max_in_flight,
	rate_limit_per_sec, ordered, failing_since, disabled_reason, version, created_at, updated_at, filter, retry_policy, request_options,
	strict_order, signature_scheme`

func scanEndpoint(row pgx.Row) (endpointView, error) {
	var (
		v              endpointView
		schema, flight int32
		opts           records.RequestOptions
		strict         bool
	)
	err := row.Scan(&v.ID, &v.PartnerID, &v.URL, &v.Description, &v.Status, &v.EventTypes, &schema, &flight,
		&v.RateLimitPerSec, &v.Ordered, &v.FailingSince, &v.DisabledReason, &v.Version, &v.CreatedAt, &v.UpdatedAt, &v.Filter, &v.RetryPolicy, &opts, &strict,
		&v.SignatureScheme)
	v.Ordering = orderingOf(v.Ordered, strict)
	v.SchemaVersion, v.MaxInFlight = int(schema), int(flight)
	v.requestOptionsView = viewRequestOptions(opts)
	if v.EventTypes == nil {
		v.EventTypes = []string{}
	}
	v.Secrets = []secretInfo{}
	return v, err
}

// querier is what reads need: the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// loadEndpoint reads one endpoint of a partner with its secret metadata; a malformed id or
// another partner's endpoint is not found.
func loadEndpoint(ctx context.Context, q querier, pid, eid string, lock bool) (endpointView, error) {
	if !validID(endpointIDPrefix, eid) {
		return endpointView{}, notFound("endpoint")
	}
	sql := `SELECT ` + endpointColumns + ` FROM endpoint WHERE id = $1 AND partner_id = $2`
	if lock {
		sql += ` FOR UPDATE`
	}
	v, err := scanEndpoint(q.QueryRow(ctx, sql, eid, pid))
	if errors.Is(err, pgx.ErrNoRows) {
		return v, notFound("endpoint")
	}
	if err != nil {
		return v, err
	}
	all := []*endpointView{&v}
	return v, attachSecrets(ctx, q, all)
}

func attachSecrets(ctx context.Context, q querier, eps []*endpointView) error {
	if len(eps) == 0 {
		return nil
	}
	byID := map[string]*endpointView{}
	ids := make([]string, 0, len(eps))
	for _, e := range eps {
		byID[e.ID] = e
		ids = append(ids, e.ID)
	}
	rows, err := q.Query(ctx, `SELECT endpoint_id, id, created_at, expires_at, public_key FROM endpoint_secret
		WHERE endpoint_id = ANY($1) ORDER BY created_at, id`, ids)
	if err != nil {
		return err
	}
	var (
		eid string
		s   secretInfo
	)
	_, err = pgx.ForEachRow(rows, []any{&eid, &s.ID, &s.CreatedAt, &s.ExpiresAt, &s.PublicKey}, func() error {
		if e := byID[eid]; e != nil {
			e.Secrets = append(e.Secrets, s)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return attachHealth(ctx, q, eps) // every read of an endpoint shows its health too
}

type createEndpointRequest struct {
	URL             string   `json:"url"`
	Description     string   `json:"description"`
	EventTypes      []string `json:"event_types"`
	SchemaVersion   *int     `json:"schema_version"`
	MaxInFlight     *int     `json:"max_in_flight"`
	RateLimitPerSec *float64 `json:"rate_limit_per_sec"`
	Ordered         *bool    `json:"ordered"`
	Ordering        *string  `json:"ordering"`
	SignatureScheme *string  `json:"signature_scheme"`
	endpointPolicies
	requestOptionsRequest
}

func (a *API) createEndpoint(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req createEndpointRequest
	if e := decodeBody(r, &req, true); e != nil {
		return e
	}
	var p problems
	p.text("url", req.URL, maxURLBytes, true)
	p.text("description", req.Description, maxDescriptionBytes, false)
	types := p.eventTypes(req.EventTypes, true)
	schema := p.schemaVersion(req.SchemaVersion)
	flight := p.maxInFlight(req.MaxInFlight)
	p.rateLimit(req.RateLimitPerSec)
	ordered, strict := p.createOrdering(&req)
	flt := p.filter(req.Filter)
	policy := p.retryPolicy(req.RetryPolicy, a.cfg.Retry.Bounds)
	scheme := p.signatureScheme(req.SignatureScheme)
	a.checkURL(r.Context(), &p, "url", req.URL)
	pid := r.PathValue("pid")
	eid, sid := newID(endpointIDPrefix), newID(secretIDPrefix)
	opts := a.checkRequestOptions(r.Context(), &p, eid, req.requestOptionsRequest)
	if e := p.err(); e != nil {
		return e
	}
	key, err := a.newSigningKey(eid, sid, scheme)
	if err != nil {
		return err
	}
	var out createdEndpoint
	err = pgx.BeginFunc(r.Context(), a.pool, func(tx pgx.Tx) error {
		if err := a.checkEndpointQuota(r.Context(), tx, pid); err != nil {
			return err
		}
		v, err := scanEndpoint(tx.QueryRow(r.Context(), `INSERT INTO endpoint
			(id, partner_id, url, description, event_types, schema_version, max_in_flight, rate_limit_per_sec, ordered, filter, retry_policy, request_options, strict_order,
			 signature_scheme)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING `+endpointColumns,
			eid, pid, req.URL, req.Description, types, schema, flight, req.RateLimitPerSec, ordered, flt, policyJSON(policy), opts, strict, scheme))
		if err != nil {
			return err
		}
		if _, err := insertSigningKey(r.Context(), tx, eid, sid, key); err != nil {
			return err
		}
		out.endpointView = v
		return attachSecrets(r.Context(), tx, []*endpointView{&out.endpointView})
	})
	if err != nil {
		return err
	}
	out.Secret = key.secret
	if out.Secret != "" {
		a.metrics.secretsOut.Inc()
	}
	a.log.Info("endpoint created", "partner_id", pid, "endpoint_id", eid, "scheme", scheme) // never the secret
	respondAt(w, http.StatusCreated, partnerPath(r)+"/endpoints/"+eid, out)
	return nil
}

// checkURL applies the egress guard's registration policy (R26) to the URL of field, unless
// the field already failed its text checks: a refusal is one more of the request's problems
// (url_refused, naming the field and the rule), never a server fault. A URL with control
// characters is refused before, as a validation failure of the field (urlControls).
func (a *API) checkURL(ctx context.Context, p *problems, field, raw string) {
	if p.has(field) || !p.urlControls(field, raw) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := a.guard.CheckURL(ctx, raw)
	if err == nil {
		return
	}
	var pe *egress.PolicyError
	if errors.As(err, &pe) {
		p.refuse(field, pe.Rule, "refused by the egress policy (rule %s): %s", pe.Rule, pe.Detail)
		return
	}
	p.refuse(field, egress.RuleURL, "could not be checked (rule %s): %s", egress.RuleURL, err.Error())
}

// urlControls refuses a URL holding a control character (C0, DEL, C1) or a Unicode bidi control
// (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C): such a URL is shown to operators and
// partners in terminals and pages, where the first are obeyed and the second reorder what is
// read, so the URL shown would not be the URL called. Percent-encoded, they are ordinary text.
// It says whether the URL is free of them.
func (p *problems) urlControls(field, raw string) bool {
	for _, r := range raw {
		if unicode.IsControl(r) || isBidiControl(r) {
			p.add(field, "must not contain control or bidirectional-text characters (found U+%04X); percent-encode it", r)
			return false
		}
	}
	return true
}

func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// eventTypes checks a subscription list: event-type patterns (eventtype.ValidPattern: exact
// types, "prefix.*" wildcards or "*"), and returns it without duplicates.
func (p *problems) eventTypes(types []string, required bool) []string {
	if len(types) == 0 {
		if required {
			p.add("event_types", `give at least one event type, a wildcard like "customer.*", or "*" for all`)
		}
		return []string{}
	}
	if len(types) > maxEventTypes {
		p.add("event_types", "at most %d entries", maxEventTypes)
		return nil
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(types))
	for i, t := range types {
		if !eventtype.ValidPattern(t) {
			p.add(fmt.Sprintf("event_types[%d]", i), `must be an event type like "api_key.created", a wildcard like "api_key.*", or "*"`)
			continue
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func (p *problems) schemaVersion(v *int) int {
	if v == nil {
		return schemaVersions[len(schemaVersions)-1]
	}
	for _, s := range schemaVersions {
		if *v == s {
			return s
		}
	}
	p.add("schema_version", "must be one of the catalog's schema versions %v", schemaVersions)
	return 0
}

func (p *problems) maxInFlight(v *int) int {
	if v == nil {
		return defaultMaxInFlight
	}
	if *v < 1 || *v > maxMaxInFlight {
		p.add("max_in_flight", "must be from 1 to %d", maxMaxInFlight)
	}
	return *v
}

func (p *problems) rateLimit(v *float64) {
	if v != nil && (math.IsNaN(*v) || *v <= 0 || *v > maxRateLimitPerSec) {
		p.add("rate_limit_per_sec", "must be null (no limit) or a number above 0 and at most %d", maxRateLimitPerSec)
	}
}

type endpointCursor struct {
	CreatedAt time.Time `json:"t"`
	ID        string    `json:"id"`
}

func (a *API) listEndpoints(w http.ResponseWriter, r *http.Request, _ caller) error {
	q := r.URL.Query()
	after := endpointCursor{}
	limit, e := pageQuery(q, "endpoints", &after, func() bool { return validID(endpointIDPrefix, after.ID) })
	if e != nil {
		return e
	}
	out, err := queryPage(r.Context(), a.pool, limit, scanEndpoint, func(last endpointView) string {
		return encodeCursor("endpoints", endpointCursor{CreatedAt: last.CreatedAt.Time, ID: last.ID})
	}, `SELECT `+endpointColumns+` FROM endpoint
		WHERE partner_id = $1 AND ($2 = '' OR (created_at, id) > ($3, $2))
		ORDER BY created_at, id LIMIT $4`, r.PathValue("pid"), after.ID, after.CreatedAt, limit+1)
	if err != nil {
		return err
	}
	ptrs := make([]*endpointView, len(out.Data))
	for i := range out.Data {
		ptrs[i] = &out.Data[i]
	}
	if err := attachSecrets(r.Context(), a.pool, ptrs); err != nil {
		return err
	}
	respond(w, http.StatusOK, out)
	return nil
}

func (a *API) getEndpoint(w http.ResponseWriter, r *http.Request, _ caller) error {
	v, err := loadEndpoint(r.Context(), a.pool, r.PathValue("pid"), r.PathValue("eid"), false)
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, v)
	return nil
}

// patchEndpointRequest holds each field as absent, null or a value (optional): null resets a
// field to its default (description "", schema_version the newest, max_in_flight 64, no rate
// limit, not ordered, ordering none); url and event_types have none and refuse null.
type patchEndpointRequest struct {
	URL             optional[string]   `json:"url"`
	Description     optional[string]   `json:"description"`
	EventTypes      optional[[]string] `json:"event_types"`
	SchemaVersion   optional[int]      `json:"schema_version"`
	MaxInFlight     optional[int]      `json:"max_in_flight"`
	RateLimitPerSec optional[float64]  `json:"rate_limit_per_sec"`
	Ordered         optional[bool]     `json:"ordered"`
	Ordering        optional[string]   `json:"ordering"`
	SignatureScheme optional[string]   `json:"signature_scheme"`
	endpointPoliciesPatch
	requestOptionsPatch
}

// endpointPatch is a checked PATCH of an endpoint: what it changes, each field nil (or its set
// flag false) where the endpoint stays as it is.
type endpointPatch struct {
	url, desc *string
	types     []string
	schema    *int
	flight    *int
	rate      *float64
	setRL     bool // rate_limit_per_sec is given; rate nil means no limit
	ordered   *bool
	strict    *bool
	setFilter bool // filter is given; flt nil means no filter
	flt       *string
	setPolicy bool // retry_policy is given; policy nil means the deployment's
	policy    *retrypolicy.Policy
	options   optionsChange
	scheme    *string // signature_scheme: a change rotates to a key of the new scheme (signing.go)
}

// changes says whether the patch changes anything: an empty one answers the endpoint as it is.
func (c *endpointPatch) changes() bool {
	return c.url != nil || c.desc != nil || c.types != nil || c.schema != nil || c.flight != nil || c.setRL || c.ordered != nil || c.strict != nil ||
		c.setFilter || c.setPolicy || c.options.any() || c.scheme != nil
}

// patchEndpoint changes the given fields; status changes go through disable and enable.
func (a *API) patchEndpoint(w http.ResponseWriter, r *http.Request, _ caller) error {
	var (
		req patchEndpointRequest
		err error
	)
	pid, eid, e := endpointRequest(r, &req, true)
	if e != nil {
		return e
	}
	c, e := a.checkEndpointPatch(r.Context(), eid, &req)
	if e != nil {
		return e
	}
	if !c.changes() {
		return a.getEndpoint(w, r, caller{})
	}
	var out patchedEndpoint
	out.endpointView, out.Secret, err = a.applyEndpointPatch(r.Context(), pid, eid, c)
	if err != nil {
		return err
	}
	if out.Secret != "" {
		a.metrics.secretsOut.Inc()
	}
	respond(w, http.StatusOK, out)
	return nil
}

// patchedEndpoint is the PATCH answer: the endpoint, and the new whsec_ secret when the patch
// moved it to v1 (shown only there).
type patchedEndpoint struct {
	endpointView
	Secret string `json:"secret,omitempty"`
}

// checkEndpointPatch checks every field of a PATCH of endpoint eid, the URLs against the
// egress policy too, and reports all their problems at once.
func (a *API) checkEndpointPatch(ctx context.Context, eid string, req *patchEndpointRequest) (endpointPatch, *apiError) {
	var p problems
	c := endpointPatch{setFilter: req.Filter.Set, setPolicy: req.RetryPolicy.Set}
	p.patchSubscription(req, &c)
	if c.url != nil {
		a.checkURL(ctx, &p, "url", *c.url)
	}
	c.options = a.checkRequestOptionsPatch(ctx, &p, eid, req.requestOptionsPatch)
	p.patchDelivery(req, &c)
	if req.Filter.Set && !req.Filter.Null {
		c.flt = p.filter(&req.Filter.Value)
	}
	if req.RetryPolicy.Set && !req.RetryPolicy.Null {
		c.policy = p.retryPolicy(&req.RetryPolicy.Value, a.cfg.Retry.Bounds)
	}
	if req.SignatureScheme.Set { // null: back to the default, v1
		c.scheme = new(string)
		*c.scheme = p.signatureScheme(nil)
		if !req.SignatureScheme.Null {
			*c.scheme = p.signatureScheme(&req.SignatureScheme.Value)
		}
	}
	if e := p.err(); e != nil {
		return endpointPatch{}, e
	}
	return c, nil
}

// patchSubscription checks what a PATCH says of where and what an endpoint receives: url,
// description and event_types. url and event_types have no default and refuse null.
func (p *problems) patchSubscription(req *patchEndpointRequest, c *endpointPatch) {
	var (
		types     []string
		noDefault = func(field string) { p.add(field, "cannot be null: it has no default to return to") }
	)
	switch {
	case req.URL.Null:
		noDefault("url")
	case req.URL.Set:
		p.text("url", req.URL.Value, maxURLBytes, true)
		c.url = &req.URL.Value
	}
	if req.Description.Set {
		c.desc = new(string) // null: no description
		if !req.Description.Null {
			p.text("description", req.Description.Value, maxDescriptionBytes, false)
			c.desc = &req.Description.Value
		}
	}
	switch {
	case req.EventTypes.Null:
		noDefault("event_types")
	case req.EventTypes.Set:
		types = p.eventTypes(req.EventTypes.Value, true)
	}
	c.types = types
}

// patchDelivery checks what a PATCH says of how an endpoint is delivered to: schema_version,
// max_in_flight, rate_limit_per_sec, ordered and ordering, where null returns a field to its
// default.
func (p *problems) patchDelivery(req *patchEndpointRequest, c *endpointPatch) {
	withDefault := func(v int) *int { return &v }
	if req.SchemaVersion.Set {
		c.schema = withDefault(p.schemaVersion(nil))
		if !req.SchemaVersion.Null {
			c.schema = withDefault(p.schemaVersion(&req.SchemaVersion.Value))
		}
	}
	if req.MaxInFlight.Set {
		c.flight = withDefault(p.maxInFlight(nil))
		if !req.MaxInFlight.Null {
			c.flight = withDefault(p.maxInFlight(&req.MaxInFlight.Value))
		}
	}
	if req.RateLimitPerSec.Set {
		c.setRL = true
		if !req.RateLimitPerSec.Null {
			v := req.RateLimitPerSec.Value
			p.rateLimit(&v)
			c.rate = &v
		}
	}
	p.patchOrdering(req, c)
}

// applyEndpointPatch writes a checked patch in one transaction, the version of the endpoint
// rising by one, and returns the endpoint as it is then, with the new secret of a move to v1.
func (a *API) applyEndpointPatch(ctx context.Context, pid, eid string, c endpointPatch) (endpointView, string, error) {
	var (
		out    endpointView
		secret string
	)
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		v, err := scanEndpoint(tx.QueryRow(ctx, `UPDATE endpoint SET
				url = COALESCE($3, url),
				description = COALESCE($4, description),
				event_types = COALESCE($5, event_types),
				schema_version = COALESCE($6, schema_version),
				max_in_flight = COALESCE($7, max_in_flight),
				rate_limit_per_sec = CASE WHEN $8 THEN $9 ELSE rate_limit_per_sec END,
				ordered = COALESCE($10, ordered),
				filter = CASE WHEN $11 THEN $12 ELSE filter END,
				retry_policy = CASE WHEN $13 THEN $14::jsonb ELSE retry_policy END,
				strict_order = COALESCE($15, strict_order),
				signature_scheme = COALESCE($16, signature_scheme),
				version = version + 1, updated_at = now()
			WHERE id = $1 AND partner_id = $2 RETURNING `+endpointColumns,
			eid, pid, c.url, c.desc, c.types, c.schema, c.flight, c.setRL, c.rate, c.ordered,
			c.setFilter, c.flt, c.setPolicy, policyJSON(c.policy), c.strict, c.scheme))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("endpoint")
		}
		if err != nil {
			return err
		}
		out = v
		if c.scheme != nil {
			if secret, err = a.switchScheme(ctx, tx, eid, *c.scheme); err != nil {
				return err
			}
		}
		if !c.options.any() {
			return attachSecrets(ctx, tx, []*endpointView{&out})
		}
		if err := a.applyRequestOptionsPatch(ctx, tx, pid, eid, c.options); err != nil {
			return err
		}
		out, err = loadEndpoint(ctx, tx, pid, eid, false)
		return err
	})
	return out, secret, err
}

// deleteEndpoint removes the endpoint and its secrets; cdc publishes the tombstone, and the
// delivery history stays.
func (a *API) deleteEndpoint(w http.ResponseWriter, r *http.Request, _ caller) error {
	eid := r.PathValue("eid")
	if !validID(endpointIDPrefix, eid) {
		return notFound("endpoint")
	}
	tag, err := a.pool.Exec(r.Context(), `DELETE FROM endpoint WHERE id = $1 AND partner_id = $2`, eid, r.PathValue("pid"))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound("endpoint")
	}
	a.log.Info("endpoint deleted", "partner_id", r.PathValue("pid"), "endpoint_id", eid)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type disableRequest struct {
	Reason string `json:"reason"`
}

// disableEndpoint stops deliveries to an endpoint and announces it with an endpoint.disabled
// event in the same transaction (R23, R25), through endpoints.Disable. Disabling a disabled
// endpoint changes nothing and emits nothing.
func (a *API) disableEndpoint(w http.ResponseWriter, r *http.Request, c caller) error {
	var req disableRequest
	pid, eid, e := endpointRequest(r, &req, true)
	if e != nil {
		return e
	}
	var p problems
	p.text("reason", req.Reason, maxReasonBytes, true)
	if e := p.err(); e != nil {
		return e
	}
	by := endpoints.ByPartner
	if c.operator {
		by = endpoints.ByOperator
	}
	var out endpointView
	err := pgx.BeginFunc(r.Context(), a.pool, func(tx pgx.Tx) error {
		if _, err := endpoints.Disable(r.Context(), tx, endpoints.Disabling{PartnerID: pid, EndpointID: eid, Reason: req.Reason, By: by}); err != nil {
			return err
		}
		var err error
		out, err = loadEndpoint(r.Context(), tx, pid, eid, false)
		return err
	})
	if err != nil {
		return err
	}
	a.log.Info("endpoint disabled", "partner_id", pid, "endpoint_id", eid, "by", c.actor())
	respond(w, http.StatusOK, out)
	return nil
}

// enableEndpoint resumes deliveries of new events. Its failure period starts afresh, so the
// failure window does not disable it again at once; events missed meanwhile are recovered with a
// replay from the log (R24).
func (a *API) enableEndpoint(w http.ResponseWriter, r *http.Request, c caller) error {
	pid, eid, e := endpointRequest(r, &struct{}{}, false)
	if e != nil {
		return e
	}
	out, err := a.changeEndpoint(r.Context(), pid, eid, func(_ pgx.Tx, cur endpointView) (string, []any, bool, error) {
		if cur.Status == "active" {
			return "", nil, false, nil
		}
		return "status = 'active', disabled_reason = NULL, failing_since = NULL", nil, true, nil
	})
	if err != nil {
		return err
	}
	a.log.Info("endpoint enabled", "partner_id", pid, "endpoint_id", eid, "by", c.actor())
	respond(w, http.StatusOK, out)
	return nil
}

// changeEndpoint runs change on the partner's endpoint, locked, in one transaction. change does
// whatever else the action needs in tx and says whether the endpoint changed, with the extra SET
// clause of its update (arguments from $2; "" for none). A change always moves version and
// updated_at; the endpoint is returned as it then is, secrets' metadata included.
func (a *API) changeEndpoint(ctx context.Context, pid, eid string,
	change func(tx pgx.Tx, cur endpointView) (set string, args []any, changed bool, err error)) (endpointView, error) {
	var out endpointView
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		cur, err := loadEndpoint(ctx, tx, pid, eid, true)
		if err != nil {
			return err
		}
		out = cur
		set, args, changed, err := change(tx, cur)
		if err != nil || !changed {
			return err
		}
		if set != "" {
			set += ", "
		}
		v, err := scanEndpoint(tx.QueryRow(ctx, `UPDATE endpoint SET `+set+`version = version + 1, updated_at = now()
			WHERE id = $1 RETURNING `+endpointColumns, append([]any{eid}, args...)...))
		if err != nil {
			return err
		}
		out = v
		return attachSecrets(ctx, tx, []*endpointView{&out})
	})
	return out, err
}
