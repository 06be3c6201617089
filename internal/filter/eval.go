package filter

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Document is a decoded envelope that filters are evaluated against; decode it once per event
// and match it against every endpoint's filter. Decode reads every number in it (JSON numbers
// and decimal strings) once, so a Match never parses: its cost is its filter's, whatever the
// numbers. A Document is read only, so safe for concurrent use.
type Document struct{ root any }

// The values of a decoded document beside those of encoding/json (objects, arrays, strings,
// booleans, null).
type (
	// number is a JSON number: its exact value, or none when it is beyond the bounds of a
	// number (ok false), then it equals and orders against no literal.
	number struct {
		d  decimal
		ok bool
	}
	// numericText is a string that reads as a decimal ("12.50", how money is written, R7): it
	// equals its string and its number.
	numericText struct {
		s string
		d decimal
	}
)

// Decode decodes an envelope (or any JSON object) for Match. Numbers are read exactly.
func Decode(envelope []byte) (Document, error) {
	dec := json.NewDecoder(bytes.NewReader(envelope))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return Document{}, err
	}
	if _, ok := root.(map[string]any); !ok {
		return Document{}, errors.New("filter: the envelope is not a JSON object")
	}
	return Document{root: prepare(root)}, nil
}

// prepare replaces the numbers and decimal strings of a decoded value by their exact values.
func prepare(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = prepare(e)
		}
	case []any:
		for i, e := range x {
			x[i] = prepare(e)
		}
	case json.Number:
		d, ok := parseDecimal(string(x), true)
		return number{d: d, ok: ok}
	case string:
		if d, ok := parseDecimal(x, false); ok {
			return numericText{s: x, d: d}
		}
	}
	return v
}

// Match reports whether the document satisfies the filter.
func (f *Filter) Match(d Document) bool { return f.root.eval(d.root) }

type node interface{ eval(root any) bool }

type (
	orNode     struct{ a, b node }
	andNode    struct{ a, b node }
	notNode    struct{ n node }
	existsNode struct{ p path }
	eqNode     struct {
		p   path
		lit literal
	}
	inNode struct {
		p   path
		set valueSet
	}
	cmpNode struct {
		path path
		op   string
		num  decimal
	}
)

func (n orNode) eval(r any) bool  { return n.a.eval(r) || n.b.eval(r) }
func (n andNode) eval(r any) bool { return n.a.eval(r) && n.b.eval(r) }
func (n notNode) eval(r any) bool { return !n.n.eval(r) }

func (n existsNode) eval(r any) bool {
	_, ok := n.p.find(r)
	return ok
}

func (n eqNode) eval(r any) bool {
	v, ok := n.p.find(r)
	return ok && n.lit.equals(v)
}

func (n inNode) eval(r any) bool {
	v, ok := n.p.find(r)
	return ok && n.set.has(v)
}

func (n cmpNode) eval(r any) bool {
	v, ok := n.path.find(r)
	if !ok {
		return false
	}
	x, ok := numberOf(v)
	if !ok {
		return false
	}
	c := x.cmp(n.num)
	switch n.op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

type segment struct {
	key     string
	index   int
	isIndex bool
}

type path []segment

// find walks the path from the envelope's root.
func (p path) find(v any) (any, bool) {
	for _, s := range p {
		switch x := v.(type) {
		case map[string]any:
			if s.isIndex {
				return nil, false
			}
			var ok bool
			if v, ok = x[s.key]; !ok {
				return nil, false
			}
		case []any:
			if !s.isIndex || s.index >= len(x) {
				return nil, false
			}
			v = x[s.index]
		default:
			return nil, false
		}
	}
	return v, true
}

type litKind int

const (
	litString litKind = iota
	litNumber
	litBool
	litNull
)

// literal is a value written in a filter, read once when the filter is parsed.
type literal struct {
	kind litKind
	str  string
	num  decimal
	b    bool
}

// equals applies the equality of the package documentation to a document value.
func (l literal) equals(v any) bool {
	switch l.kind {
	case litString:
		s, ok := textOf(v)
		return ok && s == l.str
	case litNumber:
		x, ok := numberOf(v)
		return ok && x == l.num
	case litBool:
		b, ok := v.(bool)
		return ok && b == l.b
	case litNull:
		return v == nil
	}
	return false
}

// valueSet is the literals of an in list, looked up in constant time whatever the length
// of the list: equality is the literals' own, and equal numbers have equal decimals.
type valueSet struct {
	strs          map[string]struct{}
	maxStr        int // the longest string: a longer value is not hashed at all
	nums          map[decimal]struct{}
	true_, false_ bool
	null          bool
}

func newValueSet(list []literal) valueSet {
	var s valueSet
	for _, l := range list {
		switch l.kind {
		case litString:
			if s.strs == nil {
				s.strs = map[string]struct{}{}
			}
			s.strs[l.str] = struct{}{}
			s.maxStr = max(s.maxStr, len(l.str))
		case litNumber:
			if s.nums == nil {
				s.nums = map[decimal]struct{}{}
			}
			s.nums[l.num] = struct{}{}
		case litBool:
			s.true_ = s.true_ || l.b
			s.false_ = s.false_ || !l.b
		case litNull:
			s.null = true
		}
	}
	return s
}

func (s valueSet) has(v any) bool {
	if str, ok := textOf(v); ok && len(str) <= s.maxStr {
		if _, ok := s.strs[str]; ok {
			return true
		}
	}
	if x, ok := numberOf(v); ok {
		if _, ok := s.nums[x]; ok {
			return true
		}
	}
	switch x := v.(type) {
	case bool:
		return (x && s.true_) || (!x && s.false_)
	case nil:
		return s.null
	}
	return false
}

// textOf is the string of a string value, decimal strings included.
func textOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case numericText:
		return x.s, true
	}
	return "", false
}

// numberOf is the exact value of a JSON number or a decimal string ("12.50", no exponent).
func numberOf(v any) (decimal, bool) {
	switch x := v.(type) {
	case number:
		return x.d, x.ok
	case numericText:
		return x.d, true
	}
	return decimal{}, false
}
