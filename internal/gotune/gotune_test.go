package gotune

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestCgroupLimit(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name  string
		files []string
		want  int64
		ok    bool
	}{
		{"v2 limit", []string{write("v2", "1073741824\n")}, 1 << 30, true},
		{"v2 no limit", []string{write("v2max", "max\n"), write("v1a", "536870912\n")}, 0, false},
		{"v1 when v2 is absent", []string{missing, write("v1b", "536870912\n")}, 512 << 20, true},
		{"v1 no limit", []string{missing, write("v1c", "9223372036854771712\n")}, 0, false},
		{"unreadable value", []string{write("bad", "lots\n")}, 0, false},
		{"no cgroup", []string{missing}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := cgroupLimit(tc.files)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("cgroupLimit = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestApplyLeavesTheEnvironmentsChoice: GOGC and GOMEMLIMIT, when set, are the operator's.
func TestApplyLeavesTheEnvironmentsChoice(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	Apply()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GC percent = %d after Apply with GOGC set, want it unchanged (100)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("memory limit = %d after Apply with GOMEMLIMIT set, want it unchanged (%d)", got, int64(1<<40))
	}

	os.Unsetenv("GOGC")
	Apply()
	if got := debug.SetGCPercent(100); got != GCPercent {
		t.Fatalf("GC percent = %d after Apply without GOGC, want %d", got, GCPercent)
	}
}
