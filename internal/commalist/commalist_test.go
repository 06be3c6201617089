package commalist

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{"a", []string{"a"}},
		{" a , b,,c ", []string{"a", "b", "c"}},
		{"127.0.0.1:19092,127.0.0.1:19094", []string{"127.0.0.1:19092", "127.0.0.1:19094"}},
	} {
		if got := Split(c.in); !slices.Equal(got, c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("Split(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
