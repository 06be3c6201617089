package clip_test

import (
	"testing"

	"github.com/hookstream/hookstream/internal/clip"
)

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		s      string
		n      int
		bytes  string
		marked string
	}{
		{"short", 10, "short", "short"},
		{"exactly", 7, "exactly", "exactly"},
		{"abcdefgh", 5, "abcde", "ab…"},
		{"héllo", 2, "h", "…"},     // é is two bytes: not split
		{"日本語テキスト", 7, "日本", "日…"}, // three-byte runes
		{"abc", 0, "", "…"},
	} {
		if got := clip.Bytes(tt.s, tt.n); got != tt.bytes {
			t.Errorf("Bytes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.bytes)
		}
		if got := clip.Marked(tt.s, tt.n); got != tt.marked {
			t.Errorf("Marked(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.marked)
		}
	}
}
