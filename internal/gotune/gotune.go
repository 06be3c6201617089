// Package gotune sets the Go runtime's garbage collector for hookstream's processes, where the
// environment leaves it to the program (design.md section 5, client settings; docs/operations.md,
// Sizing).
//
// The components keep small live heaps (2-9 MB at a steady 1,000 events/s) and allocate per
// record, so at Go's default GOGC of 100 each collected about three times a second, and the
// collector's background work was a tenth of their CPU; at 400 they used 0.87 of the CPU they
// did, the recorder 0.70 (docs/history/benchmarks.md, 2026-12-06). Apply raises the target to
// 400 unless GOGC is set, and, unless GOMEMLIMIT is set, bounds the heap to 90 % of the memory
// limit of the process's cgroup (a container's limit), so that the larger target collects early
// instead of running a pod out of memory when a backlog grows its live heap.
package gotune

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

const (
	// GCPercent is the collector's target when GOGC is not set.
	GCPercent = 400
	// limitShare is the share of the cgroup's memory limit given to the Go runtime when
	// GOMEMLIMIT is not set; the rest is for what the runtime does not count (stacks of
	// threads in C, the binary, the kernel's buffers charged to the cgroup).
	limitShare = 0.9
)

// cgroupMemoryFiles hold the memory limit of the process's cgroup: v2, then v1.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// Apply sets the collector's target and memory limit where the environment does not.
func Apply() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(GCPercent)
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		if limit, ok := cgroupLimit(cgroupMemoryFiles); ok {
			debug.SetMemoryLimit(int64(float64(limit) * limitShare))
		}
	}
}

// cgroupLimit reads the first of files that holds a memory limit. "max" (v2) and the
// near-2^63 value v1 uses for no limit are no limit.
func cgroupLimit(files []string) (int64, bool) {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
