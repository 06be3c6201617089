package cdc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/filter"
	"github.com/hookstream/hookstream/internal/records"
)

// endpointTable is cdc's copy of the endpoint tables as of the last change it processed. The
// endpoints topic carries each endpoint's full configuration, secrets included, while the WAL
// carries one row change at a time; the table joins the two. It is rebuilt at start from the
// endpoints topic, which cdc alone writes, in the same transactions as its checkpoint.
type endpointTable struct {
	byID map[string]*records.Endpoint
	// byPartner indexes byID by partner, and filters holds each filter parsed, for cdc's own
	// fan-out (endpoints.Matcher: ForPartner, Filter), which matches an event against the
	// table as of its PostgreSQL commit.
	byPartner map[string][]*records.Endpoint
	filters   map[string]parsedFilter
	// receiving caches receivers by partner and event type (cdc asks for every event); a
	// change of any of the partner's endpoints clears the partner's.
	receiving map[string]map[string]receivers
	touched   map[string]bool // changed in the current PostgreSQL transaction
	// rematch: a change in the current PostgreSQL transaction alters which events an endpoint
	// receives (created, deleted, or its partner, status, subscription, schema version or
	// filter changed), not only how they are sent.
	rematch bool
}

// matching is what fanout matches an event against (endpoints.Receives, the schema version it
// converts to, the payload filter).
type matching struct {
	partner, status, filter string
	types                   string
	schemaVersion           int
}

func matchingOf(e *records.Endpoint) matching {
	return matching{partner: e.PartnerID, status: e.Status, filter: e.Filter,
		types: strings.Join(e.EventTypes, "\x00"), schemaVersion: e.SchemaVersion}
}

// parsedFilter is an endpoint's filter text and its parse, nil when it did not parse.
type parsedFilter struct {
	text string
	flt  *filter.Filter
}

// receivers is what cdc's fan-out decision needs of a partner's endpoints for one event type.
type receivers struct {
	n            int  // how many receive it
	filtersParse bool // every filter among them parses
	ordered      bool // one of them is ordered
}

func newEndpointTable() *endpointTable {
	return &endpointTable{byID: map[string]*records.Endpoint{}, byPartner: map[string][]*records.Endpoint{},
		filters: map[string]parsedFilter{}, receiving: map[string]map[string]receivers{}, touched: map[string]bool{}}
}

// put adds e to the table, or puts it in place of the endpoint with its id.
func (t *endpointTable) put(e *records.Endpoint) {
	t.unindex(e.ID)
	t.byID[e.ID] = e
	t.byPartner[e.PartnerID] = append(t.byPartner[e.PartnerID], e)
	delete(t.receiving, e.PartnerID)
}

// unindex removes endpoint id from byID and byPartner.
func (t *endpointTable) unindex(id string) {
	old, ok := t.byID[id]
	if !ok {
		return
	}
	delete(t.byID, id)
	delete(t.receiving, old.PartnerID)
	rest := slices.DeleteFunc(t.byPartner[old.PartnerID], func(e *records.Endpoint) bool { return e.ID == id })
	if len(rest) == 0 {
		delete(t.byPartner, old.PartnerID)
	} else {
		t.byPartner[old.PartnerID] = rest
	}
}

// ForPartner returns the partner's endpoints (endpoints.Matcher); the slice and its values are
// the table's own, read only while the stream does not change it.
func (t *endpointTable) ForPartner(partnerID string) []*records.Endpoint {
	return t.byPartner[partnerID]
}

// Filter returns endpoint id's payload filter parsed (endpoints.Matcher), nil when it has none.
// A filter that does not parse (receiversOf) is never asked for: cdc leaves the events it
// would judge to fanout.
func (t *endpointTable) Filter(id string) *filter.Filter {
	e, ok := t.byID[id]
	if !ok || e.Filter == "" {
		return nil
	}
	if p, ok := t.filters[id]; ok && p.text == e.Filter {
		return p.flt
	}
	flt, err := filter.ParseStored(e.Filter)
	if err != nil {
		flt = nil
	}
	t.filters[id] = parsedFilter{text: e.Filter, flt: flt}
	return flt
}

// receiversOf returns how many of the partner's endpoints receive events of eventType, whether
// each of their filters parses and whether one of them is ordered.
func (t *endpointTable) receiversOf(partnerID, eventType string) receivers {
	byType := t.receiving[partnerID]
	if r, ok := byType[eventType]; ok {
		return r
	}
	r := receivers{filtersParse: true}
	for _, e := range t.byPartner[partnerID] {
		if endpoints.Receives(e, partnerID, eventType) {
			r.n++
			if e.Filter != "" && t.Filter(e.ID) == nil {
				r.filtersParse = false
			}
			r.ordered = r.ordered || e.Ordered
		}
	}
	if byType == nil {
		byType = map[string]receivers{}
		t.receiving[partnerID] = byType
	}
	byType[eventType] = r
	return r
}

// endpointFromRow fills e from an endpoint row; unchanged TOAST columns keep e's value.
func endpointFromRow(rels *relations, rw row, e *records.Endpoint) error {
	var (
		rate     pgtype.Float8
		failing  pgtype.Timestamptz
		reason   pgtype.Text
		types    []string
		schemaV  int32
		inFlight int32
	)
	fields := []struct {
		name string
		dst  any
	}{
		{"id", &e.ID}, {"partner_id", &e.PartnerID}, {"url", &e.URL}, {"description", &e.Description},
		{"status", &e.Status}, {"ordered", &e.Ordered}, {"version", &e.Version},
		{"created_at", &e.CreatedAt}, {"updated_at", &e.UpdatedAt},
	}
	for _, f := range fields {
		if _, err := rels.scan(rw, f.name, f.dst); err != nil {
			return err
		}
	}
	if _, ok := rw["strict_order"]; ok { // absent from changes written before migration 0019
		if _, err := rels.scan(rw, "strict_order", &e.StrictOrder); err != nil {
			return err
		}
	}
	if ok, err := rels.scan(rw, "event_types", &types); err != nil {
		return err
	} else if ok {
		e.EventTypes = types
	}
	if e.EventTypes == nil {
		e.EventTypes = []string{}
	}
	if ok, err := rels.scan(rw, "schema_version", &schemaV); err != nil {
		return err
	} else if ok {
		e.SchemaVersion = int(schemaV)
	}
	if ok, err := rels.scan(rw, "max_in_flight", &inFlight); err != nil {
		return err
	} else if ok {
		e.MaxInFlight = int(inFlight)
	}
	// Nullable columns: NULL clears the value, unchanged TOAST (never for these small types) keeps it.
	if _, err := rels.scan(rw, "rate_limit_per_sec", &rate); err != nil {
		return err
	}
	e.RateLimitPerSec = nil
	if rate.Valid {
		e.RateLimitPerSec = &rate.Float64
	}
	if _, err := rels.scan(rw, "failing_since", &failing); err != nil {
		return err
	}
	e.FailingSince = nil
	if failing.Valid {
		t := failing.Time.UTC()
		e.FailingSince = &t
	}
	if _, err := rels.scan(rw, "disabled_reason", &reason); err != nil {
		return err
	}
	e.DisabledReason = reason.String
	if err := filterAndPolicyFromRow(rels, rw, e); err != nil {
		return err
	}
	// NOT NULL: false here is an unchanged TOAST value, which keeps what e holds. A fresh value
	// replaces the old one whole (unmarshalling into e's would merge maps).
	var opts records.RequestOptions
	if ok, err := rels.scan(rw, "request_options", &opts); err != nil {
		return err
	} else if ok {
		e.RequestOptions = opts
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return nil
}

func secretFromRow(rels *relations, rw row) (endpointID string, s records.Secret, err error) {
	var expires pgtype.Timestamptz
	for _, f := range []struct {
		name string
		dst  any
	}{{"endpoint_id", &endpointID}, {"id", &s.ID}, {"secret_ciphertext", &s.Ciphertext}, {"created_at", &s.CreatedAt}, {"expires_at", &expires}} {
		if _, err := rels.scan(rw, f.name, f.dst); err != nil {
			return "", s, err
		}
	}
	s.CreatedAt = s.CreatedAt.UTC()
	if expires.Valid {
		t := expires.Time.UTC()
		s.ExpiresAt = &t
	}
	return endpointID, s, nil
}

// upsertEndpoint applies an insert or update of an endpoint row committed at lsn.
func (t *endpointTable) upsertEndpoint(rels *relations, old, rw row, lsn records.LSN) error {
	var id string
	if _, err := rels.scan(rw, "id", &id); err != nil {
		return err
	}
	if old != nil {
		var oldID string
		if ok, _ := rels.scan(old, "id", &oldID); ok && oldID != id {
			t.delete(oldID)
		}
	}
	e, ok := t.byID[id]
	var before matching
	if ok {
		before = matchingOf(e)
	} else {
		e = &records.Endpoint{V: records.EndpointVersion, CreatedLSN: lsn, Secrets: []records.Secret{}}
	}
	t.unindex(id) // its partner may change
	err := endpointFromRow(rels, rw, e)
	t.put(e)
	if err != nil {
		return err
	}
	t.rematch = t.rematch || !ok || matchingOf(e) != before
	e.LSN = lsn
	t.touched[id] = true
	return nil
}

func (t *endpointTable) deleteEndpoint(rels *relations, old row) error {
	var id string
	if _, err := rels.scan(old, "id", &id); err != nil {
		return err
	}
	t.delete(id)
	return nil
}

func (t *endpointTable) delete(id string) {
	t.unindex(id)
	delete(t.filters, id)
	t.touched[id] = true
	t.rematch = true
}

// takeRematch reports whether the changes since the last call alter which events an endpoint
// receives.
func (t *endpointTable) takeRematch() bool {
	r := t.rematch
	t.rematch = false
	return r
}

// upsertSecret applies an insert or update of a secret row. A secret of an endpoint cdc does not
// know is an error: the foreign key guarantees the endpoint row came first.
func (t *endpointTable) upsertSecret(rels *relations, rw row, lsn records.LSN) error {
	eid, s, err := secretFromRow(rels, rw)
	if err != nil {
		return err
	}
	e, ok := t.byID[eid]
	if !ok {
		return fmt.Errorf("cdc: secret %s of unknown endpoint %s", s.ID, eid)
	}
	i := slices.IndexFunc(e.Secrets, func(x records.Secret) bool { return x.ID == s.ID })
	if i >= 0 {
		e.Secrets[i] = s
	} else {
		e.Secrets = append(e.Secrets, s)
	}
	slices.SortFunc(e.Secrets, func(a, b records.Secret) int { return a.CreatedAt.Compare(b.CreatedAt) })
	e.LSN = lsn
	t.touched[eid] = true
	return nil
}

// deleteSecret applies a secret row's deletion; after the endpoint itself is gone (a cascade)
// there is nothing left to change.
func (t *endpointTable) deleteSecret(rels *relations, old row, lsn records.LSN) error {
	eid, s, err := secretFromRow(rels, old)
	if err != nil {
		return err
	}
	e, ok := t.byID[eid]
	if !ok {
		return nil
	}
	e.Secrets = slices.DeleteFunc(e.Secrets, func(x records.Secret) bool { return x.ID == s.ID })
	e.LSN = lsn
	t.touched[eid] = true
	return nil
}

// takeTouched returns the endpoints changed since the last call, in id order, each with its
// current configuration or nil when deleted.
func (t *endpointTable) takeTouched() []touchedEndpoint {
	out := make([]touchedEndpoint, 0, len(t.touched))
	for id := range t.touched {
		out = append(out, touchedEndpoint{ID: id, Endpoint: t.byID[id]})
	}
	slices.SortFunc(out, func(a, b touchedEndpoint) int { return strings.Compare(a.ID, b.ID) })
	clear(t.touched)
	return out
}

type touchedEndpoint struct {
	ID       string
	Endpoint *records.Endpoint // nil: deleted
}
