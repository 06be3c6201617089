package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// clockTicks is USER_HZ, the unit of the times in /proc/<pid>/stat: 100 on every Linux
// architecture Go supports (sysconf is out of reach without cgo).
const clockTicks = 100

// cpuUse is CPU time (user + system) by party. A party whose processes could not be found is
// negative, and reported as n/a.
type cpuUse struct {
	hookstream, broker, postgres, bench time.Duration
}

// cpuMeter finds the processes of each party once and reads their CPU time on demand.
type cpuMeter struct {
	hookstream []int // this environment's processes
	broker     []int // the Kafka broker's JVM
	postmaster int   // PostgreSQL's postmaster: its children are every postgres process
}

// newCPUMeter finds the broker (its pid file, else every JVM running kafka.Kafka) and the
// postmaster (the parent of a backend of pool; none when PostgreSQL runs elsewhere).
func newCPUMeter(ctx context.Context, hookstream []int, pool *pgxpool.Pool, kafkaPIDFile string) *cpuMeter {
	m := &cpuMeter{hookstream: hookstream, broker: findBroker(kafkaPIDFile)}
	var backend int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err == nil {
		if st, err := readStat(backend); err == nil {
			m.postmaster = st.ppid
		}
	}
	return m
}

// sample reads every party's CPU time now.
func (m *cpuMeter) sample() cpuUse {
	u := cpuUse{hookstream: sumCPU(m.hookstream), broker: sumCPU(m.broker), postgres: -1}
	if m.postmaster != 0 {
		u.postgres = postgresCPU(m.postmaster)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		u.bench = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return u
}

// minus is the CPU used between before and u.
func (u cpuUse) minus(before cpuUse) cpuUse {
	sub := func(a, b time.Duration) time.Duration {
		if a < 0 || b < 0 {
			return -1
		}
		return a - b
	}
	return cpuUse{sub(u.hookstream, before.hookstream), sub(u.broker, before.broker),
		sub(u.postgres, before.postgres), sub(u.bench, before.bench)}
}

// procStat is what the benchmark reads of /proc/<pid>/stat.
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime int64 // clock ticks
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may hold spaces and parentheses; fields follow the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	n := func(field int) int64 { v, _ := strconv.ParseInt(f[field-3], 10, 64); return v }
	return procStat{ppid: int(n(4)), utime: n(14), stime: n(15), cutime: n(16), cstime: n(17)}, nil
}

func ticks(t int64) time.Duration { return time.Duration(t) * time.Second / clockTicks }

// sumCPU is the user and system time of pids; -1 when there are none.
func sumCPU(pids []int) time.Duration {
	if len(pids) == 0 {
		return -1
	}
	var total time.Duration
	for _, pid := range pids {
		if st, err := readStat(pid); err == nil {
			total += ticks(st.utime + st.stime)
		}
	}
	return total
}

// postgresCPU is the CPU time of the postmaster, of its children that have exited (its cutime
// and cstime: backends of closed connections) and of its living children.
func postgresCPU(postmaster int) time.Duration {
	st, err := readStat(postmaster)
	if err != nil {
		return -1
	}
	total := ticks(st.utime + st.stime + st.cutime + st.cstime)
	for _, pid := range allPIDs() {
		if c, err := readStat(pid); err == nil && c.ppid == postmaster {
			total += ticks(c.utime + c.stime)
		}
	}
	return total
}

// findBroker returns the Kafka broker's pid from its pid file, or else every process whose
// command line runs kafka.Kafka.
func findBroker(pidFile string) []int {
	if b, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && isKafka(pid) {
			return []int{pid}
		}
	}
	var out []int
	for _, pid := range allPIDs() {
		if isKafka(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func isKafka(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(b, []byte("\x00kafka.Kafka\x00"))
}

// allPIDs lists the processes in /proc.
func allPIDs() []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, d := range dirs {
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
