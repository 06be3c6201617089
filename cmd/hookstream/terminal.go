package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The CLI prints text a partner wrote (an endpoint's URL, description, filter, disable reason,
// the API's problem details that quote them) to an operator's terminal. Escape sequences in it
// would be obeyed (retitle the window, rewrite the screen, hide what follows) and bidi controls
// would reorder what is shown, so such text is printed with those characters escaped, as Go
// writes them in a quoted string: \x1b, \u202e.

// printable is s with every control character escaped: C0 (tab and line breaks too, so a value
// cannot add a line or a column to a table), DEL, C1, the Unicode bidi controls, and any byte
// that is not UTF-8.
func printable(s string) string { return escapeControls(s, false) }

// printableText is printable but keeps tabs and line breaks: for a whole text the CLI laid out
// itself (a table, an error message).
func printableText(s string) string { return escapeControls(s, true) }

func escapeControls(s string, keepLayout bool) string {
	if !needsEscape(s, keepLayout) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLayout && (r == '\t' || r == '\n'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isTerminalControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string, keepLayout bool) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return true
			}
		}
		if keepLayout && (r == '\t' || r == '\n') {
			continue
		}
		if r < 0x20 || r == 0x7f || isTerminalControl(r) {
			return true
		}
	}
	return false
}

// isTerminalControl: the C1 controls (0x9b is a one-character CSI to some terminals) and the
// bidi controls (embeddings, overrides, isolates, marks), which a terminal obeys or which reorder
// the text around them.
func isTerminalControl(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// printableJSON is a JSON text with the characters a JSON encoder may leave raw but a terminal
// obeys (DEL, C1, bidi controls) written as \u escapes: the same JSON to a parser, since such
// characters can only be inside strings. C0 controls are escaped by every encoder already.
func printableJSON(b []byte) []byte {
	s := string(b)
	if !needsJSONEscape(s) {
		return b
	}
	var out strings.Builder
	for _, r := range s {
		if r == 0x7f || isTerminalControl(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return []byte(out.String())
}

func needsJSONEscape(s string) bool {
	for _, r := range s {
		if r == 0x7f || isTerminalControl(r) {
			return true
		}
	}
	return false
}
