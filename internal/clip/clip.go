// Package clip shortens strings to a byte budget without splitting a UTF-8 sequence: for the
// columns, log lines, messages and evidence that have a size limit. A cut string is valid UTF-8
// when the string was.
package clip

import "unicode/utf8"

// Mark is what Marked ends a cut string with.
const Mark = "…"

// Bytes returns s cut to at most n bytes at a rune boundary; s itself when it fits.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:boundary(s, n)]
}

// Marked returns s cut to at most n bytes, Mark included, at a rune boundary, so that a reader
// sees it was cut; s itself when it fits. With n below the mark's length it is the mark alone.
func Marked(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:boundary(s, max(n-len(Mark), 0))] + Mark
}

// boundary is the largest rune boundary of s at or below n (n < len(s)).
func boundary(s string, n int) int {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
