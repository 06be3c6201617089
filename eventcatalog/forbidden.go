package eventcatalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hookstream/hookstream/outbox"
)

// ForbiddenWords are the words that mark a property name as forbidden anywhere in an event's
// data (R6): a name is split into words at "_", "-", "." and lower-to-upper case changes, and a
// name holding one of these words is refused, at any depth, in objects and in arrays, whether
// the type's schema declares the property or not (schemas are open). Payloads carry identifiers
// and minimal state, never key material, credentials, prompts or abuse evidence.
//
// AllowedNames lists the exceptions and the shape their value must have.
var ForbiddenWords = []string{
	"key", "apikey", "secret", "secrets", "token", "password", "passwd", "passphrase",
	"credential", "credentials", "auth", "authorization", "bearer", "cookie", "session",
	"prompt", "prompts", "completion", "completions", "evidence", "privatekey",
}

// allowedNames are the properties of the catalog whose names hold a forbidden word, each with
// the value shape that makes it harmless.
var allowedNames = map[string]*regexp.Regexp{
	"api_key_id": regexp.MustCompile(`^key_[A-Za-z0-9]+$`), // the key's identifier, never the key
	"key_hint":   regexp.MustCompile(`^[A-Za-z0-9]{4}$`),   // the last 4 characters, for display
}

// AllowedNames returns the property names that hold a forbidden word and are allowed, each with
// the pattern its value must match.
func AllowedNames() map[string]string {
	out := make(map[string]string, len(allowedNames))
	for n, re := range allowedNames {
		out[n] = re.String()
	}
	return out
}

var wordBoundary = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// forbiddenName reports whether name holds a word of ForbiddenWords.
func forbiddenName(name string) bool {
	name = strings.ToLower(wordBoundary.ReplaceAllString(name, "${1}_${2}"))
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
	for _, w := range words {
		if slices.Contains(ForbiddenWords, w) {
			return true
		}
	}
	return false
}

// checkForbidden walks a decoded data document and refuses the first forbidden property in
// pointer order (R6).
func checkForbidden(doc any) *outbox.ValidationError {
	var found *outbox.ValidationError
	var walk func(at string, v any)
	walk = func(at string, v any) {
		if found != nil {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			names := make([]string, 0, len(v))
			for n := range v {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				here := at + "/" + pointerEscaper.Replace(n)
				if forbiddenName(n) {
					re, allowed := allowedNames[n]
					s, isString := v[n].(string)
					if !allowed {
						found = &outbox.ValidationError{Field: "data" + cut(here, maxReason), Err: outbox.ErrInvalidData,
							Reason: "the catalog forbids this field anywhere in data: events carry identifiers, never keys, credentials, prompts or evidence (R6)"}
						return
					}
					if !isString || !re.MatchString(s) {
						found = &outbox.ValidationError{Field: "data" + cut(here, maxReason), Err: outbox.ErrInvalidData,
							Reason: fmt.Sprintf("must be a string matching %s: anything else may be key material (R6)", re)}
						return
					}
				}
				walk(here, v[n])
			}
		case []any:
			for i, item := range v {
				walk(fmt.Sprintf("%s/%d", at, i), item)
			}
		}
	}
	walk("", doc)
	return found
}
