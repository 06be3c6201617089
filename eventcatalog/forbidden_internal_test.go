package eventcatalog

import "testing"

// The in-place word scan of ASCII names decides exactly as the rule written with a regular
// expression and Unicode lowercasing.
func FuzzForbiddenNameMatchesTheRule(f *testing.F) {
	for _, seed := range []string{"api_key", "apiKey", "APIKey", "providerSecret", "session-cookie",
		"monkey", "turnkey", "content_type", "a1B2C", "KEY", "x.token.y", "__", "", "Authorization",
		"prompt_text", "private_key", "privateKey", "privatekey", "\u212aey", "keyİ", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_key"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := forbiddenName(name), forbiddenNameUnicode(name); got != want {
			t.Fatalf("forbiddenName(%q) = %v, the rule says %v", name, got, want)
		}
	})
}

// holdsForbidden finds what checkForbidden reports, and nothing else.
func TestHoldsForbiddenAgreesWithCheckForbidden(t *testing.T) {
	t.Parallel()
	docs := []any{
		map[string]any{"customer_id": "cus_1", "cost": map[string]any{"value": "1"}},
		map[string]any{"meta": map[string]any{"providerSecret": "x"}},
		map[string]any{"calls": []any{map[string]any{"model": "m"}, map[string]any{"prompt_text": "x"}}},
		map[string]any{"related": map[string]any{"api_key_id": "key_9"}},
		map[string]any{"related": map[string]any{"api_key_id": "sk_live_1"}},
		map[string]any{"key_hint": 1234},
		[]any{1, "two", nil},
	}
	for _, d := range docs {
		if got, want := holdsForbidden(d), checkForbidden(d) != nil; got != want {
			t.Errorf("%v: holdsForbidden %v, checkForbidden refuses %v", d, got, want)
		}
	}
}
