package filter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of a filter (see the package documentation).
const (
	MaxLength   = 2048
	MaxDepth    = 16
	MaxList     = 64
	MaxSegments = 16
	// MaxExponent bounds a number literal: written d.ddd × 10^e, its e lies within
	// ±MaxExponent, so 1e100 and 1e-100 are numbers of a filter and 1e-400 is refused.
	MaxExponent = 100
	// MaxCost is the evaluation budget of a filter: each comparison (==, !=, the orderings,
	// in and not in, whatever the length of the list, and exists) costs 1 plus the segments
	// of its path, the map and array lookups it makes in every event. The simplest filter,
	// type == "x", costs 2, so no filter costs fanout more than about ten times it.
	MaxCost = 20
)

// Fields are the envelope fields a path may start with (R8).
var Fields = []string{"event_id", "type", "occurred_at", "partner_id", "subject", "schema_version", "correlation_id", "data"}

// SyntaxError is a filter that does not parse: Pos is the position of the fault, counted in
// characters from 1, and Msg says what was expected there.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("position %d: %s", e.Pos, e.Msg) }

// Filter is a parsed filter, safe for concurrent use.
type Filter struct {
	src  string
	root node
}

// String returns the filter as it was written.
func (f *Filter) String() string { return f.src }

// Parse parses a filter being registered. A filter that does not parse, or is beyond a limit
// (MaxExponent and MaxCost included), returns a *SyntaxError.
func Parse(src string) (*Filter, error) { return parse(src, false) }

// ParseStored parses a filter accepted at registration, perhaps by an earlier release whose
// limits were wider: it checks the grammar and the limits of the text (MaxLength, MaxDepth,
// MaxList, MaxSegments) but not MaxExponent and MaxCost, so an endpoint registered before they
// existed keeps its filter (its evaluation is cheap either way: numbers compare in time bounded
// by their length, in lists in constant time).
func ParseStored(src string) (*Filter, error) { return parse(src, true) }

func parse(src string, stored bool) (*Filter, error) {
	if !utf8.ValidString(src) {
		return nil, &SyntaxError{Pos: 1, Msg: "a filter must be UTF-8 text"}
	}
	if len(src) > MaxLength {
		return nil, &SyntaxError{Pos: utf8.RuneCountInString(src[:MaxLength]) + 1, Msg: fmt.Sprintf("a filter is at most %d bytes", MaxLength)}
	}
	p := &parser{src: src, stored: stored}
	p.next()
	if p.tok.kind == tokEOF {
		return nil, p.fail(p.tok, "a filter needs an expression, like data.amount.value > 10")
	}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if err := p.bad(); err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.fail(p.tok, `expected "and", "or" or the end of the filter, found `+p.tok.describe())
	}
	return &Filter{src: src, root: root}, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokName
	tokString
	tokNumber
	tokOp // == != < <= > >=
	tokLParen
	tokRParen
	tokLBracket
	tokRBracket
	tokDot
	tokComma
	tokBad
)

type token struct {
	kind tokKind
	text string // the source text of the token
	off  int    // byte offset in the source
	err  string // for tokBad: why
}

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end of the filter"
	case tokString:
		return "a string"
	case tokNumber:
		return "the number " + t.text
	}
	return strconv.Quote(t.text)
}

type parser struct {
	src    string
	stored bool // ParseStored: no MaxExponent and MaxCost
	off    int  // byte offset of the next unread byte
	tok    token
	cost   int // the cost of the comparisons read so far
}

// charge adds the cost of a comparison starting at token start with path p, refusing the
// filter there once it is over the budget.
func (p *parser) charge(start token, pth path) error {
	p.cost += 1 + len(pth)
	if p.stored || p.cost <= MaxCost {
		return nil
	}
	return p.fail(start, fmt.Sprintf("the filter costs more than %d to evaluate (each comparison costs 1 plus the segments of its path; "+
		"an in list costs the same whatever its length, so write x in [\"a\", \"b\"] rather than x == \"a\" or x == \"b\")", MaxCost))
}

func (p *parser) fail(t token, msg string) *SyntaxError {
	return &SyntaxError{Pos: utf8.RuneCountInString(p.src[:t.off]) + 1, Msg: msg}
}

// next reads the next token into p.tok.
func (p *parser) next() {
	s := p.src
	for p.off < len(s) && (s[p.off] == ' ' || s[p.off] == '\t' || s[p.off] == '\n' || s[p.off] == '\r') {
		p.off++
	}
	start := p.off
	if start == len(s) {
		p.tok = token{kind: tokEOF, off: start}
		return
	}
	c := s[start]
	one := func(k tokKind) {
		p.off++
		p.tok = token{kind: k, text: s[start:p.off], off: start}
	}
	switch {
	case c == '(':
		one(tokLParen)
	case c == ')':
		one(tokRParen)
	case c == '[':
		one(tokLBracket)
	case c == ']':
		one(tokRBracket)
	case c == '.':
		one(tokDot)
	case c == ',':
		one(tokComma)
	case c == '=' || c == '!' || c == '<' || c == '>':
		p.off++
		if p.off < len(s) && s[p.off] == '=' {
			p.off++
		}
		op := s[start:p.off]
		p.tok = token{kind: tokOp, text: op, off: start}
		if op == "=" || op == "!" {
			p.tok = token{kind: tokBad, text: op, off: start, err: `"` + op + `" is no operator; equality is == and inequality !=`}
		}
	case c == '&' || c == '|':
		p.off++
		if p.off < len(s) && s[p.off] == c {
			p.off++
		}
		p.tok = token{kind: tokBad, text: s[start:p.off], off: start, err: `write "and" and "or" for && and ||`}
	case c == '"':
		p.off++
		for p.off < len(s) && s[p.off] != '"' {
			if s[p.off] == '\\' {
				p.off++
			}
			p.off++
		}
		if p.off >= len(s) {
			p.off = len(s)
			p.tok = token{kind: tokBad, text: s[start:], off: start, err: "the string is not closed"}
			return
		}
		p.off++
		p.tok = token{kind: tokString, text: s[start:p.off], off: start}
	case c == '-' || (c >= '0' && c <= '9'):
		p.off++
		for p.off < len(s) && strings.IndexByte("0123456789.eE+-", s[p.off]) >= 0 {
			p.off++
		}
		p.tok = token{kind: tokNumber, text: s[start:p.off], off: start}
	case c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z'):
		for p.off < len(s) && isNameByte(s[p.off]) {
			p.off++
		}
		p.tok = token{kind: tokName, text: s[start:p.off], off: start}
	default:
		r, n := utf8.DecodeRuneInString(s[start:])
		p.off += n
		p.tok = token{kind: tokBad, text: string(r), off: start, err: fmt.Sprintf("unexpected character %q", r)}
	}
}

func isNameByte(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func (p *parser) bad() error {
	if p.tok.kind == tokBad {
		return p.fail(p.tok, p.tok.err)
	}
	return nil
}

func (p *parser) keyword(word string) bool { return p.tok.kind == tokName && p.tok.text == word }

func (p *parser) or(depth int) (node, error) {
	left, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("or") {
		p.next()
		right, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		left = orNode{left, right}
	}
	return left, nil
}

func (p *parser) and(depth int) (node, error) {
	left, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("and") {
		p.next()
		right, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		left = andNode{left, right}
	}
	return left, nil
}

func (p *parser) unary(depth int) (node, error) {
	if depth >= MaxDepth {
		return nil, p.fail(p.tok, fmt.Sprintf("nested more than %d deep", MaxDepth))
	}
	if p.keyword("not") {
		p.next()
		inner, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return notNode{inner}, nil
	}
	return p.primary(depth)
}

func (p *parser) expect(k tokKind, what string) error {
	if err := p.bad(); err != nil {
		return err
	}
	if p.tok.kind != k {
		return p.fail(p.tok, fmt.Sprintf("expected %s, found %s", what, p.tok.describe()))
	}
	p.next()
	return nil
}

func (p *parser) primary(depth int) (node, error) {
	if err := p.bad(); err != nil {
		return nil, err
	}
	switch {
	case p.tok.kind == tokLParen:
		p.next()
		inner, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.expect(tokRParen, `")"`); err != nil {
			return nil, err
		}
		return inner, nil
	case p.keyword("exists"):
		start := p.tok
		p.next()
		if err := p.expect(tokLParen, `"(" after exists`); err != nil {
			return nil, err
		}
		path, err := p.path()
		if err != nil {
			return nil, err
		}
		if err := p.expect(tokRParen, `")" after the path`); err != nil {
			return nil, err
		}
		if err := p.charge(start, path); err != nil {
			return nil, err
		}
		return existsNode{path}, nil
	case p.tok.kind != tokName:
		return nil, p.fail(p.tok, "expected a path like data.status, exists(…), not or (, found "+p.tok.describe())
	}
	start := p.tok
	path, err := p.path()
	if err != nil {
		return nil, err
	}
	if err := p.bad(); err != nil {
		return nil, err
	}
	if err := p.charge(start, path); err != nil {
		return nil, err
	}
	negate := false
	if p.keyword("not") {
		negate = true
		p.next()
		if !p.keyword("in") {
			return nil, p.fail(p.tok, `expected "in" after "not" (a path is followed by an operator)`)
		}
	}
	switch {
	case p.keyword("in"):
		p.next()
		list, err := p.list()
		if err != nil {
			return nil, err
		}
		var n node = inNode{path, newValueSet(list)}
		if negate {
			n = notNode{n}
		}
		return n, nil
	case p.tok.kind == tokOp:
		op := p.tok
		p.next()
		lit, litTok, err := p.literal()
		if err != nil {
			return nil, err
		}
		switch op.text {
		case "==":
			return eqNode{path, lit}, nil
		case "!=":
			return notNode{eqNode{path, lit}}, nil
		}
		if lit.kind != litNumber {
			return nil, p.fail(litTok, fmt.Sprintf("%s compares numbers; write a number here, found %s", op.text, litTok.describe()))
		}
		return cmpNode{path: path, op: op.text, num: lit.num}, nil
	}
	return nil, p.fail(p.tok, `expected an operator (==, !=, <, <=, >, >=, in, not in) after the path, found `+p.tok.describe())
}

// path reads field { "." name | "[" index "]" | "[" string "]" }.
func (p *parser) path() (path, error) {
	if err := p.bad(); err != nil {
		return nil, err
	}
	if p.tok.kind != tokName {
		return nil, p.fail(p.tok, "expected a path starting with an envelope field ("+strings.Join(Fields, ", ")+"), found "+p.tok.describe())
	}
	if !slices.Contains(Fields, p.tok.text) {
		return nil, p.fail(p.tok, fmt.Sprintf("%q is no envelope field; a path starts with one of %s", p.tok.text, strings.Join(Fields, ", ")))
	}
	out := path{{key: p.tok.text}}
	p.next()
	for {
		if (p.tok.kind == tokDot || p.tok.kind == tokLBracket) && len(out) == MaxSegments {
			return nil, p.fail(p.tok, fmt.Sprintf("a path has at most %d segments", MaxSegments))
		}
		switch p.tok.kind {
		case tokDot:
			dot := p.tok
			p.next()
			// A name right after the dot, with no space: "data. x" is a typo, not a path.
			if p.tok.kind != tokName || p.tok.off != dot.off+1 {
				return nil, p.fail(p.tok, "expected a field name after the dot, found "+p.tok.describe())
			}
			out = append(out, segment{key: p.tok.text})
			p.next()
		case tokLBracket:
			p.next()
			switch p.tok.kind {
			case tokNumber:
				i, err := strconv.Atoi(p.tok.text)
				if err != nil || i < 0 || strings.HasPrefix(p.tok.text, "-") || strings.HasPrefix(p.tok.text, "+") {
					return nil, p.fail(p.tok, "an array index is a whole number from 0")
				}
				out = append(out, segment{index: i, isIndex: true})
			case tokString:
				var k string
				if err := json.Unmarshal([]byte(p.tok.text), &k); err != nil {
					return nil, p.fail(p.tok, "the key is not a valid JSON string")
				}
				out = append(out, segment{key: k})
			default:
				if err := p.bad(); err != nil {
					return nil, err
				}
				return nil, p.fail(p.tok, `expected an array index or a quoted key inside [ ], found `+p.tok.describe())
			}
			p.next()
			if err := p.expect(tokRBracket, `"]"`); err != nil {
				return nil, err
			}
		default:
			return out, nil
		}
	}
}

func (p *parser) list() ([]literal, error) {
	if err := p.expect(tokLBracket, `"[" and a list of values after in`); err != nil {
		return nil, err
	}
	var out []literal
	for {
		if len(out) == MaxList {
			return nil, p.fail(p.tok, fmt.Sprintf("a list has at most %d values", MaxList))
		}
		lit, _, err := p.literal()
		if err != nil {
			return nil, err
		}
		out = append(out, lit)
		if p.tok.kind == tokComma {
			p.next()
			continue
		}
		if err := p.expect(tokRBracket, `"," or "]"`); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// literal reads string | number | true | false | null.
func (p *parser) literal() (literal, token, error) {
	t := p.tok
	if err := p.bad(); err != nil {
		return literal{}, t, err
	}
	var lit literal
	switch {
	case t.kind == tokString:
		var s string
		if err := json.Unmarshal([]byte(t.text), &s); err != nil {
			return lit, t, p.fail(t, "the string is not a valid JSON string (check its escapes)")
		}
		lit = literal{kind: litString, str: s}
	case t.kind == tokNumber:
		if !json.Valid([]byte(t.text)) {
			return lit, t, p.fail(t, fmt.Sprintf("%q is not a number", t.text))
		}
		n, ok := parseDecimal(t.text, true)
		if !ok || (!p.stored && (n.sciExponent() < -MaxExponent || n.sciExponent() > MaxExponent)) {
			return lit, t, p.fail(t, fmt.Sprintf("the number %s is out of range: a filter's numbers have at most %d characters "+
				"and, written d.ddd × 10^e, an exponent e within ±%d", clip(t.text), maxNumberText, MaxExponent))
		}
		lit = literal{kind: litNumber, num: n}
	case p.keyword("true"), p.keyword("false"):
		lit = literal{kind: litBool, b: t.text == "true"}
	case p.keyword("null"):
		lit = literal{kind: litNull}
	default:
		return lit, t, p.fail(t, `expected a value (a "string", a number, true, false or null), found `+t.describe())
	}
	p.next()
	return lit, t, nil
}

// clip shortens a long token for an error message.
func clip(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}
