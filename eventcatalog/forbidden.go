package eventcatalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

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

// forbiddenName reports whether name holds a word of ForbiddenWords. Property names are nearly
// always ASCII, and for them the words are found in place, without allocating: this runs for
// every property of every event, in the writer and again in cdc. Other names take the general
// path, whose Unicode lowercasing can turn a non-ASCII letter into an ASCII one (the Kelvin sign
// becomes "k").
func forbiddenName(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return forbiddenNameUnicode(name)
		}
	}
	var buf [maxForbiddenWord]byte
	n := 0 // bytes of the current word in buf; n > len(buf) marks a word too long to be forbidden
	end := func() bool {
		hit := n <= len(buf) && slices.Contains(ForbiddenWords, string(buf[:n]))
		n = 0
		return hit
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			if end() {
				return true
			}
			continue
		case 'A' <= c && c <= 'Z':
			// A lower-to-upper change ("apiKey") starts a word, as wordBoundary does.
			if i > 0 && isLowerOrDigit(name[i-1]) && end() {
				return true
			}
			c += 'a' - 'A'
		}
		if n < len(buf) {
			buf[n] = c
		}
		n++
	}
	return end()
}

// maxForbiddenWord bounds the words compared with ForbiddenWords; longer words cannot be one.
const maxForbiddenWord = 32

func isLowerOrDigit(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// forbiddenNameUnicode is forbiddenName for any name: the rule as written in ForbiddenWords.
func forbiddenNameUnicode(name string) bool {
	name = strings.ToLower(wordBoundary.ReplaceAllString(name, "${1}_${2}"))
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
	for _, w := range words {
		if slices.Contains(ForbiddenWords, w) {
			return true
		}
	}
	return false
}

// holdsForbidden reports whether a decoded data document holds a forbidden property anywhere.
// It answers the common case, nothing forbidden, without building a pointer or sorting a name;
// checkForbidden then finds the first one in pointer order for the message.
func holdsForbidden(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for n, child := range v {
			if forbiddenName(n) {
				re, allowed := allowedNames[n]
				s, isString := child.(string)
				if !allowed || !isString || !re.MatchString(s) {
					return true
				}
			}
			if holdsForbidden(child) {
				return true
			}
		}
	case []any:
		for _, item := range v {
			if holdsForbidden(item) {
				return true
			}
		}
	}
	return false
}

// checkForbidden walks a decoded data document and refuses the first forbidden property in
// pointer order (R6).
func checkForbidden(doc any) *outbox.ValidationError {
	if !holdsForbidden(doc) {
		return nil
	}
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
							Reason: "the catalog forbids this field anywhere in data: events carry identifiers, never keys, credentials, prompts or evidence"}
						return
					}
					if !isString || !re.MatchString(s) {
						found = &outbox.ValidationError{Field: "data" + cut(here, maxReason), Err: outbox.ErrInvalidData,
							Reason: fmt.Sprintf("must be a string matching %s: anything else may be key material", re)}
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
