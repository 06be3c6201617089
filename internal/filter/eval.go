package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
)

// Document is a decoded envelope that filters are evaluated against; decode it once per event
// and match it against every endpoint's filter.
type Document struct{ root any }

// Decode decodes an envelope (or any JSON object) for Match. Numbers keep their exact text.
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
	return Document{root: root}, nil
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
		p    path
		list []literal
	}
	cmpNode struct {
		path path
		op   string
		num  *big.Rat
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
	if !ok {
		return false
	}
	for _, lit := range n.list {
		if lit.equals(v) {
			return true
		}
	}
	return false
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
	c := x.Cmp(n.num)
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

type literal struct {
	kind litKind
	str  string
	num  *big.Rat
	b    bool
}

// equals applies the equality of the package documentation to a decoded JSON value.
func (l literal) equals(v any) bool {
	switch l.kind {
	case litString:
		s, ok := v.(string)
		return ok && s == l.str
	case litNumber:
		x, ok := numberOf(v)
		return ok && x.Cmp(l.num) == 0
	case litBool:
		b, ok := v.(bool)
		return ok && b == l.b
	case litNull:
		return v == nil
	}
	return false
}

// numberOf reads a JSON number or a decimal string ("12.50", no exponent) exactly.
func numberOf(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseNumber(string(x))
	case string:
		if strings.ContainsAny(x, "eE") {
			return nil, false
		}
		return parseNumber(x)
	}
	return nil, false
}
