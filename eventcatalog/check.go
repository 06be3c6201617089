package eventcatalog

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/hookstream/hookstream/internal/clip"
	"github.com/hookstream/hookstream/outbox"
)

// Catalog checks events against the published schemas. It implements outbox.Catalog, so a
// platform refuses a nonconforming event at Append time, before anything is written:
//
//	w := outbox.Writer{Catalog: c}
//
// A Catalog is immutable and safe for concurrent use.
type Catalog struct {
	types map[string]compiled
}

// compiled holds a type's schemas by version, and its versions in ascending order.
type compiled struct {
	versions []int
	schemas  map[int]*jsonschema.Schema
}

var _ outbox.Catalog = (*Catalog)(nil)

// New compiles the schema of every type once. It fails only if the table in this package is
// broken, which the package's tests rule out.
func New() (*Catalog, error) {
	c := jsonschema.NewCompiler()
	// Pinned, not left to the library's "latest": the published schemas are draft 2020-12 and
	// carry no $schema member (adding one would change the published bytes, R31).
	c.DefaultDraft(jsonschema.Draft2020)
	// In draft 2020-12 "format" only annotates. The writer asserts it: a receiver that parses
	// failing_since or period_start as RFC 3339 must never get something else, and a platform
	// is better told at Append time than its partners at delivery time.
	c.AssertFormat()
	cat := &Catalog{types: make(map[string]compiled, len(catalog)+len(operatorCatalog))}
	for _, et := range slices.Concat(catalog, operatorCatalog) {
		t := compiled{schemas: map[int]*jsonschema.Schema{}}
		for _, v := range et.Versions {
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(v.Schema))
			if err != nil {
				return nil, fmt.Errorf("eventcatalog: schema of %s v%d: %w", et.Type, v.SchemaVersion, err)
			}
			url := schemaURL(et.Type, v.SchemaVersion)
			if err := c.AddResource(url, doc); err != nil {
				return nil, fmt.Errorf("eventcatalog: schema of %s v%d: %w", et.Type, v.SchemaVersion, err)
			}
			s, err := c.Compile(url)
			if err != nil {
				return nil, fmt.Errorf("eventcatalog: compile schema of %s v%d: %w", et.Type, v.SchemaVersion, err)
			}
			t.versions = append(t.versions, v.SchemaVersion)
			t.schemas[v.SchemaVersion] = s
		}
		cat.types[et.Type] = t
	}
	return cat, nil
}

// Published returns the catalog of this package's types, compiled on the first call and shared
// afterwards (a Catalog is immutable). It is what cdc checks every outbox row against by default.
// It panics only if the table in this package is broken, which the package's tests rule out.
func Published() *Catalog { return published() }

var published = sync.OnceValue(func() *Catalog {
	c, err := New()
	if err != nil {
		panic(err) // the catalog is a literal; a failure here is a programming error
	}
	return c
})

// schemaURL names a schema inside the compiler; nothing is ever fetched from it.
func schemaURL(typ string, version int) string {
	return "urn:hookstream:event-type:" + typ + ":v" + strconv.Itoa(version)
}

// CheckEvent returns a *outbox.ValidationError when ev does not fit the catalog:
//
//   - a type the catalog lacks, or one for the other audience (an operator type under a real
//     partner, a partner type under outbox.OperatorPartnerID): Field "type", wrapping
//     outbox.ErrInvalidType;
//   - a schema version the type is not published at (zero counts as 1, as in outbox.Append):
//     Field "schema_version", wrapping outbox.ErrInvalidField. Every published version is
//     accepted, each checked against its own schema, so a platform moves to a type's new
//     version at its own pace;
//   - data holding a property the catalog forbids anywhere (ForbiddenWords, R6): wrapping
//     outbox.ErrInvalidData, Field "data" and the property's JSON pointer;
//   - data that is not a JSON object or breaks the type's schema: wrapping
//     outbox.ErrInvalidData, with Field "data" followed by the JSON pointer of the offending
//     value ("data/amount/value"), and a Reason naming the rule and the schema keyword. When
//     several values are wrong, the first in pointer order is reported and the others counted.
//
// Messages are bounded: values are cut, never dumped whole.
func (c *Catalog) CheckEvent(ev outbox.Event) error {
	if err := checkAudience(ev); err != nil {
		return err
	}
	t, ok := c.types[ev.Type]
	if !ok {
		return &outbox.ValidationError{Field: "type", Err: outbox.ErrInvalidType,
			Reason: fmt.Sprintf("%s is not in the event catalog", quote(ev.Type))}
	}
	version := cmp.Or(ev.SchemaVersion, 1)
	schema, ok := t.schemas[version]
	if !ok {
		return &outbox.ValidationError{Field: "schema_version", Err: outbox.ErrInvalidField,
			Reason: fmt.Sprintf("%s is published at %s, got %d", ev.Type, versionList(t.versions), version)}
	}
	data := ev.Data
	if len(data) == 0 {
		data = []byte(`{}`) // outbox.Append's default
	}
	// UnmarshalJSON keeps numbers as json.Number: integers are judged on their exact digits and
	// large ones lose no precision on the way.
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &outbox.ValidationError{Field: "data", Reason: "not valid JSON", Err: outbox.ErrInvalidData}
	}
	if _, ok := doc.(map[string]any); !ok {
		return &outbox.ValidationError{Field: "data", Reason: "must be a JSON object", Err: outbox.ErrInvalidData}
	}
	// The schema first: a declared property with a wrong value is told by its own keyword.
	err = schema.Validate(doc)
	if err == nil {
		if ferr := checkForbidden(doc); ferr != nil {
			return ferr
		}
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return &outbox.ValidationError{Field: "data", Reason: cut(err.Error(), maxReason), Err: outbox.ErrInvalidData}
	}
	return dataError(ev.Type, version, verr)
}

// versionList says which versions a type is published at: "version 1", "versions 1 and 2".
func versionList(versions []int) string {
	if len(versions) == 1 {
		return "version " + strconv.Itoa(versions[0])
	}
	s := make([]string, len(versions))
	for i, v := range versions {
		s[i] = strconv.Itoa(v)
	}
	return "versions " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// dataError turns the validator's tree of errors into one short ValidationError.
func dataError(typ string, version int, root *jsonschema.ValidationError) *outbox.ValidationError {
	var leaves []*jsonschema.ValidationError
	var collect func(*jsonschema.ValidationError)
	collect = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			collect(c)
		}
	}
	collect(root)
	// The library reports in map order; sorting makes the message the same on every run.
	slices.SortFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return cmp.Or(
			cmp.Compare(pointer(a.InstanceLocation), pointer(b.InstanceLocation)),
			cmp.Compare(keyword(a), keyword(b)))
	})
	first := leaves[0]
	reason := fmt.Sprintf("%s (%s v%d, keyword %s)", describe(first.ErrorKind), typ, version, keyword(first))
	if n := len(leaves) - 1; n == 1 {
		reason += "; 1 more problem"
	} else if n > 1 {
		reason += fmt.Sprintf("; %d more problems", n)
	}
	return &outbox.ValidationError{Field: "data" + pointer(first.InstanceLocation), Reason: reason, Err: outbox.ErrInvalidData}
}

// messagePrinter renders the validator's messages, in English like every hookstream message.
var messagePrinter = message.NewPrinter(language.English)

// maxReason bounds what one rule's description may add to an error message.
const maxReason = 200

// describe says what went wrong. The kinds that echo the offending value echo it cut short.
func describe(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Pattern:
		return fmt.Sprintf("%s does not match %s", quote(k.Got), k.Want)
	case *kind.Format:
		got := "value"
		if s, ok := k.Got.(string); ok {
			got = quote(s)
		}
		return cut(fmt.Sprintf("%s is not a valid %s: %v", got, k.Want, k.Err), maxReason)
	}
	return cut(k.LocalizedString(messagePrinter), maxReason)
}

func keyword(e *jsonschema.ValidationError) string {
	return strings.Join(e.ErrorKind.KeywordPath(), "/")
}

// pointer renders an instance location as an RFC 6901 JSON pointer ("" for the whole value).
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(t))
	}
	return cut(b.String(), maxReason)
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// quote quotes s for a message, cut to a length a log line can carry, in single quotes as the
// validator's own messages ("missing property 'currency'") are.
func quote(s string) string {
	q := strconv.Quote(cut(s, 64))
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, "'", `\'`) + "'"
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return clip.Bytes(s, n) + clip.Mark
}
