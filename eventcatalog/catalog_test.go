package eventcatalog_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

func newCatalog(t testing.TB) *eventcatalog.Catalog {
	t.Helper()
	c, err := eventcatalog.New()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func eventOf(et eventcatalog.EventType, data []byte) outbox.Event {
	return outbox.Event{PartnerID: "partner_a", Type: et.Type, SchemaVersion: et.SchemaVersion,
		Subject: outbox.Subject{Type: "test", ID: "1"}, Data: data}
}

// versioned is one published version of a type.
type versioned struct {
	eventcatalog.Version
	Type string
	et   eventcatalog.EventType
}

func (v versioned) event(data []byte) outbox.Event {
	return outbox.Event{PartnerID: "partner_a", Type: v.Type, SchemaVersion: v.SchemaVersion,
		Subject: outbox.Subject{Type: "test", ID: "1"}, Data: data}
}

func (v versioned) String() string { return fmt.Sprintf("%s v%d", v.Type, v.SchemaVersion) }

// allVersions is every published version of every type.
func allVersions() []versioned {
	var out []versioned
	for _, et := range eventcatalog.Types() {
		for _, v := range et.Versions {
			out = append(out, versioned{v, et.Type, et})
		}
	}
	return out
}

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// R4: the catalog covers the reseller's domain (customer, API key, balance and credit, budget,
// usage) and hookstream's own operational events, each entry well formed.
func TestCatalogEntries(t *testing.T) {
	t.Parallel()
	types := eventcatalog.Types()
	var names []string
	for _, et := range types {
		if !outbox.ValidType(et.Type) || slices.Contains(names, et.Type) {
			t.Errorf("type %q is malformed or repeated", et.Type)
		}
		names = append(names, et.Type)
		if et.Category != "business" && et.Category != "operational" {
			t.Errorf("%s: category %q", et.Type, et.Category)
		}
		if et.SchemaVersion < 1 || et.Description == "" || !json.Valid(et.Schema) || !json.Valid(et.Example) {
			t.Errorf("%s: incomplete entry %+v", et.Type, et)
		}
		if got, ok := eventcatalog.Lookup(et.Type); !ok || got.Type != et.Type || !bytes.Equal(got.Schema, et.Schema) {
			t.Errorf("Lookup(%s) = %v, %v", et.Type, got.Type, ok)
		}
		// R14, R31: every version is listed, oldest first; the top-level fields are the
		// newest's; every version after the first says what changed.
		if len(et.Versions) == 0 {
			t.Errorf("%s: no versions", et.Type)
			continue
		}
		newest := et.Versions[len(et.Versions)-1]
		if newest.SchemaVersion != et.SchemaVersion || !bytes.Equal(newest.Schema, et.Schema) || !bytes.Equal(newest.Example, et.Example) {
			t.Errorf("%s: the top-level fields are not those of the newest version %d", et.Type, newest.SchemaVersion)
		}
		for i, v := range et.Versions {
			if v.SchemaVersion < 1 || (i > 0 && v.SchemaVersion <= et.Versions[i-1].SchemaVersion) {
				t.Errorf("%s: versions not ascending: %d", et.Type, v.SchemaVersion)
			}
			if (i == 0) != (v.Changes == "") || !json.Valid(v.Schema) || !json.Valid(v.Example) {
				t.Errorf("%s v%d: incomplete version (changes %q)", et.Type, v.SchemaVersion, v.Changes)
			}
			if got, ok := et.Version(v.SchemaVersion); !ok || !bytes.Equal(got.Schema, v.Schema) {
				t.Errorf("%s: Version(%d) = %v", et.Type, v.SchemaVersion, ok)
			}
		}
	}
	if et, _ := eventcatalog.Lookup("usage.finalized"); et.SchemaVersion != 2 || len(et.Versions) != 2 {
		t.Errorf("usage.finalized is at version %d with %d versions, want 2 and 2", et.SchemaVersion, len(et.Versions))
	}
	for _, want := range []string{"customer.created", "customer.updated", "customer.deleted", "api_key.created",
		"api_key.status_changed", "balance.credited", "balance.adjusted", "balance.low", "budget.threshold_crossed",
		"usage.finalized", "endpoint.failing", "endpoint.disabled", "endpoint.order_broken", eventcatalog.TestEventType} {
		if !slices.Contains(names, want) {
			t.Errorf("catalog lacks %s", want)
		}
	}
	if _, ok := eventcatalog.Lookup("customer.exploded"); ok {
		t.Error("Lookup found a type the catalog lacks")
	}
}

// What the package returns is a copy: changing it changes neither later answers nor the checks.
func TestTypesAreCopies(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	before := encode(t, eventcatalog.Types())
	env := eventcatalog.EnvelopeSchema()
	types := eventcatalog.Types()
	for i := range types {
		clear(types[i].Schema)
		clear(types[i].Example)
		for _, v := range types[i].Versions {
			clear(v.Schema)
			clear(v.Example)
		}
		types[i].Versions[0].SchemaVersion = 7
		types[i].Type = "x.y"
	}
	et, _ := eventcatalog.Lookup("customer.created")
	clear(et.Schema)
	clear(env)
	if after := encode(t, eventcatalog.Types()); !bytes.Equal(before, after) {
		t.Fatal("changing the result of Types changed the catalog")
	}
	if !json.Valid(eventcatalog.EnvelopeSchema()) {
		t.Fatal("changing the result of EnvelopeSchema changed it")
	}
	et, _ = eventcatalog.Lookup("customer.created")
	if err := c.CheckEvent(eventOf(et, et.Example)); err != nil {
		t.Fatal(err)
	}
}

// R4, R14, R31: every published example of every version fits its own version's schema, as
// the Catalog checks it and as the schema stands alone, and, wrapped in the envelope outbox
// builds, fits the published envelope schema. An example of one version does not pass for
// another version of its type: the versions differ in a way a partner notices.
func TestExamplesFitTheirSchemas(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	envelope := compile(t, eventcatalog.EnvelopeSchema())
	for _, v := range allVersions() {
		if err := c.CheckEvent(v.event(v.Example)); err != nil {
			t.Errorf("%s: example refused: %v", v, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(v.Example))
		if err != nil {
			t.Fatal(err)
		}
		if err := compile(t, v.Schema).Validate(doc); err != nil {
			t.Errorf("%s: example refused by its schema alone: %v", v, err)
		}
		for _, other := range v.et.Versions {
			if other.SchemaVersion != v.SchemaVersion && c.CheckEvent(v.event(other.Example)) == nil {
				t.Errorf("%s accepts the example of v%d", v, other.SchemaVersion)
			}
		}
		b := encode(t, outbox.Envelope{EventID: outbox.NewEventID(), Type: v.Type, OccurredAt: time.Now().UTC(),
			PartnerID: "partner_a", Subject: outbox.Subject{Type: "customer", ID: "cus_8f2k1"},
			SchemaVersion: v.SchemaVersion, CorrelationID: "req_1", Data: v.Example})
		doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := envelope.Validate(doc); err != nil {
			t.Errorf("%s: envelope %s: %v", v, b, err)
		}
	}
}

func compile(t testing.TB, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("urn:test", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("urn:test")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every required field of every version of every type is enforced: the example without it is
// refused, naming it.
func TestRequiredFieldsAreEnforced(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	for _, v := range allVersions() {
		required, _ := decode(t, v.Schema)["required"].([]any)
		if len(required) == 0 {
			t.Errorf("%s: no required fields", v)
		}
		for _, r := range required {
			field := r.(string)
			data := decode(t, v.Example)
			delete(data, field)
			err := c.CheckEvent(v.event(encode(t, data)))
			var verr *outbox.ValidationError
			if !errors.As(err, &verr) || !errors.Is(err, outbox.ErrInvalidData) || verr.Field != "data" ||
				!strings.Contains(verr.Reason, "missing property '"+field+"'") || !strings.Contains(verr.Reason, "keyword required") {
				t.Errorf("%s without %s: %v", v, field, err)
			}
		}
	}
}

// R31: a property the schema does not know is accepted, so adding an optional field is a
// compatible change within a schema version.
func TestAdditionalPropertiesAreCompatible(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	for _, v := range allVersions() {
		data := decode(t, v.Example)
		data["added_in_a_later_release"] = map[string]any{"anything": []any{1, "two", nil}}
		if err := c.CheckEvent(v.event(encode(t, data))); err != nil {
			t.Errorf("%s: an additional property was refused: %v", v, err)
		}
	}
}

// A mutated example per type, each breaking one rule of its schema, is refused with the field
// and the keyword that caught it.
func TestMutatedExamplesAreRefused(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	long := strings.Repeat("x", 501)
	cases := []struct {
		typ     string
		version int // 0: the newest
		mutate  func(d map[string]any)
		field   string
		keyword string
	}{
		{"customer.created", 0, func(d map[string]any) { d["created_at"] = "2026-03-01 09:30:00" }, "data/created_at", "format"},
		{"customer.created", 0, func(d map[string]any) { d["created_at"] = "2026-02-30T09:30:00Z" }, "data/created_at", "format"},
		{"customer.created", 0, func(d map[string]any) { d["status"] = "deleted" }, "data/status", "enum"},
		{"customer.created", 0, func(d map[string]any) { d["customer_id"] = "cus-8f2k1" }, "data/customer_id", "pattern"},
		{"customer.updated", 0, func(d map[string]any) { d["changed"] = []any{} }, "data/changed", "minItems"},
		{"customer.updated", 0, func(d map[string]any) { d["changed"] = []any{"status", 7} }, "data/changed/1", "type"},
		{"customer.updated", 0, func(d map[string]any) { d["version"] = 0 }, "data/version", "minimum"},
		{"customer.updated", 0, func(d map[string]any) { d["version"] = 7.5 }, "data/version", "type"},
		{"customer.updated", 0, func(d map[string]any) { d["version"] = "7" }, "data/version", "type"},
		{"customer.deleted", 0, func(d map[string]any) { d["customer_id"] = nil }, "data/customer_id", "type"},
		{"api_key.created", 0, func(d map[string]any) { d["key_hint"] = "sk-live-x7Qa" }, "data/key_hint", "pattern"},
		{"api_key.created", 0, func(d map[string]any) { d["api_key_id"] = "sk_live_3n9q" }, "data/api_key_id", "pattern"},
		{"api_key.status_changed", 0, func(d map[string]any) { d["reason"] = "abuse" }, "data/reason", "enum"},
		// R7: money is a decimal string, never a float, always with its currency.
		{"balance.credited", 0, func(d map[string]any) { d["amount"].(map[string]any)["value"] = 50.0 }, "data/amount/value", "type"},
		{"balance.credited", 0, func(d map[string]any) { delete(d["balance"].(map[string]any), "currency") }, "data/balance", "required"},
		{"balance.adjusted", 0, func(d map[string]any) { d["amount"].(map[string]any)["value"] = "-1.2500001" }, "data/amount/value", "pattern"},
		{"balance.adjusted", 0, func(d map[string]any) { d["amount"].(map[string]any)["value"] = "1e3" }, "data/amount/value", "pattern"},
		{"balance.low", 0, func(d map[string]any) { d["threshold"].(map[string]any)["currency"] = "usd" }, "data/threshold/currency", "pattern"},
		{"balance.low", 0, func(d map[string]any) { d["balance"] = "4.90 USD" }, "data/balance", "type"},
		{"budget.threshold_crossed", 0, func(d map[string]any) { d["threshold_percent"] = 75 }, "data/threshold_percent", "enum"},
		{"budget.threshold_crossed", 0, func(d map[string]any) { d["current_percent"] = 81.35 }, "data/current_percent", "type"},
		{"usage.finalized", 1, func(d map[string]any) { d["input_tokens"] = -1 }, "data/input_tokens", "minimum"},
		{"usage.finalized", 1, func(d map[string]any) { d["cost"].(map[string]any)["value"] = 3.4182 }, "data/cost/value", "type"},
		// Version 2: money as an integer count of millionths, never negative, never a float.
		{"usage.finalized", 2, func(d map[string]any) { d["input_tokens"] = -1 }, "data/input_tokens", "minimum"},
		{"usage.finalized", 2, func(d map[string]any) { d["cost"].(map[string]any)["amount_micros"] = 3.4182 }, "data/cost/amount_micros", "type"},
		{"usage.finalized", 2, func(d map[string]any) { d["cost"].(map[string]any)["amount_micros"] = "3418200" }, "data/cost/amount_micros", "type"},
		{"usage.finalized", 2, func(d map[string]any) { d["cost"].(map[string]any)["amount_micros"] = -5 }, "data/cost/amount_micros", "minimum"},
		{"usage.finalized", 2, func(d map[string]any) { delete(d["cost"].(map[string]any), "amount_micros") }, "data/cost", "required"},
		{"endpoint.failing", 0, func(d map[string]any) { d["failing_since"] = "yesterday" }, "data/failing_since", "format"},
		{"endpoint.failing", 0, func(d map[string]any) { d["endpoint_id"] = "ep_1" }, "data/endpoint_id", "pattern"},
		{"endpoint.disabled", 0, func(d map[string]any) { d["reason"] = long }, "data/reason", "maxLength"},
		{"endpoint.disabled", 0, func(d map[string]any) { d["disabled_by"] = "robot" }, "data/disabled_by", "enum"},
		{"endpoint.order_broken", 0, func(d map[string]any) { d["attempts"] = 0 }, "data/attempts", "minimum"},
		{"endpoint.order_broken", 0, func(d map[string]any) { d["event_id"] = "evt-1" }, "data/event_id", "pattern"},
		{eventcatalog.TestEventType, 0, func(d map[string]any) { d["message"] = []any{"hi"} }, "data/message", "type"},
	}
	mutated := map[string]bool{}
	for _, tc := range cases {
		et, ok := eventcatalog.Lookup(tc.typ)
		if !ok {
			t.Fatalf("no type %s", tc.typ)
		}
		ver, ok := et.Version(cmp.Or(tc.version, et.SchemaVersion))
		if !ok {
			t.Fatalf("no version %d of %s", tc.version, tc.typ)
		}
		v := versioned{ver, et.Type, et}
		mutated[v.String()] = true
		data := decode(t, ver.Example)
		tc.mutate(data)
		b := encode(t, data)
		t.Run(fmt.Sprintf("%s/v%d/%s/%s", tc.typ, ver.SchemaVersion, tc.field, tc.keyword), func(t *testing.T) {
			err := c.CheckEvent(v.event(b))
			var verr *outbox.ValidationError
			if !errors.As(err, &verr) || !errors.Is(err, outbox.ErrInvalidData) {
				t.Fatalf("%s %s: err = %v, want a ValidationError for invalid data", tc.typ, b, err)
			}
			if verr.Field != tc.field || !strings.Contains(verr.Reason, "keyword "+tc.keyword) || !strings.Contains(verr.Reason, v.String()) {
				t.Fatalf("%s: field %q, reason %q; want field %q, keyword %s", tc.typ, verr.Field, verr.Reason, tc.field, tc.keyword)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("message of %d bytes: %s", len(err.Error()), err)
			}
		})
	}
	for _, v := range allVersions() {
		if !mutated[v.String()] {
			t.Errorf("%s has no mutated example here", v)
		}
	}
}

// An unknown type and a version the catalog does not publish are refused before the data is
// looked at; version zero is outbox's default, 1.
func TestTypeAndVersion(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	et, _ := eventcatalog.Lookup("customer.created")
	usage, _ := eventcatalog.Lookup("usage.finalized")
	cases := []struct {
		name     string
		ev       outbox.Event
		sentinel error
		field    string
	}{
		{"unknown type", outbox.Event{Type: "customer.exploded", Data: et.Example}, outbox.ErrInvalidType, "type"},
		{"malformed type", outbox.Event{Type: "Customer Created", Data: et.Example}, outbox.ErrInvalidType, "type"},
		{"next version", outbox.Event{Type: et.Type, SchemaVersion: 2, Data: et.Example}, outbox.ErrInvalidField, "schema_version"},
		{"a version after the newest", outbox.Event{Type: usage.Type, SchemaVersion: 3, Data: usage.Example}, outbox.ErrInvalidField, "schema_version"},
		{"the newest version", outbox.Event{Type: usage.Type, SchemaVersion: 2, Data: usage.Example}, nil, ""},
		{"an older version", outbox.Event{Type: usage.Type, SchemaVersion: 1, Data: usage.Versions[0].Example}, nil, ""},
		{"newest data as version 1", outbox.Event{Type: usage.Type, Data: usage.Example}, outbox.ErrInvalidData, "data/cost"},
		{"negative version", outbox.Event{Type: et.Type, SchemaVersion: -1, Data: et.Example}, outbox.ErrInvalidField, "schema_version"},
		{"default version", outbox.Event{Type: et.Type, Data: et.Example}, nil, ""},
		{"nil data", outbox.Event{Type: "customer.deleted"}, outbox.ErrInvalidData, "data"},
		{"array data", outbox.Event{Type: et.Type, Data: []byte(`[]`)}, outbox.ErrInvalidData, "data"},
		{"broken JSON", outbox.Event{Type: et.Type, Data: []byte(`{"customer_id":`)}, outbox.ErrInvalidData, "data"},
		{"trailing data", outbox.Event{Type: et.Type, Data: append(slices.Clone(et.Example), " {}"...)}, outbox.ErrInvalidData, "data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckEvent(tc.ev)
			if tc.sentinel == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var verr *outbox.ValidationError
			if !errors.As(err, &verr) || !errors.Is(err, tc.sentinel) || verr.Field != tc.field {
				t.Fatalf("err = %v, want %v on %s", err, tc.sentinel, tc.field)
			}
		})
	}
}

// The message names the pointer, the rule and the keyword; echoed values are cut short, and
// further problems are counted, not listed.
func TestMessages(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	cases := []struct {
		typ, data, want string
	}{
		{"balance.credited", `{"customer_id":"cus_1","credit_id":"crd_1","amount":{"value":50.0,"currency":"USD"},"balance":{"value":"1","currency":"USD"}}`,
			`outbox: invalid data: data/amount/value: got number, want string (balance.credited v1, keyword type)`},
		{"customer.created", `{"status":"active","created_at":"2026-03-01T09:30:00Z"}`,
			`outbox: invalid data: data: missing property 'customer_id' (customer.created v1, keyword required)`},
		{"customer.created", `{"customer_id":"cus_1","status":"gone","created_at":"soon"}`,
			`outbox: invalid data: data/created_at: 'soon' is not a valid date-time: less than 20 characters long (customer.created v1, keyword format); 1 more problem`},
		{"customer.deleted", `{"customer_id":"` + strings.Repeat("é", 1000) + `"}`,
			`outbox: invalid data: data/customer_id: '` + strings.Repeat("é", 32) + `…' does not match ^cus_[A-Za-z0-9]+$ (customer.deleted v1, keyword pattern)`},
		{"endpoint.failing", `{"endpoint_id":"ep_1","failing_since":1,"x":{}}`,
			`outbox: invalid data: data/endpoint_id: 'ep_1' does not match ^ep_[0-9A-Z]{26}$ (endpoint.failing v1, keyword pattern); 1 more problem`},
	}
	for _, tc := range cases {
		err := c.CheckEvent(outbox.Event{Type: tc.typ, Data: []byte(tc.data)})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %.60s:\n got %v\nwant %s", tc.typ, tc.data, err, tc.want)
		}
	}
}

// One Catalog serves concurrent writers (run with -race).
func TestConcurrentChecks(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	types := eventcatalog.Types()
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			var err error
			for i := range 200 {
				et := types[(g+i)%len(types)]
				if err = c.CheckEvent(eventOf(et, et.Example)); err != nil {
					break
				}
				if c.CheckEvent(eventOf(et, []byte(`{}`))) == nil {
					err = fmt.Errorf("%s accepted {}", et.Type)
					break
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// R6 and R7 over the catalog. A property whose name suggests key material, a secret, a
// credential, raw content or evidence is refused unless allowed below, and each allowance is
// held to the shape that makes it harmless. No number appears anywhere: money is a decimal
// string, and counts are integers.
var (
	sensitiveName = regexp.MustCompile(`(?i)(key|secret|token|passw|credential|auth|session|cookie|prompt|completion|message_body|content|evidence|private)`)
	allowedNames  = map[string]func(prop map[string]any) bool{
		// The API key's identifier, never the key: the id pattern rules out key material.
		"api_key_id": func(p map[string]any) bool { return strings.HasPrefix(fmt.Sprint(p["pattern"]), "^key_") },
		// The last 4 characters, for display.
		"key_hint": func(p map[string]any) bool { return p["pattern"] == "^[A-Za-z0-9]{4}$" },
		// Counts of model tokens, not credentials.
		"input_tokens":  func(p map[string]any) bool { return p["type"] == "integer" },
		"output_tokens": func(p map[string]any) bool { return p["type"] == "integer" },
	}
)

// catalogProblems lists the R6 and R7 breaches of one schema.
func catalogProblems(schema map[string]any) []string {
	var out []string
	var walk func(at string, s map[string]any)
	walk = func(at string, s map[string]any) {
		if s["type"] == "number" {
			out = append(out, at+": a number; money is a decimal string, counts are integers (R7)")
		}
		props, _ := s["properties"].(map[string]any)
		if _, ok := props["currency"]; ok {
			// R7: a decimal string value, or an integer count of millionths (minor units at
			// the catalog's 6 decimals).
			v, _ := props["value"].(map[string]any)
			m, _ := props["amount_micros"].(map[string]any)
			decimal := v != nil && v["type"] == "string" && v["pattern"] != nil
			micros := m != nil && m["type"] == "integer" && m["minimum"] != nil && m["maximum"] != nil
			if !decimal && !micros {
				out = append(out, at+": money without a decimal string value or bounded integer micros (R7)")
			}
		}
		for name, p := range props {
			pm, _ := p.(map[string]any)
			if sensitiveName.MatchString(name) {
				if ok := allowedNames[name]; ok == nil || !ok(pm) {
					out = append(out, at+"/"+name+": may carry key material, secrets or raw content (R6)")
				}
			}
			walk(at+"/"+name, pm)
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(at+"/items", items)
		}
	}
	walk("", schema)
	slices.Sort(out)
	return out
}

func TestCatalogCarriesNoSecretsAndNoFloats(t *testing.T) {
	t.Parallel()
	used := map[string]bool{}
	for _, v := range allVersions() {
		s := decode(t, v.Schema)
		for _, p := range catalogProblems(s) {
			t.Errorf("%s: %s", v, p)
		}
		for name := range s["properties"].(map[string]any) {
			used[name] = true
		}
	}
	for name := range allowedNames {
		if !used[name] {
			t.Errorf("allowance for %s is stale: no type has it", name)
		}
	}
	// The check is not a no-op: it catches what it is meant to.
	bad := map[string]any{"type": "object", "properties": map[string]any{
		"api_key":    map[string]any{"type": "string"},
		"key_hint":   map[string]any{"type": "string"},
		"api_key_id": map[string]any{"type": "string", "pattern": "^sk_"},
		"request":    map[string]any{"type": "object", "properties": map[string]any{"Prompt": map[string]any{"type": "string"}}},
		"provider":   map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"auth_header": map[string]any{}}}},
		"cost":       map[string]any{"type": "object", "properties": map[string]any{"value": map[string]any{"type": "number"}, "currency": map[string]any{}}},
		"fee":        map[string]any{"type": "object", "properties": map[string]any{"amount_micros": map[string]any{"type": "integer"}, "currency": map[string]any{}}},
	}}
	want := []string{
		"/api_key: may carry key material, secrets or raw content (R6)",
		"/api_key_id: may carry key material, secrets or raw content (R6)",
		"/cost/value: a number; money is a decimal string, counts are integers (R7)",
		"/cost: money without a decimal string value or bounded integer micros (R7)",
		"/fee: money without a decimal string value or bounded integer micros (R7)",
		"/key_hint: may carry key material, secrets or raw content (R6)",
		"/provider/items/auth_header: may carry key material, secrets or raw content (R6)",
		"/request/Prompt: may carry key material, secrets or raw content (R6)",
	}
	if got := catalogProblems(bad); !slices.Equal(got, want) {
		t.Errorf("planted breaches:\n got %q\nwant %q", got, want)
	}
}

// The envelope schema file readers of the event log take (envelope.schema.json) is the one the
// API publishes, and it refuses an envelope without an event id or with a malformed one.
func TestEnvelopeSchemaFile(t *testing.T) {
	t.Parallel()
	file, err := os.ReadFile("envelope.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if json.Unmarshal(file, &a) != nil || json.Unmarshal(eventcatalog.EnvelopeSchema(), &b) != nil || !reflect.DeepEqual(a, b) {
		t.Fatal("envelope.schema.json differs from EnvelopeSchema")
	}
	envelope := compile(t, file)
	for _, bad := range []string{
		`{"type":"customer.deleted","occurred_at":"2026-03-01T09:30:00Z","partner_id":"p","subject":{"type":"customer","id":"cus_1"},"schema_version":1,"data":{}}`,
		`{"event_id":"evt_1","type":"customer.deleted","occurred_at":"2026-03-01T09:30:00Z","partner_id":"p","subject":{"type":"customer","id":"cus_1"},"schema_version":1,"data":{}}`,
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if envelope.Validate(doc) == nil {
			t.Errorf("envelope accepted: %s", bad)
		}
	}
}
