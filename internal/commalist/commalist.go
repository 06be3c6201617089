// Package commalist reads the comma-separated lists of hookstream's settings and of the programs
// that drive it (brokers, CIDRs, modes): "a, b,,c" is [a b c]. One reading for all, so a list
// that one command accepts is read the same way by another.
package commalist

import "strings"

// Split returns the items of v, blanks around them trimmed and empty ones dropped; nil when there
// are none.
func Split(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
